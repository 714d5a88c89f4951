"""Seeded generators of hostile inputs: mutated DRA objects, broken bytes, CEL expressions.

Why seeded ``random`` rather than only hypothesis: the full run drives over 100,000 inputs
through real HTTPS, and a plain generator costs microseconds per input where hypothesis'
shrinking machinery costs milliseconds.  Every input is a pure function of ``(seed, i)``, so
a failure is reproduced from the two numbers the report prints.  Hypothesis drives its own,
smaller, shrinking share (test_fuzz.py).

Mutations start from real objects (examples/, the test inventory) so most inputs get deep
into validation, CEL and the satisfiability search instead of stopping at the first check.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from draguard.k8s.tree import compact_json, deep_copy
from draguard.server.safe_render import encode_body

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
INVENTORY_PATHS = [str(EXAMPLES / "inventory")]


def _load_yaml_objects(folder: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(folder.rglob("*.yaml")):
        try:
            docs = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:
            continue
        out.extend(d for d in docs if isinstance(d, dict) and d.get("kind"))
    return out


SEEDS: list[dict[str, Any]] = _load_yaml_objects(EXAMPLES / "claims") + _load_yaml_objects(EXAMPLES / "inventory")
CLAIM_SEEDS = [s for s in SEEDS if s["kind"] in ("ResourceClaim", "ResourceClaimTemplate")]

# ---------------------------------------------------------------------------- hostile values
_STRINGS = [
    "", "x", "5Gi", "-1", "0", "1e2147483647", "9" * 400, "1.5Ki", "10Gx", "\u0000", "\ud800", "\udfff",
    "é" * 3, "a" * 300, "a" * 70_000, '"', "'", "\\", "${x}", "*alias", "&anchor", "!!python/object", "<<",
    "gpu.example.com", "example.com/" + "a" * 70, "ExactCount", "All", "Equal", "Exists", "NoSchedule",
    'device.driver == "gpu.example.com"', "device.attributes", "true", "null", "NaN", "Infinity",
    "a.b/c", "UPPER", "-leading", "trailing-", "x" * 64, "😀", "\u2028", "\t", "\n",
]
_NUMBERS: list[Any] = [0, -1, 1, 2, 3, 32, 33, 128, 2**31, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 10**30,
                       1.5, -0.0, 1e308, 1e-320, 0.1]


def deep(levels: int, leaf: Any = 1) -> Any:
    """``[[[…leaf…]]]`` or ``{"a": {"a": …}}`` without recursion."""
    root: Any = leaf
    for i in range(levels):
        root = [root] if i % 2 else {"a": root}
    return root


SHALLOW = (10, 100, 600)  # what every JSON parser takes
DEEP = (10, 100, 600, 1200, 3000)  # beyond the C parser's recursion: needs a parser without it


def hostile_value(rng: random.Random, level: int = 0, depths: tuple[int, ...] = SHALLOW) -> Any:
    roll = rng.random()
    if roll < 0.30:
        return rng.choice(_STRINGS)
    if roll < 0.50:
        return rng.choice(_NUMBERS)
    if roll < 0.58:
        return rng.choice([True, False, None])
    if roll < 0.63:
        return rng.choice([{}, [], [None], {"": ""}])
    if roll < 0.66:
        return deep(rng.choice(depths))
    if roll < 0.70:
        return [rng.choice(_STRINGS) for _ in range(rng.choice([33, 129, 1000]))]
    if roll < 0.73:
        return {f"k{i}": i for i in range(rng.choice([33, 300]))}
    if level < 2 and roll < 0.87:
        return [hostile_value(rng, level + 1, depths) for _ in range(rng.randrange(4))]
    if level < 2:
        keys = ["name", "driver", "count", "selectors", "cel", "expression", "capacity", "requests", "x"]
        return {rng.choice(keys): hostile_value(rng, level + 1, depths) for _ in range(rng.randrange(1, 4))}
    return rng.choice(_STRINGS)


# ---------------------------------------------------------------------------- object mutation
def _paths(obj: Any) -> list[tuple[Any, ...]]:
    """Every path into ``obj`` (iteratively; seeds are small but mutated ones may be deep)."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), obj)]
    while stack and len(out) < 5000:
        path, node = stack.pop()
        out.append(path)
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
    return out


