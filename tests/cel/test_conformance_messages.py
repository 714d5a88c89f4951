"""CEL verdicts and messages of the Kubernetes 1.36 conformance sample, read from the sample itself.

Every selector of ``cases/validation/cel.yaml`` is compiled and compared with what the 1.36.2 API
server answered for it (``expected/cases/validation/cel.jsonl``): the same failure kind and the
same text — cel-go's caret display included — or, where Kubernetes accepted the object, a
compiled selector; the one runtime failure is compared with the allocator's message.  Nothing is
copied by hand, so a re-generated sample re-checks draguard.  The tests at the end pin
semantics around the limits (just under, just over) that the sample only shows from one side.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cel import CompiledSelector, CompileFailure, compile_selector, make_device

CORPUS = Path(__file__).resolve().parents[1] / "data" / "conformance"  # the repository's copy of the sample
EXPECTED = CORPUS / "expected" / "cases" / "validation" / "cel.jsonl"
FAILURE_KIND = {"FieldValueInvalid": "invalid", "FieldValueForbidden": "cost", "FieldValueTooLong": "too_long"}
RUNTIME = "CEL runtime error: "


def _expressions(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(field path as Kubernetes prints it, expression) of every CEL selector in a document."""
    if isinstance(node, dict):
        for key, value in node.items():
            child = f"{path}.{key}" if path else str(key)
            if key == "cel" and isinstance(value, dict) and isinstance(value.get("expression"), str):
                yield f"{child}.expression", value["expression"]
            else:
                yield from _expressions(value, child)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _expressions(value, f"{path}[{i}]")


def _records() -> list[dict[str, Any]]:
    if not EXPECTED.is_file():
        return []
    return [json.loads(line) for line in EXPECTED.read_text().splitlines() if line.strip()]


def _document(source: str) -> Any:
    file, _, index = source.partition("#")
    return list(yaml.safe_load_all((CORPUS / file).read_text()))[int(index)]


def _cases() -> list[Any]:
    out = []
    for record in _records():
        errors = {d["field"]: d for d in record.get("validationErrorDetails") or []}
        for field, expression in _expressions(_document(record["source"])):
            detail = errors.get(field)
            expected = None if detail is None else CompileFailure(FAILURE_KIND[detail["type"]], detail["detail"])
            out.append(pytest.param(expression, expected, id=f"{record['name']}:{field.rsplit('.', 3)[-3]}"))
    return out


needs_sample = pytest.mark.skipif(not EXPECTED.is_file(), reason="conformance sample not present")


@needs_sample
@pytest.mark.parametrize(("expression", "expected"), _cases())
def test_compile_verdict_and_message_match_kubernetes(expression: str, expected: CompileFailure | None) -> None:
    result = compile_selector(expression)
    if expected is None:
        assert isinstance(result, CompiledSelector), result
    else:
        assert result == expected


@needs_sample
def test_runtime_message_matches_the_allocators() -> None:
    runtime = [r for r in _records() if not r.get("validationErrors") and RUNTIME in (r.get("allocationError") or "")]
    assert runtime, "the sample has a valid selector that fails at run time"
    for record in runtime:
        ((_, expression),) = _expressions(_document(record["source"]))
        sel = compile_selector(expression)
        assert isinstance(sel, CompiledSelector)
        r = sel.evaluate(make_device("gpu.example.com", False, {"model": ("string", "a100")}, {}))
        assert not isinstance(r, bool)
        assert r.message == record["allocationError"].split(RUNTIME, 1)[1]


# --------------------------------------------------------------------------- around the limits
def test_just_under_the_length_limit_compiles() -> None:
    assert isinstance(compile_selector('device.driver == "' + "x" * (10240 - 19) + '"'), CompiledSelector)


def test_one_level_less_nesting_stays_under_the_cost_limit() -> None:
    nested = ('[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, [1,2,3,4,5,6,7,8,9,10].all(z, '
              '[1,2,3,4,5,6,7,8,9,10].all(w, [1,2,3,4,5,6,7,8,9,10].all(v, int(device.attributes["gpu.example.com"].index)'
              ' < x*y*z*w*v)))))')
    regex = ('device.attributes["gpu.example.com"].all(k, device.attributes["gpu.example.com"].all(k2, '
             'device.attributes["gpu.example.com"].all(k3, k3.matches(k) && k2.matches(k3))))')
    for e in (nested, regex):
        result = compile_selector(e)
        assert isinstance(result, CompileFailure) and result.kind == "cost"
    # Four levels of the same nesting stay under the limit.
    four = nested.replace("[1,2,3,4,5,6,7,8,9,10].all(v, ", "(").replace("*v", "")
    assert isinstance(compile_selector(four), CompiledSelector)


def test_nested_comprehension_hits_runtime_limit_when_not_estimated() -> None:
    nested = ('[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, [1,2,3,4,5,6,7,8,9,10].all(z, '
              '[1,2,3,4,5,6,7,8,9,10].all(w, [1,2,3,4,5,6,7,8,9,10].all(v, int(device.attributes["gpu.example.com"].index)'
              ' < x*y*z*w*v)))))')
    sel = compile_selector(nested, enforce_cost_limit=False)
    assert isinstance(sel, CompiledSelector)
    dev = make_device("gpu.example.com", False, {"index": ("int", 0)}, {})
    r = sel.evaluate(dev)
    assert not isinstance(r, bool) and r.message == "operation cancelled: actual cost limit exceeded"
