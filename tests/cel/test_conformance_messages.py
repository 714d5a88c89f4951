"""The Kubernetes 1.36 verdicts of conformance/cases/validation/cel.yaml, derived from semantics."""

from __future__ import annotations

from app.cel import CompiledSelector, CompileFailure, compile_selector, make_device


def _fail(expr: str) -> CompileFailure:
    r = compile_selector(expr)
    assert isinstance(r, CompileFailure), r
    return r


def _caret(expr: str, col: int) -> str:
    return f"\n | {expr}\n | {'.' * (col - 1)}^"


EXPR_START = ("{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
              "IDENTIFIER}")


def test_single_equals_reports_lexer_then_parser_error() -> None:
    e = 'device.attributes["gpu.example.com"].model = "a100"'
    assert _fail(e) == CompileFailure("invalid", (
        "compilation failed: ERROR: <input>:1:44: Syntax error: token recognition error at: '= '" + _caret(e, 44)
        + "\nERROR: <input>:1:46: Syntax error: extraneous input '\"a100\"' expecting <EOF>" + _caret(e, 46)))


def test_triple_equals() -> None:
    e = "device.driver ==="
    assert _fail(e).message == (
        "compilation failed: ERROR: <input>:1:17: Syntax error: token recognition error at: '='" + _caret(e, 17)
        + f"\nERROR: <input>:1:18: Syntax error: mismatched input '<EOF>' expecting {EXPR_START}" + _caret(e, 18))


def test_missing_operand() -> None:
    e = "device.driver =="
    assert _fail(e).message == (
        f"compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {EXPR_START}"
        + _caret(e, 17))


def test_unknown_variable() -> None:
    e = 'gpu.model == "a100"'
    assert _fail(e).message == "compilation failed: ERROR: <input>:1:1: undeclared reference to 'gpu' (in container '')" + _caret(e, 1)


def test_bool_key_has_no_index_overload() -> None:
    e = "device.attributes[true].someBoolean"
    assert _fail(e).message == (
        "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied to "
        "'(map(string, map(string, dyn)), bool)'" + _caret(e, 18))


def test_result_types() -> None:
    assert _fail("device.driver") == CompileFailure("invalid", "must evaluate to bool or the unknown type, not string")
    assert _fail("size(device.driver)").message == "must evaluate to bool or the unknown type, not int"


def test_undeclared_member_function() -> None:
    e = "device.driver.frobnicate()"
    assert _fail(e).message == (
        "compilation failed: ERROR: <input>:1:25: undeclared reference to 'frobnicate' (in container '')" + _caret(e, 25))


def test_too_long() -> None:
    e = 'device.driver == "' + "x" * 10240 + '"'
    assert _fail(e) == CompileFailure("too_long", "may not be more than 10240 bytes")
    assert isinstance(compile_selector('device.driver == "' + "x" * (10240 - 19) + '"'), CompiledSelector)


def test_cost_limits() -> None:
    nested = ('[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, [1,2,3,4,5,6,7,8,9,10].all(z, '
              '[1,2,3,4,5,6,7,8,9,10].all(w, [1,2,3,4,5,6,7,8,9,10].all(v, int(device.attributes["gpu.example.com"].index)'
              ' < x*y*z*w*v)))))')
    regex = ('device.attributes["gpu.example.com"].all(k, device.attributes["gpu.example.com"].all(k2, '
             'device.attributes["gpu.example.com"].all(k3, k3.matches(k) && k2.matches(k3))))')
    for e in (nested, regex):
        assert _fail(e) == CompileFailure("cost", "too complex, exceeds cost limit")
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


def test_quantity_type_mismatch() -> None:
    e = 'device.capacity["gpu.example.com"].memory > 5'
    assert _fail(e).message == (
        "compilation failed: ERROR: <input>:1:43: found no matching overload for '_>_' applied to "
        "'(kubernetes.Quantity, int)'" + _caret(e, 43))


def test_dyn_result_compiles_but_fails_at_runtime() -> None:
    sel = compile_selector('device.attributes["gpu.example.com"].model')
    assert isinstance(sel, CompiledSelector)
    r = sel.evaluate(make_device("gpu.example.com", False, {"model": ("string", "a100")}, {}))
    assert not isinstance(r, bool)
    assert r.message == ("CEL result of type string could not be converted to bool: "
                         "unsupported native conversion from string to 'bool'")


def test_valid_selectors_compile() -> None:
    for e in ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0")) && '
              'device.capacity["gpu.example.com"].memory.compareTo(quantity("1Gi")) > 0',
              "device.allowMultipleAllocations"):
        assert isinstance(compile_selector(e), CompiledSelector)
