"""List-typed device attributes (KEP-5491, DRAListTypeAttributes) in draguard's CEL.

Semantics from Kubernetes' ``dynamic-resource-allocation/cel/compile_test.go`` (1.37.2, the
list-typed cases) and ``compile.go``: a list attribute is a CEL list (of ints, bools, strings or
semvers); with the gate an attribute value is ``dyn`` (macros work on it) and ``includes`` is
declared, which also matches a scalar equal to its argument; without the gate a new expression
sees the value as ``any`` (no comprehension over it, no ``includes``).  The scheduler compiles
stored expressions in the newest environment, which is ``compile_selector``'s default.  Every test
runs on both engines (``conftest.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from draguard.cel import CelRuntimeError, CompiledSelector, CompileFailure, compile_selector, make_device
from draguard.cel.device import device_error
from draguard.k8s.quantity import parse_quantity

from .test_k8s_compile_cases import CASES as SCALAR_CASES

D = "dra.example.com"
A = f'device.attributes["{D}"]'
ELEMENTS = 64  # max(DeviceAttributeMaxValueLength 64, ResourceSliceMaxAttributeValuesPerDevice 48)
INCLUDES = 4 + ELEMENTS  # "cost of includes on dynamic type"

# name: (expression, attributes, expected, cost); expected True/False or ("runtime", substring); the
# cost is upstream's expectation where compile_test.go has the case (None: a case of draguard's own)
CASES: dict[str, tuple[str, dict[str, Any], Any, int | None]] = {
    # list-of-*: .size() works on every element type
    "list-of-bool": (f"{A}.names.size() == 2", {"names": ("bools", [True, False])}, True, 6),
    "list-of-int": (f"{A}.names.size() == 2", {"names": ("ints", [1, 2])}, True, 6),
    "list-of-string": (f"{A}.names.size() == 2", {"names": ("strings", ["fish", "bird"])}, True, 6),
    "list-of-semver": (f"{A}.names.size() == 2", {"names": ("versions", ["1.0.0", "2.0.0"])}, True, 6),
    "list-size-mismatch": (f"{A}.names.size() == 3", {"names": ("ints", [1, 2])}, False, None),
    # macros on lists
    "macro-on-list-of-int": (f"{A}.names.exists(x, x > 0)", {"names": ("ints", [1, 2])}, True, 5 + 6 * ELEMENTS),
    "macro-on-list-of-int-none": (f"{A}.names.exists(x, x > 5)", {"names": ("ints", [1, 2])}, False, None),
    "macro-on-list-of-string": (f'{A}.names.all(x, x != "")', {"names": ("strings", ["fish", "bird"])}, True,
                                5 + 4 * ELEMENTS),
    "macro-on-list-of-semver": (f'{A}.names.all(x, x.isGreaterThan(semver("0.0.1")))',
                                {"names": ("versions", ["1.0.0", "2.0.0"])}, True, 5 + 6 * ELEMENTS),
    "macro-on-list-of-semver-not-all": (f'{A}.names.all(x, x.isGreaterThan(semver("1.5.0")))',
                                        {"names": ("versions", ["1.0.0", "2.0.0"])}, False, None),
    # macros on scalars: a runtime error (the selector then fails on that device)
    "macro-exists-on-int": (f"{A}.name.exists(x, x > 0)", {"name": ("int", 1)},
                            ("runtime", "got 'types.Int', expected iterable type"), 5 + 6 * ELEMENTS),
    "macro-exists-on-version": (f'{A}.name.exists(x, x.isGreaterThan(semver("0.0.1")))', {"name": ("version", "1.0.0")},
                                ("runtime", "got 'cel.Semver', expected iterable type"), 5 + 7 * ELEMENTS),
    # a list is not a bool
    "list-result-type-causes-match-error": (f"{A}.names", {"names": ("strings", ["fish", "bird"])},
                                            ("runtime", "CEL result of type list could not be converted to bool"), 4),
    # includes: on lists and on scalars
    "includes-string-list-positive": (f'{A}.name.includes("fish")', {"name": ("strings", ["fish", "bird"])}, True,
                                      INCLUDES),
    "includes-string-list-negative": (f'{A}.name.includes("cat")', {"name": ("strings", ["fish", "bird"])}, False,
                                      INCLUDES),
    "includes-string-scalar-positive": (f'{A}.name.includes("fish")', {"name": ("string", "fish")}, True, INCLUDES),
    "includes-string-scalar-negative": (f'{A}.name.includes("bird")', {"name": ("string", "fish")}, False, INCLUDES),
    "includes-int-list-positive": (f"{A}.name.includes(1)", {"name": ("ints", [1, 2])}, True, INCLUDES),
    "includes-int-list-negative": (f"{A}.name.includes(3)", {"name": ("ints", [1, 2])}, False, INCLUDES),
    "includes-int-scalar-positive": (f"{A}.name.includes(1)", {"name": ("int", 1)}, True, INCLUDES),
    "includes-int-scalar-negative": (f"{A}.name.includes(1)", {"name": ("int", 2)}, False, INCLUDES),
    "includes-bool-list-positive": (f"{A}.name.includes(true)", {"name": ("bools", [True, False])}, True, INCLUDES),
    "includes-bool-list-negative": (f"{A}.name.includes(false)", {"name": ("bools", [True, True])}, False, INCLUDES),
    "includes-bool-scalar-negative": (f"{A}.name.includes(true)", {"name": ("bool", False)}, False, INCLUDES),
    "includes-semver-list-positive": (f'{A}.name.includes(semver("1.0.0"))',
                                      {"name": ("versions", ["1.0.0", "2.0.0"])}, True, INCLUDES + 1),
    "includes-semver-list-negative": (f'{A}.name.includes(semver("3.0.0"))',
                                      {"name": ("versions", ["1.0.0", "2.0.0"])}, False, INCLUDES + 1),
    "includes-semver-scalar-positive": (f'{A}.name.includes(semver("1.0.0"))', {"name": ("version", "1.0.0")}, True,
                                        INCLUDES + 1),
    "includes-other-type-is-false": (f'{A}.name.includes("1")', {"name": ("ints", [1, 2])}, False, None),
    "includes-very-long-list": (f'{A}.name.includes("value-48")',
                                {"name": ("strings", [f"value-{i}" for i in range(48)])}, False, INCLUDES),
    # the `in` operator costs like includes (cel-go takes the costliest of in_list / in_map)
    "in-operator-on-list": (f"1 in {A}.names", {"names": ("ints", [1, 2, 3])}, True, INCLUDES),
    "in-operator-on-list-negative": (f"4 in {A}.names", {"names": ("ints", [1, 2, 3])}, False, None),
    # lists compare, index and bind like any CEL list
    "list-equality": (f'{A}.names == ["fish", "bird"]', {"names": ("strings", ["fish", "bird"])}, True, None),
    "list-equality-order-matters": (f'{A}.names == ["bird", "fish"]', {"names": ("strings", ["fish", "bird"])}, False,
                                    None),
    "list-is-not-its-element": (f'{A}.names == "fish"', {"names": ("strings", ["fish"])}, False, None),
    "list-index": (f"{A}.names[1] == 2", {"names": ("ints", [1, 2])}, True, None),
    "list-index-out-of-bounds": (f"{A}.names[2] == 2", {"names": ("ints", [1, 2])},
                                 ("runtime", "index out of bounds: 2"), None),
    "list-bind": (f"cel.bind(l, {A}.names, l.exists(x, x == 2))", {"names": ("ints", [1, 2])}, True, None),
    "list-semver-element": (f"{A}.names[1].major() == 2", {"names": ("versions", ["1.0.0", "2.1.0"])}, True, None),
}


def _device(attrs: dict[str, Any]) -> Any:
    return make_device(D, False, attrs, {})


@pytest.mark.parametrize("name", sorted(CASES))
def test_list_attribute_case(name: str) -> None:
    expr, attrs, expected, cost = CASES[name]
    result = compile_selector(expr, enforce_cost_limit=False)
    assert isinstance(result, CompiledSelector), result
    if cost is not None:
        assert result.max_cost == cost
    got = result.evaluate(_device(attrs))
    if isinstance(expected, tuple):
        assert isinstance(got, CelRuntimeError), got
        assert expected[1] in got.message
    else:
        assert got is expected


# ---------------------------------------------------------------------------- the gate
def test_without_the_gate_a_macro_on_an_attribute_does_not_compile() -> None:
    """compile_test.go "macro-compilation-error-new-expressions": the value is ``any`` there."""
    result = compile_selector(f"{A}.ids.exists(id, id == 1)", list_type_attributes=False)
    assert isinstance(result, CompileFailure) and result.kind == "invalid"
    assert "expression of type 'any' cannot be range of a comprehension" in result.message
    assert isinstance(compile_selector(f"{A}.ids.exists(id, id == 1)"), CompiledSelector)


def test_without_the_gate_includes_is_undeclared() -> None:
    """compile_test.go "includes-function-compilation-error" (1.36/1.37: the gate declares it)."""
    result = compile_selector(f'{A}.attr.includes("fish")', list_type_attributes=False)
    assert isinstance(result, CompileFailure) and result.kind == "invalid"
    assert "undeclared reference to 'includes'" in result.message
    assert isinstance(compile_selector(f'{A}.attr.includes("fish")'), CompiledSelector)


def test_includes_without_the_gate_where_the_base_environment_has_it() -> None:
    """1.38's API server checks new expressions in the 1.37 environment, whose lists library has it."""
    result = compile_selector(f'{A}.attr.includes("fish")', list_type_attributes=False, includes=True)
    assert isinstance(result, CompiledSelector)
    assert result.evaluate(_device({"attr": ("string", "fish")})) is True


