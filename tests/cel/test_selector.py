"""Device model, errors as data, result caching by projection, threads and RE2 timing."""

from __future__ import annotations

import threading

from draguard.cel import CelRuntimeError, CompiledSelector, CompileFailure, compile_selector, make_device
from draguard.cel.parser import parse
from draguard.cel.selector import _read_set
from draguard.k8s.quantity import parse_quantity

GPU = "gpu.example.com"


def _sel(expr: str) -> CompiledSelector:
    s = compile_selector(expr)
    assert isinstance(s, CompiledSelector), s
    return s


def test_bare_names_live_under_the_driver_domain() -> None:
    d = make_device(GPU, False, {"model": ("string", "a100"), "x.example.com/family": ("string", "f")},
                    {"memory": parse_quantity("16Gi")})
    assert _sel('device.attributes["gpu.example.com"].model == "a100"').evaluate(d) is True
    assert _sel('device.attributes["x.example.com"].family == "f"').evaluate(d) is True
    assert _sel('"model" in device.attributes["x.example.com"]').evaluate(d) is False
    assert _sel('"nope" in device.attributes["unknown.example.com"]').evaluate(d) is False
    assert _sel('device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0').evaluate(d) is True
    assert _sel('device.capacity["gpu.example.com"].memory == quantity("16384Mi")').evaluate(d) is True


def test_missing_attribute_is_a_runtime_error_with_hint() -> None:
    d = make_device(GPU, False, {}, {})
    r = _sel('device.attributes["gpu.example.com"].model == "a100"').evaluate(d)
    assert r == CelRuntimeError("no such key: model", "model", 'guard with "model" in device.attributes["gpu.example.com"]')
    # `&&` / `||` absorb the error when the other side decides.
    assert _sel('"model" in device.attributes["gpu.example.com"] && '
                'device.attributes["gpu.example.com"].model == "a100"').evaluate(d) is False
    assert _sel('device.attributes["gpu.example.com"].model == "a100" || true').evaluate(d) is True
    assert _sel('has(device.attributes["gpu.example.com"].model)').evaluate(d) is False


def test_attribute_without_value_fails_every_selector() -> None:
    d = make_device(GPU, False, {"broken": (None, None)}, {})
    r = _sel("true").evaluate(d)
    assert isinstance(r, CelRuntimeError) and "unsupported attribute value" in r.message


def test_version_attributes_are_semvers() -> None:
    d = make_device(GPU, True, {"v": ("version", "1.2.3")}, {})
    assert _sel('device.attributes["gpu.example.com"].v.isGreaterThan(semver("1.2.0"))').evaluate(d) is True
    assert _sel("device.allowMultipleAllocations").evaluate(d) is True
    assert _sel('device.attributes["gpu.example.com"].v == "1.2.3"').evaluate(d) is False  # heterogeneous ==


def test_evaluate_never_raises() -> None:
    d = make_device(GPU, False, {"n": ("int", 1)}, {})
    r = _sel('device.attributes["gpu.example.com"].n.matches("a")').evaluate(d)
    assert isinstance(r, CelRuntimeError) and "no such overload" in r.message
    r = _sel("dyn(9223372036854775807) + 1 > 0").evaluate(d)
    assert r == CelRuntimeError("integer overflow")


def test_read_sets() -> None:
    def reads(e: str) -> object:
        return _read_set(parse(e))

    assert reads('device.driver == "x"') == frozenset({("driver",)})
    assert reads('"m" in device.attributes["d"] && device.attributes["d"]["m"] == 1') == frozenset(
        {("attributes", "d", "m")})
    assert reads('cel.bind(a, device.attributes["d"], a.x && has(a.y))') == frozenset(
        {("attributes", "d", "x"), ("attributes", "d", "y")})
    assert reads('device.attributes["d"].exists(k, k == "x")') is None
    assert reads('device.attributes.exists(k, true)') is None
    assert reads('device.attributes["d"][device.driver] == 1') is None


def test_projection_cache_shares_results_and_stays_correct() -> None:
    sel = _sel('device.attributes["gpu.example.com"].model == "a100" && !false')
    devs = [make_device(GPU, False, {"model": ("string", "a100" if i % 2 else "h100"), "uuid": ("string", str(i))}, {})
            for i in range(100)]
    assert [sel.evaluate(d) for d in devs] == [bool(i % 2) for i in range(100)]
    assert len(sel._cache) == 2
    # an int 1 and a bool true must not share a cache entry
    sel2 = _sel('device.attributes["gpu.example.com"].x == true')
    assert sel2.evaluate(make_device(GPU, False, {"x": ("int", 1)}, {})) is False
    assert sel2.evaluate(make_device(GPU, False, {"x": ("bool", True)}, {})) is True


def test_compile_cache_and_failures_are_values() -> None:
    assert compile_selector("device.driver == 'a'") is compile_selector("device.driver == 'a'")
    assert isinstance(compile_selector("device.driver =="), CompileFailure)


def test_threads_agree_with_sequential() -> None:
    exprs = ['device.attributes["gpu.example.com"].index % 3 == 0',
             '[1, 2, 3].exists(x, x == device.attributes["gpu.example.com"].index)',
             'device.attributes["gpu.example.com"].all(k, k != "zzz") && device.attributes["gpu.example.com"].index > 5']
    devs = [make_device(GPU, False, {"index": ("int", i)}, {}) for i in range(300)]
    expected = {e: [_sel(e)._run(d) for d in devs] for e in exprs}
    errors: list[str] = []

    def worker() -> None:
        for e in exprs:
            fresh = [make_device(GPU, False, {"index": ("int", i)}, {}) for i in range(300)]
            if [_sel(e).evaluate(d) for d in fresh] != expected[e]:
                errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_catastrophic_backtracking_pattern_is_answered_by_re2() -> None:
    """RE2 has no backtracking: the answer is exact (its speed is measured in bench_cel.py)."""
    sel = _sel('device.attributes["gpu.example.com"].s.matches("(a+)+$")')
    assert sel.evaluate(make_device(GPU, False, {"s": ("string", "a" * 30 + "b")}, {})) is False
    assert sel.evaluate(make_device(GPU, False, {"s": ("string", "a" * 30)}, {})) is True
