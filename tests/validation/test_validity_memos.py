"""The validity memos of validation (qualified names, request policies): a remembered "valid" never
hides an error, and an error is reported with its own path every time."""

from __future__ import annotations

from draguard.k8s import Path, memo_tables, parse_quantity
from draguard.k8s.models import CapacityRequestPolicy
from draguard.validation.names import validate_qualified_name
from draguard.validation.request_policy import validate_request_policy

from .builders import multi_device, rslice
from .support import check, lines

P = "spec.devices[0].capacity[memory].requestPolicy"


def _policy(raw: dict[str, object]) -> CapacityRequestPolicy:
    return CapacityRequestPolicy.model_validate(raw)


def test_the_memos_are_listed_and_bounded() -> None:
    tables = memo_tables()
    assert tables["valid qualified names"].limit == 4096
    assert tables["valid request policies"].limit == 4096


def test_a_valid_name_is_remembered_and_an_invalid_one_never() -> None:
    memo = memo_tables()["valid qualified names"]
    memo.clear()
    assert validate_qualified_name("gpu.example.com/model", Path.root("a")) == []
    assert len(memo) == 1
    for where in ("a", "b"):
        errs = validate_qualified_name("gpu.example.com/Not_An-Id", Path.root(where))
        assert errs and all(str(e).startswith(where) for e in errs)
    assert len(memo) == 1


def test_a_remembered_policy_stays_valid_and_an_invalid_one_errs_at_each_path() -> None:
    memo = memo_tables()["valid request policies"]
    memo.clear()
    good = _policy({"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}})
    assert validate_request_policy(parse_quantity("8Gi"), good, Path.root("x")) == []
    # the same values spelled otherwise: the same verdict, from the memo
    same = _policy({"default": "1024Mi", "validRange": {"min": "1073741824", "step": "1Gi"}})
    assert validate_request_policy(parse_quantity("8192Mi"), same, Path.root("y")) == []
    assert len(memo) == 1
    # a capacity below the range's minimum differs by one value: not the remembered verdict
    bad = [str(e) for e in validate_request_policy(parse_quantity("512Mi"), good, Path.root("z"))]
    assert bad[0] == "z.validRange.min: Invalid value: \"1Gi\": min is larger than capacity value: 512Mi"
    assert len(memo) == 1


def test_identical_devices_are_all_checked_when_their_policy_is_invalid() -> None:
    memory = {"value": "1Gi", "requestPolicy": {"default": "3Gi", "validValues": ["3Gi"]}}
    raw = rslice([multi_device({"memory": memory}, name=f"d{i}") for i in range(3)])
    got = lines(check(raw))
    assert [g.split(":")[0] for g in got] == [f"spec.devices[{i}].capacity[memory].requestPolicy.validValues[0]"
                                              for i in range(3)]
