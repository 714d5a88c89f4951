"""Port of kubernetes dynamic-resource-allocation/cel/compile_test.go (scalar-attribute cases).

Each row: expression, device, and either the expected compile error substring, the expected
runtime error substring, or the expected match — plus the expected cost estimate.
"""

from __future__ import annotations

from typing import Any

import pytest
from draguard.cel import CelRuntimeError, CompiledSelector, CompileFailure, compile_selector, make_device
from draguard.k8s.quantity import parse_quantity

D = "dra.example.com"

EXPENSIVE = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    ".all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8,"
    " 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""

# name: (expression, driver, attributes, capacity, allow_multi, expected, cost)
# expected: True/False, ("compile", substring) or ("runtime", substring)
CASES: dict[str, tuple[str, str, dict[str, Any], dict[str, str], bool, Any, int | None]] = {
    "true": ("true", "", {}, {}, False, True, 0),
    "false": ("false", "", {}, {}, False, False, 0),
    "syntax-error": ("?!", "", {}, {}, False, ("compile", "Syntax error"), None),
    "type-error": ("1", "", {}, {}, False, ("compile", "must evaluate to bool or the unknown type, not int"), None),
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', "", {}, {}, False,
        ("runtime", "no such key: noSuchAttr"), 6),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', "", {}, {}, False,
        ("runtime", "no such key: noSuchAttr"), 6),
    "domain-check-negative": ('"no-such-domain" in device.attributes', "", {}, {}, False, False, 3),
    "domain-check-positive": ('"dra.example.com" in device.attributes', "", {"dra.example.com/something": ("bool", True)},
                              {}, False, True, 3),
    "empty-driver-name": ('device.driver == ""', "", {}, {}, False, True, 2),
    "real-driver-name": ('device.driver == "dra.example.com"', D, {}, {}, False, True, 4),
    "driver-name-qualifier": ('device.attributes["dra.example.com"].name', D, {"name": ("bool", True)}, {}, False, True, 4),
    "driver-name-qualifier-map-lookup": ('device.attributes["dra.example.com"]["name"]', D, {"name": ("bool", True)}, {},
                                         False, True, 4),
    "bind": ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', D, {"name": ("bool", True)}, {}, False,
             True, 15),
    "qualified-attribute-name": ('device.attributes["other.example.com"].name', D,
                                 {"other.example.com/name": ("bool", True)}, {}, False, True, 4),
    "bool": ('device.attributes["dra.example.com"].name', D, {"name": ("bool", True)}, {}, False, True, 4),
    "int": ('device.attributes["dra.example.com"].name > 0', D, {"name": ("int", 1)}, {}, False, True, 5),
    "string": ('device.attributes["dra.example.com"].name == "fish"', D, {"name": ("string", "fish")}, {}, False, True, 5),
    "version": ('device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', D,
                {"name": ("version", "1.0.0")}, {}, False, True, 6),
    "version_v": ('device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && '
                  'isSemver("v1.0.0", true)', D, {"name": ("version", "1.0.0")}, {}, False, True, 7),
    "quantity": ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', D, {}, {"name": "1Mi"},
                 False, True, 6),
    "check-positive": ('"name" in device.capacity["dra.example.com"] && '
                       'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', D, {}, {"name": "1Mi"},
                       False, True, 10),
    "check-negative": ('!("name" in device.capacity["dra.example.com"]) || '
                       'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', "", {}, {}, False, True,
                       11),
    "all": (ALL, D, {"bool": ("bool", True), "int": ("int", 1), "string": ("string", "fish"),
                     "version": ("version", "1.0.0")}, {"quantity": "1Mi"}, False, True, 52),
    "many": ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
             'device.attributes["dra.example.com"].c', D, {"a": ("bool", True), "b": ("bool", True), "c": ("bool", True)},
             {}, False, True, 12),
    "check_attribute_domains": ('device.attributes.exists_one(x, x == "dra.example.com")', D,
                                {"services": ("string", "some_example_value")}, {}, False, True, 164),
    "check_attribute_ids": ('device.attributes["dra.example.com"].exists_one(x, x == "services")', D,
                            {"services": ("string", "some_example_value")}, {}, False, True, 133),
    "split_attribute": ('device.attributes["dra.example.com"].services.split("example").size() >= 2', D,
                        {"services": ("string", "some_example_value")}, {}, False, True, 19),
    "regexp_attribute": ('device.attributes["dra.example.com"].services.matches("[^a]?sym")', D,
                         {"services": ("string", "asymetric")}, {}, False, True, 18),
    "check_capacity_domains": ('device.capacity.exists_one(x, x == "dra.example.com")', D, {}, {"memory": "1Mi"}, False,
                               True, 164),
    "check_capacity_ids": ('device.capacity["dra.example.com"].exists_one(x, x == "memory")', D, {}, {"memory": "1Mi"},
                           False, True, 133),
    "macro-exists-on-int": ('device.attributes["dra.example.com"].name.exists(x, x > 0)', D, {"name": ("int", 1)}, {},
                            False, ("runtime", "got 'types.Int', expected iterable type"), None),
    "macro-exists-on-bool": ('device.attributes["dra.example.com"].name.exists(x, x == true)', D,
                             {"name": ("bool", True)}, {}, False, ("runtime", "got 'types.Bool', expected iterable type"),
                             None),
    "macro-exists-on-string": ('device.attributes["dra.example.com"].name.exists(x, x == "fish")', D,
                               {"name": ("string", "fish")}, {}, False,
                               ("runtime", "got 'types.String', expected iterable type"), None),
    "macro-exists-on-version": ('device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
                                D, {"name": ("version", "1.0.0")}, {}, False,
                                ("runtime", "got 'cel.Semver', expected iterable type"), None),
    "allow_multiple_allocations": ("device.allowMultipleAllocations == true", D, {}, {}, True, True, 3),
    "allow_multiple_allocations_default": ("device.allowMultipleAllocations == false", D, {}, {}, False, True, 3),
    "expensive": (EXPENSIVE, D, {f"dra.example.com/{'x' * (32 - len(f'-{i}'))}-{i}": ("string", "abc") for i in range(32)},
                  {}, False, ("runtime", "actual cost limit exceeded"), 85555551),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compile_test_go_case(name: str) -> None:
    expr, driver, attrs, caps, multi, expected, cost = CASES[name]
    device = make_device(driver, multi, attrs, {k: parse_quantity(v) for k, v in caps.items()})
    result = compile_selector(expr, enforce_cost_limit=False)
    if isinstance(expected, tuple) and expected[0] == "compile":
        assert isinstance(result, CompileFailure), result
        assert expected[1] in result.message
        return
    assert isinstance(result, CompiledSelector), result
    if cost is not None:
        assert result.max_cost == cost
    got = result.evaluate(device)
    if isinstance(expected, tuple):
        assert isinstance(got, CelRuntimeError), got
        assert expected[1] in got.message
    else:
        assert got is expected


def test_expensive_is_rejected_when_cost_is_enforced() -> None:
    result = compile_selector(EXPENSIVE)
    assert result == CompileFailure("cost", "too complex, exceeds cost limit")


def test_unknown_device_field_is_a_compile_error() -> None:
    result = compile_selector("device.noSuchField == false")
    assert isinstance(result, CompileFailure)
    assert "undefined field 'noSuchField'" in result.message
