"""Differential tests: cel-python's evaluator (production's engine) against the oracle (``oracle.py``).

Both engines sit behind the same parser, type checker, cost estimate and caches, so every
selector must give the *same* ``evaluate`` result on both — the same bool, or the same
``CelRuntimeError`` (message, missing key and hint).  A divergence that cannot be fixed must be
listed in :data:`KNOWN_DIVERGENCES` with the reason (it is then an expected failure); none may
touch the Kubernetes conformance messages or verdicts.  Currently there are none.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from draguard.cel import CelRuntimeError, CompiledSelector, CompileFailure, make_device
from draguard.cel.celpy_engine import MAX_CELPY_DEPTH, CelpyProgram
from draguard.cel.device import CelDevice
from draguard.cel.engines import DeferredProgram, engine_scope
from draguard.cel.errors import EvalError
from draguard.cel.selector import _compile, clear_caches
from draguard.k8s.quantity import parse_quantity

from .helpers import value
from .oracle import ENGINES

G = 'device.attributes["gpu.example.com"]'
C = 'device.capacity["gpu.example.com"]'


@pytest.fixture(autouse=True)
def cel_engine() -> Iterator[str]:
    """Overrides the per-engine parametrisation of conftest.py: these tests name both engines."""
    clear_caches()
    yield "both"
    clear_caches()


def _devices() -> dict[str, CelDevice]:
    q = parse_quantity
    return {
        "full": make_device("gpu.example.com", True, {
            "model": ("string", "a100"), "index": ("int", 3), "healthy": ("bool", True),
            "driverVersion": ("version", "1.2.3"), "x.example.com/name": ("string", "atlas"),
            "uuid": ("string", "GPU-0001"), "héllo": ("string", "wörld"),
        }, {"memory": q("16Gi"), "cores": q("500m")}),
        "sparse": make_device("gpu.example.com", False, {
            "index": ("int", 0), "healthy": ("bool", False), "driverVersion": ("version", "0.9.9-rc.1"),
        }, {}),
        "other": make_device("other.example.com", False, {
            "model": ("string", "h100"), "gpu.example.com/index": ("int", -7),
        }, {"gpu.example.com/memory": q("8Gi")}),
        "big": make_device("gpu.example.com", False, {
            "index": ("int", 2**63 - 1), "model": ("string", ""), "healthy": ("bool", True),
            "driverVersion": ("version", "2.0.0"),
        }, {"memory": q("1E")}),
        "empty": make_device("", False, {}, {}),
        "broken": make_device("gpu.example.com", False, {"bad": (None, None)}, {}),
    }


SELECTORS = [
    "true", "false", 'device.driver == "gpu.example.com"', 'device.driver.startsWith("gpu")',
    "device.allowMultipleAllocations", "device.allowMultipleAllocations == false", "device.driver.size() < 64",
    # attributes, heterogeneous ==, cross-type numerics
    f'{G}.model == "a100"', f'{G}.model == 1', f'{G}.model != "a100"', f'{G}["model"] in ["a100", "h100"]',
    f'{G}.index > 1', f'{G}.index < 3.5', f'{G}.index >= 2u', f'{G}.index == 3.0', f'{G}.index in [1, dyn(2.0), dyn(3u)]',
    f'{G}.healthy', f'!{G}.healthy', f'-{G}.index < 0', f'{G}.index + 1 > 3', f'{G}.index * 2 == 6',
    f'{G}.index / 0 == 1', f'{G}.index % 2 == 1', f'double({G}.index) / 2.0 > 1.0',
    f'string({G}.index) == "3"', f'int(string({G}.index)) == 3', f'type({G}.index) == int',
    f'type({G}.model) == string', f'{G}.model.size() == 4', f'size({G}.model) > 0',
    f'{G}["héllo"] == "wörld"', f'{G}["héllo"].size() == 5',
    # missing ids, unknown domains, has(), `in`
    f'{G}.nope == "x"', f'{G}["nope"] == "x"', 'device.attributes["no.such"].x == 1', '"x" in device.attributes["no.such"]',
    '"gpu.example.com" in device.attributes', '"gpu.example.com" in device.capacity', f'"model" in {G}',
    f'has({G}.model)', 'has(device.attributes["no.such"].x)', "has(device.driver)",
    f'"model" in {G} && {G}.model == "a100"', f'!("model" in {G}) || {G}.model == "a100"',
    f'has(dyn({G}.model).foo)', f'dyn({G}.model).foo == 1', 'device.attributes["x.example.com"].name == "atlas"',
    # && / || / ?: absorption and precedence of errors
    f'{G}.model == "a100" || true', f'{G}.nope == 1 || true', f'true || {G}.nope == 1', f'{G}.nope == 1 && false',
    f'false && {G}.nope == 1', f'{G}.a == 1 || {G}.b == 1', f'{G}.a == 1 && {G}.b == 1', f'{G}.a == 1 || false',
    f'1 / 0 == 1 || {G}.healthy', f'{G}.healthy && 1 / 0 == 1', f'dyn({G}.index) || true', f'dyn({G}.index) || false',
    f'dyn({G}.index) && {G}.nope', f'device.allowMultipleAllocations ? {G}.index > 1 : false',
    f'dyn({G}.index) ? true : false', f'{G}.nope ? true : false', f'{G}.healthy ? {G}.nope == 1 : true',
    # overflow and arithmetic errors
    f'{G}.index + 1 > 0', f'dyn({G}.index) * 2 > 0', f'{G}.index - 1 < {G}.index',
    # versions and quantities
    f'{G}.driverVersion.isGreaterThan(semver("1.2.0"))', f'{G}.driverVersion == semver("1.2.3")',
    f'{G}.driverVersion.major() == 1', f'{G}.driverVersion.compareTo(semver("v1.2", true)) > 0',
    f'{G}.driverVersion == "1.2.3"', f'isSemver({G}.model)', f'semver({G}.model).major() == 1',
    f'{C}.memory.compareTo(quantity("10Gi")) >= 0', f'{C}.memory.isGreaterThan(quantity("8Gi"))',
    f'{C}.memory == quantity("16384Mi")', f'{C}.memory.add(1).sub(quantity("1")) == {C}.memory',
    f'{C}.memory.asInteger() > 0', f'{C}.cores.isInteger()', f'sign({C}.memory) == 1',
    f'{C}.memory.asApproximateFloat() > 1.0', f'quantity({G}.model).isGreaterThan(quantity("1"))',
    f'{C}.nope.isGreaterThan(quantity("1"))',
    # strings / regex / lists / sets
    f'{G}.model.matches("^a[0-9]+$")', f'{G}.model.find("[0-9]+") == "100"', f'{G}.model.findAll("0").size() == 2',
    f'{G}.model.lowerAscii() == "a100"', f'{G}.model.split("1").size() == 2', f'{G}.model.charAt(10) == ""',
    f'{G}.model.substring(1, 3) == "10"', f'{G}.model.indexOf("1") == 1', f'{G}.model.replace("a", "b") == "b100"',
    f'{G}.index.matches("a")', f'[{G}.index, 1].sum() > 2', f'[{G}.index, 1].isSorted()',
    f'sets.contains(["a100"], [{G}.model])', f'sets.intersects([{G}.index], [3, 4])',
    f'{{"a": {G}.index}}.a >= 0', '{"a": 1, "a": 2}.size() == 1', '{1: "a"}[1] == "a"', "{true: 1}[true] == 1",
    f'[1, 2][{G}.index] == 2', 'dyn([[1], [2]]) == [[1.0], [2.0]]', 'dyn({"a": [1]}) == {"a": [1.0]}',
    'b"abc".size() == 3', 'string(b"\\xff") == ""', "null == null", "dyn(null) == 1", "device == device",
    # comprehensions
    'device.attributes.exists(d, d.startsWith("gpu"))', f'{G}.all(k, k.size() < 20)', f'{G}.exists_one(k, k == "index")',
    f'{G}.existsOne(k, k == "index")', f'{G}.filter(k, k.startsWith("m")).size() == 1',
    f'{G}.map(k, k.size()).sum() > 10', f'{G}.map(k, k.size() > 5, k).size() >= 1', f'{G}.model.exists(x, true)',
    f'{G}.index.all(x, true)', f'{G}.driverVersion.exists(x, true)', '[1, 2].map(x, x / 0).size() == 2',
    f'[1, 2, 3].filter(x, x > {G}.index).size() == 0', "[1, 2].exists_one(x, dyn(x))", "[1, 2].all(x, dyn(x))",
    f'[1, 2].exists(x, {G}.nope == x)', f'[1, 2].exists(x, x == 2 || {G}.nope == x)',
    f'[1, 2].all(x, {G}.nope == x || x > 0)', f'{G}.all(k, {G}[k] != "zzz")', "[0, 1].exists(x, 1 / x == 1)",
    'device.capacity.all(d, device.capacity[d].all(k, device.capacity[d][k].isGreaterThan(quantity("0"))))',
    # what cel-python has no evaluation for, evaluated by draguard's evaluator subclass
    f'cel.bind(a, {G}, a.index > 1 && a.model == "a100")', f'{G}.all(k, v, k != "" && v != "zzz")',
    '[1, 2].transformList(i, v, i + v).sum() == 4', ".size(device.driver) > 0",
    f'cel.bind(a, {G}.nope, true)', f'cel.bind(a, {G}.nope, true) || true', 'cel.bind(a, 1, cel.bind(b, a + 1, b == 2))',
    f'cel.bind(x, {G}.index, [1, 2].exists(y, y == x))', f'{G}.exists(k, v, v == "a100")', f'{G}.existsOne(k, v, k == "index")',
    f'{G}.exists_one(k, v, v == true)', f'[{G}.index, 4].all(i, v, v > i)', f'[1, 2, 3].exists(i, v, i == {G}.index)',
    f'{G}.transformList(k, v, k).size() == {G}.size()', f'{G}.transformList(k, v, k.startsWith("m"), v).size() == 1',
    f'{G}.transformMap(k, v, k.size()).size() >= 1', f'{{"a": 1, "b": 2}}.transformMap(k, v, v > 1, v * {G}.index)["b"] == 6',
    f'[1, 2].transformMap(i, v, v / {G}.index)[0] == 0', f'{G}.all(k, v, {G}.nope == v)', f'{G}.index.all(i, v, true)',
    '.int("1") == 1', f'.size({G}) > 0',
]

# (selector, device name) → why the engines legitimately disagree.  Entries become xfail(strict).
KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {}


def _cases() -> list[Any]:
    out = []
    for expr in SELECTORS:
        for dev in _devices():
            reason = KNOWN_DIVERGENCES.get((expr, dev))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(pytest.param(expr, dev, marks=marks, id=f"{dev}:{expr[:60]}"))
    return out


_DEVS = _devices()


def _compile_both(expr: str) -> dict[str, CompiledSelector | CompileFailure]:
    return {name: _compile(expr, False, engine) for name, engine in ENGINES.items()}


@pytest.mark.parametrize(("expr", "dev"), _cases())
def test_engines_agree_on_selectors(expr: str, dev: str) -> None:
    compiled = _compile_both(expr)
    sels = list(compiled.values())
    if isinstance(sels[0], CompileFailure):
        assert sels[0] == sels[1]
        pytest.fail(f"corpus selector does not compile: {sels[0].message}")
    results = {}
    for name, sel in compiled.items():
        assert isinstance(sel, CompiledSelector)
        r = sel.evaluate(_DEVS[dev])
        assert isinstance(r, (bool, CelRuntimeError))
        assert not (isinstance(r, CelRuntimeError) and r.message.startswith("internal error")), r
        results[name] = r
    assert results["celpy"] == results["compiled"]


EXPRESSIONS = [
    "1 + 2", "1u + 2u", "1.5 * 2.0", '"a" + "b"', "[1] + [2]", 'b"a" + b"b"', "-(3)", "7 / 2", "-7 % 3", "1 / 0",
    "0u - 1u", "9223372036854775807 + 1", "[1, 2][5]", '{"a": 1}["b"]', '{"a": 1}.b', "[1, 2, 3].map(x, x * x)",
    '{"a": 1, "b": 2}.filter(k, k == "b")', "[3, 1, 2].sort()", "[1, 2, 1].distinct()", "[[1], [2, 3]].flatten()",
    "[].min()", '"a,b".split(",")', '"héllo".size()', 'dyn("a") == 1', "dyn(1) == 1.0", "dyn(1u) < 2.5",
    "type(1u)", "type([1])", "type({})", "type(type(1))", "type(null)", "int", "double(1)", "uint(-1)", "int(1e30)",
    'bool("t")', 'bool("x")', 'bytes("ab")', 'string(b"ab")', "string(1.5e300)", 'quantity("1Ki")',
    'quantity("1Ki").add(quantity("1m"))', 'semver("1.2.3-rc.1+b")', '"x".matches("[")', "null", "[null, dyn(1.5)]",
    '{"a": {"b": [1, dyn({"c": true})]}}', '{1: 2, dyn(2u): 3}', '{true: "t"}', '[1, 2].exists_one(x, x > 0)',
    "[1, 2, 3].map(x, x > 1, x * 10)", 'dyn({"a": 1}).a', 'has({"a": 1}.a)', "dyn([1]).size()",
    '"abc".charAt(3)', '"abc".substring(2, 1)', '[1, 2, 3].slice(1, 5)', 'sets.equivalent([1, 2], [2, 1, 1])',
    "cel.bind(x, [1, 2], x.map(y, y + 1))", '{"a": 1}.transformMap(k, v, v + 1)',
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_engines_agree_on_values(expr: str) -> None:
    got: dict[str, Any] = {}
    for name in ENGINES:
        with engine_scope(ENGINES[name]):
            try:
                v = value(expr)
                got[name] = ("value", type(v).__name__, v)
            except EvalError as e:
                got[name] = ("error", e.message, e.missing_key)
    assert got["celpy"] == got["compiled"]


def test_celpy_runs_bind_two_variable_comprehensions_and_leading_dot_calls_itself() -> None:
    """No construct is handed to a second engine: production has one evaluator."""
    celpy = ENGINES["celpy"]
    for expr in (f"cel.bind(a, {G}, a.index > 1)", f"{G}.all(k, v, v != 1)", ".size(device.driver) > 0",
                 f'{G}.model == "a100"', "[1].transformMap(i, v, v + i)[0] == 1"):
        sel = _compile(expr, True, celpy)
        assert isinstance(sel, CompiledSelector) and isinstance(sel._prepared, DeferredProgram) and isinstance(sel._prepared.program(), CelpyProgram), expr


def test_a_tree_too_deep_for_cel_python_is_not_checked_rather_than_rejected() -> None:
    celpy = ENGINES["celpy"]
    deep = " && ".join([f"{G}.index != {i}" for i in range(MAX_CELPY_DEPTH + 5)])
    failure = _compile(deep, True, celpy)
    assert isinstance(failure, CompileFailure) and failure.kind == "unsupported"
    assert f"nests deeper than {MAX_CELPY_DEPTH} levels" in failure.message and "not checked" in failure.message
    shallow = " && ".join([f"{G}.index != {i}" for i in range(MAX_CELPY_DEPTH - 10)])
    assert isinstance(_compile(shallow, True, celpy), CompiledSelector)


def test_celpy_converts_devices_lazily_and_once() -> None:
    # not plain comparisons (app/cel/plain.py answers those without converting anything)
    sel = _compile(f'{G}.model.startsWith("a100")', True, ENGINES["celpy"])
    assert isinstance(sel, CompiledSelector)
    devs = [make_device("gpu.example.com", False, {"model": ("string", "a100"), "uuid": ("string", str(i))}, {})
            for i in range(50)]
    assert all(sel.evaluate(d) is True for d in devs)
    converted = [d for d in devs if d.engine_value is not None]
    assert len(converted) == 1  # the other 49 were answered by the projection cache
    before = converted[0].engine_value
    other = _compile(f'{G}.uuid.size() > 0', True, ENGINES["celpy"])
    assert isinstance(other, CompiledSelector) and other.evaluate(converted[0]) is True
    assert converted[0].engine_value is before


def test_celpy_engine_never_touches_recursion_limit_or_environment() -> None:
    import sys

    import celpy

    limit = sys.getrecursionlimit()
    parser_before = celpy.CELParser.CEL_PARSER
    sel = _compile("[1, 2, 3].all(x, [4, 5].exists(y, y > x))", True, ENGINES["celpy"])
    assert isinstance(sel, CompiledSelector) and sel.evaluate(_DEVS["full"]) is True
    assert sys.getrecursionlimit() == limit
    assert celpy.CELParser.CEL_PARSER is parser_before


def test_celpy_engine_is_thread_safe() -> None:
    """One shared selector per expression, evaluated uncached from 4 threads at once."""
    exprs = [f'{G}.index % 3 == 0 && {G}.model.startsWith("a")', f'[1, 2, 3].exists(x, x == {G}.index)',
             f'{G}.all(k, k != "zzz") && {G}.index > 5', f'{G}.nope == 1 || {G}.index > 100']
    devs = [make_device("gpu.example.com", False, {"index": ("int", i), "model": ("string", "a" if i % 2 else "b")}, {})
            for i in range(200)]
    sels = {e: _compile(e, True, ENGINES["celpy"]) for e in exprs}
    oracle = {e: [_compile(e, True, ENGINES["compiled"])._run(d) for d in devs] for e in exprs}  # type: ignore[union-attr]
    errors: list[str] = []

    def worker() -> None:
        for _ in range(3):
            for e, sel in sels.items():
                assert isinstance(sel, CompiledSelector)
                if [sel._run(d) for d in devs] != oracle[e]:
                    errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


CANCELLED = CelRuntimeError("operation cancelled: actual cost limit exceeded")
COST_TEMPLATES = [
    ("{r}.all(x, {r}.all(y, {t}.all(z, x + y + z > device.attributes['gpu.example.com'].index)))", 83),
    ("{r}.all(i, x, {r}.all(j, y, {t}.all(k, z, x + y + z + i + j > device.attributes['gpu.example.com'].index)))", 73),
    ("cel.bind(a, {r}, a.all(x, cel.bind(b, {r}, b.all(y, {t}.all(z, x + y + z > "
     "device.attributes['gpu.example.com'].index)))))", 83),
]


@pytest.mark.parametrize(("template", "largest"), COST_TEMPLATES, ids=["one-variable", "two-variable", "cel.bind"])
def test_runtime_cost_limit_trips_at_the_same_size_on_both_engines(template: str, largest: int) -> None:
    """The cel-python engine charges the oracle's cost units, so the runtime limit
    (``operation cancelled: actual cost limit exceeded``) trips at the same input size."""
    ones = lambda n: "[" + ", ".join(["1"] * n) + "]"  # noqa: E731
    dev = make_device("gpu.example.com", False, {"index": ("int", 0)}, {})
    for n, expected in ((largest, True), (largest + 1, CANCELLED)):
        expr = template.format(r=ones(n), t=ones(10))
        for engine in ENGINES.values():
            sel = _compile(expr, False, engine)
            assert isinstance(sel, CompiledSelector)
            assert sel._run(dev) == expected, (engine.name, n)