def _parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        obj = obj[part]
    return obj


def mutate_object(obj: dict[str, Any], rng: random.Random, rounds: int = 3,
                  depths: tuple[int, ...] = SHALLOW) -> Any:
    out: Any = deep_copy(obj)
    for _ in range(rng.randrange(1, rounds + 1)):
        paths = [p for p in _paths(out) if p]
        if not paths:
            return hostile_value(rng, 0, depths)
        path = rng.choice(paths)
        parent = _parent(out, path)
        key = path[-1]
        op = rng.random()
        if op < 0.55:
            parent[key] = hostile_value(rng, 0, depths)
        elif op < 0.70:
            if isinstance(parent, dict):
                del parent[key]
            else:
                parent.pop(key)
        elif op < 0.80 and isinstance(parent, list):
            parent.extend(deep_copy(parent[key]) for _ in range(rng.choice([1, 2, 40, 200])))
        elif op < 0.90 and isinstance(parent, dict):
            parent[rng.choice(["capacty", "extra", str(key) + "x", "apiVersion", "status"])] = hostile_value(rng, 0, depths)
        else:
            parent[key] = deep_copy(rng.choice(SEEDS))  # an object where a field was
    return out


def admission_review(obj: Any, rng: random.Random, uid: str) -> dict[str, Any]:
    kind = obj.get("kind") if isinstance(obj, dict) else None
    operation = rng.choice(["CREATE"] * 6 + ["UPDATE", "UPDATE", "DELETE", "CONNECT"])
    request: dict[str, Any] = {
        "uid": uid,
        "kind": {"group": "resource.k8s.io", "version": "v1", "kind": kind if isinstance(kind, str) else "ResourceClaim"},
        "operation": operation,
        "namespace": "default",
        "name": "fuzz",
        "object": obj if operation != "DELETE" else None,
        "dryRun": rng.random() < 0.1,
    }
    if operation in ("UPDATE", "DELETE"):
        request["oldObject"] = mutate_object(obj, rng, 1) if isinstance(obj, dict) and rng.random() < 0.5 else obj
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def mutate_envelope(review: dict[str, Any], rng: random.Random) -> Any:
    """Break the AdmissionReview itself now and then (400s must stay 400s, never 500s)."""
    if rng.random() < 0.85:
        return review
    return mutate_object(review, rng, 2)


# ---------------------------------------------------------------------------- bytes
def json_bytes(obj: Any) -> bytes:
    """Compact JSON at any depth; lone surrogates as ``\\udXXX`` escapes, as a client would send."""
    return encode_body(compact_json(obj, default=str), "application/json")


_YAML_TRICKS = [
    b"a: &a [1, 2]\nb: *a\n", b"<<: *undefined\n", b"!!python/object:os.system x\n", b"\t- tab\n",
    b"---\n---\n", b"key: value\nkey: again\n", b"\xef\xbb\xbf", b"\xff\xfe", b"\x80\x81", b"\r\n",
    b"%YAML 1.1\n---\n", b"? complex\n: key\n", b"kind: List\nitems: [1, 2, {kind: ResourceClaim}]\n",
    b'{"a": "\\ud800"}', b"[" * 2000 + b"]" * 2000, b"a: " + b"[" * 3000,
]


def encode(obj: Any, rng: random.Random) -> bytes:
    """JSON or YAML, sometimes several documents, sometimes broken at the byte level."""
    if rng.random() < 0.6:
        body = json_bytes(obj)
    else:
        try:
            body = yaml.safe_dump(obj, allow_unicode=rng.random() < 0.5).encode("utf-8", "surrogatepass")
        except (yaml.YAMLError, RecursionError):
            body = json_bytes(obj)
    roll = rng.random()
    if roll < 0.08:
        body = body[: rng.randrange(len(body) + 1)]
    elif roll < 0.14 and body:
        data = bytearray(body)
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        body = bytes(data)
    elif roll < 0.22:
        body = rng.choice(_YAML_TRICKS) + b"\n" + body
    elif roll < 0.30:
        other = json_bytes(mutate_object(rng.choice(SEEDS), rng))
        body = body + b"\n---\n" + other
    return body


