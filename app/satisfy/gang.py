"""Gangs: pods scheduled all together or not at all, and claims made once for the whole group.

Why a gang changes the answer: kube-scheduler 1.37 (``GenericWorkload``) schedules the pods of a
PodGroup with a ``gang`` policy in one workload cycle — its ``GangScheduling`` plugin holds every
placed pod at Permit until ``minCount`` of them have a place, and lets none bind otherwise ("pod
group is unschedulable, minCount (8) cannot be satisfied: 6 scheduled").  "6 of 8 replicas fit" is
a warning for a Deployment; for a gang that needs 8 it is "never": no pod of it ever runs.  The
count is the replica engine's (:func:`~.replicas.count_replicas`: pods placed one after another as
the scheduler does, every device free) without the ``reservedFor`` cap, which acts only at PreBind,
after Permit has let the gang through.

A proof needs the whole group and an exact count: the group's pods all come from one pod template
(other members — a leader template, bare Pods — would be placed in an order the replay does not
model), and the count is exact.  Otherwise a count below ``minCount`` is a warning.

PodGroup claims (``DRAWorkloadResourceClaims``): a pod's claim entry equal in all three fields to
one of its PodGroup's ``resourceClaims`` names one claim for the whole group (a template is
instantiated once, by the claim controller, for the PodGroup) and is reserved for the PodGroup
(``resourceclaim.BindTo``): :func:`with_group_claims` makes it a shared claim of every replica —
allocated for the first pod, pinning the rest to its devices — and its one ``reservedFor`` entry
leaves the 256-consumer limit out of the count.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..k8s import Note, Path, Reason, Severity
from .check import SEARCH_DEADLINE
from .pod import PodRequest, ReplicaCount

__all__ = ["GangMember", "gang_notes", "with_group_claims"]


@dataclass(frozen=True, slots=True)
class GangMember:
    """One pod template of a gang: how many pods it makes and how many of them could run.

    ``count`` is None for pods DRA asks nothing of (as far as draguard knows, all of them place)."""

    label: str
    replicas: int
    count: ReplicaCount | None = None


def with_group_claims(request: PodRequest, names: Collection[str]) -> PodRequest:
    """``request`` with the pod claims in ``names`` (those its PodGroup lists) made one claim of
    the whole group: shared by every replica, allocated once."""
    if not names:
        return request
    claims = tuple(dataclasses.replace(c, shared=True) if c.name in names and not c.shared else c
                   for c in request.claims)
    return dataclasses.replace(request, claims=claims)


def _pods(n: int) -> str:
    return "1 pod" if n == 1 else f"{n} pods"


def gang_notes(group: str, min_count: int, members: Sequence[GangMember], *, path: Path | None = None,
               whole: bool = True, closed: bool = False) -> list[Note]:
    """What a gang of ``min_count`` made of ``members`` says: nothing when ``min_count`` of its pods
    could be placed together; ``Unsatisfiable`` (an error) when they provably cannot; a warning when
    the count is only a bound or the group may have other pods.

    ``group`` names the gang in messages (``PodGroup "train"``); ``whole``: ``members`` are every
    pod of the group (False when pods the run does not show are known to join it).  ``closed``: no
    pod can ever join (draguard's annotation: the workload's own pods are the gang) — then a gang
    that needs more pods than its members make never starts; a PodGroup's pods wait instead until
    enough pods name it (the scheduler's PreEnqueue: "waiting for minCount pods from a gang")."""
    total = sum(m.replicas for m in members)
    counted = [m.count for m in members if m.count is not None]
    if any(n.fail_open for c in counted for n in c.notes):
        return [Note(Reason.SATISFIABILITY_UNKNOWN, f"{group}: the gang's pods were not counted (the search was cut "
                     "short), so whether it ever starts is not known", path, Severity.WARNING,
                     fail_open=SEARCH_DEADLINE)]
    fit = sum(m.count.fit if m.count is not None else m.replicas for m in members)
    details = {"minCount": min_count, "replicas": total, "fit": fit}
    exact = whole and len(members) == 1 and all(c.exact for c in counted)
    if total < min_count and not closed:
        return [Note(Reason.SATISFIABILITY_UNKNOWN,
                     f"{group} needs {min_count} pods placed together and the linted workloads make {total}: its pods "
                     f"wait until {min_count} pods of the group exist", path, Severity.WARNING,
                     details={**details, "exact": exact})]
    if fit >= min_count:
        return []
    how = ("placed one after another as the scheduler does, with every device free, and a gang's pods run all "
           "together or not at all")
    if exact or (closed and total < min_count):
        return [Note(Reason.UNSATISFIABLE,
                     f"{group} never starts: {fit} of {total} could, the gang needs {min_count} ({how})", path,
                     Severity.ERROR, brief=f"gang never starts: {fit} of {total} could, the gang needs {min_count}",
                     details={**details, "exact": True})]
    why = ("its pods come from several templates, placed in an order draguard does not replay" if len(members) > 1
           else "pods the linted files do not show may join the group" if not whole
           else "the count is an upper bound")
    return [Note(Reason.SATISFIABILITY_UNKNOWN,
                 f"{group} may never start: at most {fit} of {total} could, the gang needs {min_count} ({how}; not "
                 f"proved: {why})", path, Severity.WARNING, details={**details, "exact": False})]