@pytest.mark.parametrize("expr", [
    f"{A}.names.size() == 2",  # upstream: every feature combination
    f"1 in {A}.names",
    f"{A}.names",  # an attribute alone is "the unknown type" either way
    f'cel.bind(dra, {A}, dra.names.size() > 0 && "x" in dra)',
    f"{A}.names[0] == 1",
    f"dyn({A}.names).exists(x, x == 1)",  # dyn, not any: a macro is fine
])
def test_without_the_gate_other_uses_still_compile(expr: str) -> None:
    assert isinstance(compile_selector(expr, list_type_attributes=False), CompiledSelector)


def test_without_the_gate_type_errors_name_the_any_type() -> None:
    result = compile_selector(f'{A}.x.all(k, v, v == 1)', list_type_attributes=False)
    assert isinstance(result, CompileFailure)
    assert "expression of type 'any'" in result.message


@pytest.mark.parametrize("name", sorted(SCALAR_CASES))
def test_scalar_cases_do_not_change_without_the_gate(name: str) -> None:
    """The whole scalar table of compile_test.go answers alike in the environment without the gate
    — except macros over an attribute value, which that environment refuses to compile."""
    expr, driver, attrs, caps, multi, _, _ = SCALAR_CASES[name]
    device = make_device(driver, multi, attrs, {k: parse_quantity(v) for k, v in caps.items()})
    with_gate = compile_selector(expr, enforce_cost_limit=False)
    without = compile_selector(expr, enforce_cost_limit=False, list_type_attributes=False)
    if name.startswith("macro-exists-on-"):
        assert isinstance(without, CompileFailure) and "cannot be range of a comprehension" in without.message
        return
    assert type(without) is type(with_gate)
    if isinstance(with_gate, CompiledSelector):
        assert isinstance(without, CompiledSelector)
        assert without.max_cost == with_gate.max_cost
        assert without.evaluate(device) == with_gate.evaluate(device)
    else:
        assert without == with_gate