# ---------------------------------------------------------------------------- CEL
_ATOMS = [
    'device.driver', 'device.attributes["gpu.example.com"].model', 'device.attributes["gpu.example.com"]',
    'device.capacity["gpu.example.com"].memory', 'device.capacity["memory"]', 'device.allowMultipleAllocations',
    '"A100"', '"gpu.example.com"', "1", "-1", "2.5", "true", "null", "b'x'", "[1, 2, 3]", '{"a": 1}',
    'quantity("40Gi")', 'semver("1.2.3")', "9223372036854775807", "1u", "device", "x", "''",
]
_BINARY = ["==", "!=", "<", "<=", ">", ">=", "&&", "||", "+", "-", "*", "/", "%", "in"]
_CALLS = [
    "size({})", "{}.startsWith(\"a\")", "{}.matches(\"(a+)+$\")", "{}.isGreaterThan(quantity(\"1Gi\"))",
    "{}.compareTo(quantity(\"1\"))", "string({})", "int({})", "has({}.x)", "{}.exists(x, x > 1)",
    "{}.all(k, true)", "{}.map(x, x * 2)", "{}.filter(x, x)", "cel.bind(v, {}, v)", "{}.lowerAscii()",
    "{}.isLessThan(semver(\"1.0.0\"))", "{}.split(\",\")", "{}.?model", "dyn({})", "type({})",
]


def cel_expression(rng: random.Random, level: int = 0) -> str:
    roll = rng.random()
    if level > 3 or roll < 0.3:
        return rng.choice(_ATOMS)
    if roll < 0.6:
        return f"{cel_expression(rng, level + 1)} {rng.choice(_BINARY)} {cel_expression(rng, level + 1)}"
    if roll < 0.8:
        return rng.choice(_CALLS).replace("{}", cel_expression(rng, level + 1))
    if roll < 0.9:
        return f"({cel_expression(rng, level + 1)}) ? {cel_expression(rng, level + 1)} : {cel_expression(rng, level + 1)}"
    return rng.choice(["!", "-", "!!"]) + cel_expression(rng, level + 1)


def hostile_cel(rng: random.Random) -> str:
    expr = cel_expression(rng)
    roll = rng.random()
    if roll < 0.1:
        return expr[: rng.randrange(len(expr) + 1)]
    if roll < 0.15:
        return "(" * rng.choice([50, 100, 300]) + "1" + ")" * rng.choice([50, 100, 300])
    if roll < 0.2:
        return " + ".join(['"a"'] * rng.choice([100, 1000]))
    if roll < 0.23:
        return "[" + ",".join(["[1,2,3]"] * 200) + "].all(x, x.all(y, [1,2,3].all(z, z > 0)))"
    return expr


def with_selector(obj: dict[str, Any], expression: str) -> dict[str, Any]:
    """A claim whose first request (or a class) selects with ``expression``."""
    out = deep_copy(obj)
    spec = out.get("spec")
    if out.get("kind") == "ResourceClaimTemplate" and isinstance(spec, dict):
        spec = spec.get("spec")
    try:
        request = spec["devices"]["requests"][0]
        target = request.get("exactly") or request["firstAvailable"][0]
        target["selectors"] = [{"cel": {"expression": expression}}]
    except (KeyError, IndexError, TypeError, AttributeError):
        pass
    return out


# ---------------------------------------------------------------------------- streams
def object_input(rng: random.Random, depths: tuple[int, ...] = SHALLOW) -> Any:
    """A mutated object (claims most often: they reach the satisfiability search)."""
    seed = rng.choice(CLAIM_SEEDS) if rng.random() < 0.7 else rng.choice(SEEDS)
    roll = rng.random()
    if roll < 0.25:
        return with_selector(seed, hostile_cel(rng))
    if roll < 0.3:
        return deep_copy(seed)
    return mutate_object(seed, rng, depths=depths)


def inputs(seed: int, count: int) -> Iterator[tuple[int, random.Random]]:
    """``count`` independent generators, each reproducible from ``(seed, i)`` alone."""
    for i in range(count):
        yield i, random.Random(seed * 1_000_003 + i)
