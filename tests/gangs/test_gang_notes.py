"""The gang rule on counts: ``minCount`` pods placed together or none (kube-scheduler's GangScheduling
plugin: Permit holds every placed pod until ``minCount`` have a place), and PodGroup claims made once."""

from __future__ import annotations

from draguard.k8s import Note, Path, Reason, ResourceClaimSpec, Severity
from draguard.satisfy import GangMember, PodClaim, PodRequest, ReplicaCount, gang_notes, with_group_claims

GROUP = 'PodGroup "train"'


def member(fit: int, replicas: int, exact: bool = True) -> GangMember:
    return GangMember("spec.template.spec", replicas, ReplicaCount(fit, exact))


def test_a_gang_of_eight_with_six_placeable_never_starts() -> None:
    (note,) = gang_notes(GROUP, 8, [member(6, 8)])
    assert (note.reason, note.severity) == (Reason.UNSATISFIABLE, Severity.ERROR)
    assert "6 of 8 could, the gang needs 8" in note.message and note.message.startswith(GROUP)
    assert note.brief == "gang never starts: 6 of 8 could, the gang needs 8"
    assert note.details == {"minCount": 8, "replicas": 8, "fit": 6, "exact": True}


def test_the_same_gang_needing_six_starts() -> None:
    assert gang_notes(GROUP, 6, [member(6, 8)]) == []
    assert gang_notes(GROUP, 8, [member(8, 8)]) == []


def test_an_upper_bound_below_min_count_is_a_warning_not_a_proof() -> None:
    (note,) = gang_notes(GROUP, 8, [member(6, 8, exact=False)])
    assert (note.reason, note.severity) == (Reason.SATISFIABILITY_UNKNOWN, Severity.WARNING)
    assert "at most 6 of 8 could, the gang needs 8" in note.message


def test_several_templates_in_one_group_are_not_a_proof() -> None:
    (note,) = gang_notes(GROUP, 10, [member(6, 8), GangMember('Pod "leader"', 1)])
    assert note.severity is Severity.WARNING and "7 of 9 could, the gang needs 10" not in note.message
    # 9 pods, the gang needs 10: the PodGroup's pods wait for more pods to join it
    assert "needs 10 pods placed together and the linted workloads make 9" in note.message


def test_pods_without_dra_count_as_placed() -> None:
    assert gang_notes(GROUP, 8, [member(6, 6), GangMember('Pod "a"', 1), GangMember('Pod "b"', 1)]) == []
    (note,) = gang_notes(GROUP, 8, [member(5, 6), GangMember('Pod "a"', 2)])
    assert note.severity is Severity.WARNING and "at most 7 of 8 could, the gang needs 8" in note.message


def test_a_group_that_may_grow_is_never_a_proof() -> None:
    (note,) = gang_notes(GROUP, 8, [member(6, 8)], whole=False)
    assert note.severity is Severity.WARNING and "may join the group" in note.message


def test_a_closed_gang_with_fewer_pods_than_it_needs_never_starts() -> None:
    (note,) = gang_notes("the gang", 8, [member(4, 4)], closed=True)
    assert note.severity is Severity.ERROR and "4 of 4 could, the gang needs 8" in note.message
    # a PodGroup's pods only wait for more pods to name it
    (open_note,) = gang_notes(GROUP, 8, [member(4, 4)])
    assert open_note.severity is Severity.WARNING


def test_a_count_cut_short_decides_nothing() -> None:
    cut = ReplicaCount(3, False, [Note(Reason.SATISFIABILITY_UNKNOWN, "cut", None, Severity.WARNING, fail_open="deadline")])
    (note,) = gang_notes(GROUP, 8, [GangMember("t", 8, cut)])
    assert note.severity is Severity.WARNING and note.fail_open


SPEC = ResourceClaimSpec.model_validate({"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}})


def test_group_claims_become_one_claim_of_the_whole_group() -> None:
    claims = (PodClaim("gpu", SPEC, 'template "t"', Path.root("spec")), PodClaim("nic", SPEC, 'template "n"', Path.root("spec")))
    request = PodRequest(claims)
    grouped = with_group_claims(request, frozenset({"gpu"}))
    assert [c.shared for c in grouped.claims] == [True, False]
    assert with_group_claims(request, frozenset()) is request