# ---------------------------------------------------------------------------- devices
def test_a_bad_version_in_a_list_fails_every_selector_on_the_device() -> None:
    attrs = {"vs": ("versions", ["1.0.0", "01.0.0"]), "ok": ("bool", True)}
    device = _device(attrs)
    assert device.error is not None and device.error.startswith("attribute vs: ")
    assert device_error(attrs) == device.error
    result = compile_selector(f"{A}.ok")
    assert isinstance(result, CompiledSelector)
    assert isinstance(result.evaluate(device), CelRuntimeError)


def test_good_version_lists_are_no_device_error() -> None:
    attrs = {"vs": ("versions", ["1.0.0", "2.0.0-rc.1+build"])}
    assert device_error(attrs) is None
    assert _device(attrs).error is None


def test_devices_with_different_lists_do_not_share_cached_results() -> None:
    """Results are cached per projected value: a list must key by its elements and order."""
    result = compile_selector(f"{A}.names[0] == 1")
    assert isinstance(result, CompiledSelector)
    assert result.evaluate(_device({"names": ("ints", [1, 2])})) is True
    assert result.evaluate(_device({"names": ("ints", [2, 1])})) is False
    assert result.evaluate(_device({"names": ("ints", (1, 2))})) is True


def test_an_int_list_is_not_a_bool_list() -> None:
    result = compile_selector(f"{A}.names.includes(true)")
    assert isinstance(result, CompiledSelector)
    assert result.evaluate(_device({"names": ("ints", [1])})) is False
    assert result.evaluate(_device({"names": ("bools", [True])})) is True


def test_scalar_and_list_attributes_side_by_side() -> None:
    attrs = {"model": ("string", "a100"), "nvlinks": ("ints", [0, 1, 3]), "other.example.com/zones": ("strings", ["a"])}
    expr = (f'{A}.model == "a100" && {A}.nvlinks.includes(3) && '
            'device.attributes["other.example.com"].zones.exists(z, z == "a")')
    result = compile_selector(expr)
    assert isinstance(result, CompiledSelector)
    assert result.evaluate(_device(attrs)) is True
    assert result.evaluate(_device({**attrs, "nvlinks": ("ints", [0, 1])})) is False
