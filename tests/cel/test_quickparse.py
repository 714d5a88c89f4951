"""The quick parser (app/cel/quickparse.py) against the Lark path it stands in for.

Why these tests: the quick parser is allowed to decline anything, but where it answers, its tree
must be the Lark path's tree node for node — class, every field, position and id — because the
type checker, the cost estimate, the read set, the plain evaluator and every caret in a message
read that tree.  So: a differential test on a corpus (the repository's selectors) and on a few
thousand generated texts of the subset with random spacing and nesting, plus mutations of them
that fall just outside; the compiled selectors behave the same both ways; what must go to Lark
(errors, escapes, macros, …) does, with unchanged messages; and a plain lint never imports Lark.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cel import CelRuntimeError, CompiledSelector, CompileFailure
from draguard.cel import ast as A
from draguard.cel import parser as cel_parser
from draguard.cel.celpy_shape import MAX_CELPY_DEPTH, tree_depth
from draguard.cel.engines import DeferredProgram
from draguard.cel.parser import ParseError, parse_source, parse_with_tree
from draguard.cel.quickparse import MAX_DEPTH, quick_parse
from draguard.cel.selector import _compile, clear_caches, compile_selector

from .oracle import ENGINES
from .test_engine_differential import EXPRESSIONS, SELECTORS, _devices
from .test_plain import PLAIN

ROOT = Path(__file__).resolve().parents[2]
G = 'device.attributes["gpu.example.com"]'


# --------------------------------------------------------------------------- comparing trees
def dump(e: A.Expr) -> Any:
    """Every field of every node, recursively (with the value's type: ``True == 1`` in Python)."""
    out: list[Any] = [type(e).__name__]
    for f in dataclasses.fields(e):
        out.append((f.name, _dump_value(getattr(e, f.name))))
    return tuple(out)


def _dump_value(v: Any) -> Any:
    if isinstance(v, A.Expr):
        return dump(v)
    if isinstance(v, (list, tuple)):
        return tuple(_dump_value(x) for x in v)
    return (type(v).__name__, v)


def lark_dump(text: str) -> Any | None:
    """The Lark path's tree of ``text``, dumped; None when it is a syntax error."""
    try:
        return dump(parse_with_tree(text)[0])
    except ParseError:
        return None


def quick_dump(text: str) -> Any | None:
    """The quick parser's tree, numbered as compilation numbers it; None when it declines."""
    root = quick_parse(text)
    if root is None:
        return None
    cel_parser._number(root)
    return dump(root)


def assert_same_tree(text: str) -> bool:
    """Where the quick parser answers, the Lark path gives the same tree; returns whether it answered."""
    quick = quick_dump(text)
    if quick is None:
        return False
    assert quick == lark_dump(text), text
    return True


@pytest.fixture(autouse=True)
def cel_engine() -> Iterator[str]:
    """Overrides conftest.py's once-per-engine runs: these tests are about the parser, and the ones
    that compile name both engines themselves."""
    clear_caches()
    yield "both"
    clear_caches()


def _without_quick_parser(monkeypatch: pytest.MonkeyPatch, text: str, engine: str) -> CompiledSelector | CompileFailure:
    """``text`` compiled with every text going through Lark (the code before the quick parser)."""
    with monkeypatch.context() as m:
        m.setattr(cel_parser, "quick_parse", lambda _text: None)
        return _compile(text, True, ENGINES[engine])


# --------------------------------------------------------------------------- the corpus
WORKLOAD = [
    'device.driver == "gpu.example.com"', 'device.driver == "gpu.example.com" && device.allowMultipleAllocations',
    'device.driver == "nic.example.com"', f'{G}.model == "A100"', f'{G}.partition == "whole"',
    f'{G}.index >= 3 && "17" != "x"', 'device.driver == "gpu.example.com" && device.allowMultipleAllocations == true',
    f'{G}.model == "A100" &&',
]
HAND_PICKED = [
    'device.driver=="gpu.example.com"', f'({G}.model == "A100")', f'!({G}.model == "h100")',
    f'!{G}.healthy || {G}.healthy == false', f'"model" in {G}', '"gpu.example.com" in device.attributes',
    f"{G}.model == 'A100'", f'{G}["model"] == "a100"', 'device.attributes[\'gpu.example.com\'].model != ""',
    f'{G}.index < 8 && {G}.index >= 0', f'{G}.index <= 9223372036854775807', "true", "false", "null == null",
    f'(((({G}.model)))) == "x"', f'{G}.model == "A100" ||\n  {G}.model == "H100"',
    f'\t{G}.model\r\n== "a b/c.d-e_f:g@h#i$j%k^l&m*n(o)p[q]r{{s}}t|u;v<w>x?y,z~`+="\f',
    'device.capacity["gpu.example.com"].memory > 5', "device.attributes[true].someBoolean", "gpu.model == \"a100\"",
    "device.allowMultipleAllocations", '"a" < "b" == true', "!!device.allowMultipleAllocations",
    f"{G}.index == 0", '1 == 1 && 2 != 3 || 4 < 5', "x[0][1]", '(a).b["c"].d', "_a1 == _", "truex == falsey",
    "indexes in inx", "nullable == null",
]


def _expressions_in(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "expression" and isinstance(v, str):
                yield v
            else:
                yield from _expressions_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from _expressions_in(v)


def _repository_selectors() -> list[str]:
    """Every ``expression`` in examples/ and tests/data/ (the documents that parse)."""
    found: set[str] = set()
    for folder in (ROOT / "examples", ROOT / "tests" / "data"):
        for path in sorted(folder.rglob("*")):
            try:
                if path.suffix in (".yaml", ".yml"):
                    docs: list[Any] = list(yaml.safe_load_all(path.read_text()))
                elif path.suffix == ".json":
                    docs = [json.loads(path.read_text())]
                else:
                    continue
            except (yaml.YAMLError, ValueError, UnicodeDecodeError):
                continue
            for doc in docs:
                found.update(_expressions_in(doc))
    return sorted(found)


CORPUS = sorted({*WORKLOAD, *HAND_PICKED, *PLAIN, *SELECTORS, *EXPRESSIONS, *_repository_selectors()})


# --------------------------------------------------------------------------- generated texts
_NAMES = ["device", "a", "b", "r", "x_1", "_", "index", "truex", "inx", "nulls", "driver", "B", "attributes"]
_STRINGS = ['""', '"gpu.example.com"', "'A100'", '"it\'s"', "'say \"hi\"'", '"a//b"', '"1.5"', '" "', '"{}[]()"']
_RELATIONS = ["==", "!=", "<", "<=", ">", ">=", "in"]
_BLANKS = ["", "", "", " ", " ", "  ", "\n", "\t", " \r\n ", "\f"]


def _operand(rng: random.Random, depth: int) -> list[str]:
    """Tokens of one operand of the subset grammar, nesting at most ``depth`` more levels."""
    roll = rng.random() if depth > 0 else rng.random() * 0.45
    if roll < 0.15:
        return [rng.choice(_NAMES)]
    if roll < 0.25:
        return [rng.choice(_STRINGS)]
    if roll < 0.32:
        return [rng.choice(["0", "1", "42", "9223372036854775807", "1000000"])]
    if roll < 0.38:
        return [rng.choice(["true", "false", "null"])]
    if roll < 0.45:
        return ["device", ".", rng.choice(["driver", "allowMultipleAllocations"])]
    if roll < 0.55:
        return ["!", *_operand(rng, depth - 1)]
    if roll < 0.65:
        return ["(", *_expression(rng, depth - 1), ")"]
    if roll < 0.80:
        return [*_operand(rng, depth - 1), ".", rng.choice([*_NAMES[1:], "model", "e5", "u"])]
    return [*_operand(rng, depth - 1), "[", *_expression(rng, depth - 1), "]"]


def _expression(rng: random.Random, depth: int) -> list[str]:
    tokens = _operand(rng, depth)
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        op = rng.choice([*_RELATIONS, "&&", "&&", "||", "||"])
        tokens += [op, *_operand(rng, depth - 1)]
    return tokens


def _join(rng: random.Random, tokens: list[str]) -> str:
    """Tokens with random blanks between them — a blank where two tokens would otherwise fuse."""
    out = [tokens[0]]
    for prev, tok in itertools.pairwise(tokens):
        fuse = (
            ((prev[-1].isalnum() or prev[-1] == "_") and (tok[0].isalnum() or tok[0] in "_\"'"))
            or (prev[-1].isdigit() and tok == ".")
        )
        blank = rng.choice(_BLANKS)
        out.append((blank or " ") if fuse else blank)
        out.append(tok)
    return "".join(out)


def generated(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [_join(rng, _expression(rng, rng.choice([1, 2, 3, 4, 6]))) for _ in range(n)]


_NOISE = [*"-+*/%?:,{}[]().!=<>&|\"'\\ \n\v0129uxeErRbB_aé", "//", "in", "as", "\\n", '"""', "0x", "1.", ".5"]


def mutated(seed: int, texts: list[str]) -> list[str]:
    """Each text with one random edit: a character or fragment inserted, deleted, doubled or replaced."""
    rng = random.Random(seed)
    out = []
    for text in texts:
        i = rng.randrange(len(text) + 1)
        edit = rng.randrange(4)
        if edit == 0:
            text = text[:i] + rng.choice(_NOISE) + text[i:]
        elif edit == 1:
            text = text[:i] + text[i + 1 :]
        elif edit == 2:
            text = text[:i] + text[i : i + 1] * 2 + text[i + 1 :]
        else:
            text = text[:i] + rng.choice(_NOISE) + text[i + 1 :]
        out.append(text)
    return out


# --------------------------------------------------------------------------- (a) differential
def test_the_corpus_parses_to_the_same_tree() -> None:
    answered = [text for text in CORPUS if assert_same_tree(text)]
    assert len(answered) >= 60, len(answered)  # the repository's plain selectors are read quickly
    for text in ('device.driver == "gpu.example.com"', f'{G}.model == "A100"', 'device.driver == "gpu.example.com" '
                 "&& device.allowMultipleAllocations == true", f'{G}.index >= 3 && "17" != "x"'):
        assert text in answered


def test_generated_texts_of_the_subset_parse_to_the_same_tree() -> None:
    texts = generated(seed=20261202, n=3000)
    for text in texts:
        assert assert_same_tree(text), f"the subset's own text was declined: {text!r}"


def test_near_misses_either_decline_or_parse_to_the_same_tree() -> None:
    texts = mutated(seed=7, texts=generated(seed=11, n=4000))
    answered = sum(assert_same_tree(text) for text in texts)
    declined = len(texts) - answered
    assert answered > 500 and declined > 1500, (answered, declined)  # both sides really exercised


@pytest.mark.parametrize("shape", [
    lambda k: " && ".join(["a"] * k), lambda k: " == ".join(["a"] * k), lambda k: "!" * (k - 1) + "a",
    lambda k: "a" + ".b" * (k - 1), lambda k: "a[" * (k - 1) + "0" + "]" * (k - 1),
    lambda k: "(" * k + "a" + ")" * k, lambda k: "!(a == " * (k // 2) + "a" + ")" * (k // 2),
    lambda k: "".join(f"a{i} in (" for i in range(k // 2)) + "b" + ")" * (k // 2),
], ids=["and-chain", "relation-chain", "not", "select", "index", "parentheses", "not-relation", "in-parentheses"])
def test_nesting_is_bounded_below_what_cel_python_runs(shape: Callable[[int], str]) -> None:
    """The deepest accepted text of each shape is one cel-python's evaluator runs (so the engine need
    not see its Lark tree to accept it); past the bound, the quick parser declines."""
    deepest = None
    for k in range(1, 3 * MAX_DEPTH):
        text = shape(k)
        if not assert_same_tree(text):
            break
        deepest = text
    assert deepest is not None and deepest != shape(3 * MAX_DEPTH - 1)
    assert tree_depth(parse_with_tree(deepest)[1]) <= MAX_CELPY_DEPTH


def _same_behaviour(a: CompiledSelector | CompileFailure, b: CompiledSelector | CompileFailure) -> None:
    if isinstance(a, CompileFailure) or isinstance(b, CompileFailure):
        assert a == b
        return
    assert (a.max_cost, a.reads, a.driver, type(a._prepared)) == (b.max_cost, b.reads, b.driver, type(b._prepared))
    for device in _devices().values():
        assert a.evaluate(device) == b.evaluate(device), a.expression


_TYPED_OPERANDS = {
    "string": ["device.driver", f"{G}.model", f'{G}["model"]', 'device.attributes["x.example.com"].name', f"{G}.nope",
               '"gpu.example.com"', "'a100'", '""'],
    "int": [f"{G}.index", "3", "0", "9223372036854775807"],
    "bool": ["device.allowMultipleAllocations", f"{G}.healthy", "true", "false"],
}
_OTHER_OPERANDS = ["null", "device.attributes", G, 'device.capacity["gpu.example.com"].memory', f"{G}.driverVersion"]
_TYPED_RELATIONS = {"string": _RELATIONS[:-1], "int": _RELATIONS[:-1], "bool": ["==", "!="]}


def _comparison(rng: random.Random) -> str:
    """Mostly comparisons that type-check (so that they compile and run), some that do not."""
    roll = rng.random()
    if roll < 0.1:
        return rng.choice([*_TYPED_OPERANDS["bool"][:2], f'"model" in {G}', '"gpu.example.com" in device.attributes'])
    if roll < 0.8:
        kind = rng.choice(sorted(_TYPED_OPERANDS))
        left, right = rng.choice(_TYPED_OPERANDS[kind]), rng.choice(_TYPED_OPERANDS[kind])
        return f"{left} {rng.choice(_TYPED_RELATIONS[kind])} {right}"
    anything = [*_OTHER_OPERANDS, *(x for xs in _TYPED_OPERANDS.values() for x in xs)]
    return f"{rng.choice(anything)} {rng.choice(_RELATIONS)} {rng.choice(anything)}"


def _device_selectors(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = []
        for i in range(rng.choice([1, 2, 3])):
            comparison = _comparison(rng)
            negated = rng.random() < 0.3  # mostly of a parenthesised comparison: `!a == b` is `(!a) == b`
            comparison = f"({comparison})" if rng.random() < (0.9 if negated else 0.3) else comparison
            comparison = "!" + comparison if negated else comparison
            parts.append(comparison if not i else f" {rng.choice(['&&', '||'])} {comparison}")
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_selectors_compiled_either_way_behave_the_same(monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    texts = [t for t in CORPUS if quick_parse(t) is not None] + _device_selectors(seed=3, n=300)
    compiled = 0
    for text in texts:
        quick = _compile(text, True, ENGINES[engine])
        _same_behaviour(quick, _without_quick_parser(monkeypatch, text, engine))
        compiled += isinstance(quick, CompiledSelector)
    assert compiled > 250, compiled


def test_a_quick_parsed_selector_makes_its_lark_tree_only_when_cel_python_needs_it() -> None:
    text = f'{G}.model == "a100"'
    root, tree = parse_source(text)
    assert tree.shallow and tree._tree is None
    assert dump(root) == lark_dump(text)
    assert tree.get() == parse_with_tree(text)[1]
    compiled = _compile(text, True, ENGINES["celpy"])
    assert isinstance(compiled, CompiledSelector) and isinstance(compiled._prepared, DeferredProgram)
    devices = _devices()
    assert compiled.evaluate(devices["full"]) is True  # answered by app/cel/plain.py: no tree yet
    assert compiled._prepared._tree._tree is None
    missing = compiled.evaluate(devices["sparse"])  # no model: cel-python's to answer, on the tree made now
    assert isinstance(missing, CelRuntimeError) and missing.message == "no such key: model", missing
    assert compiled._prepared._tree._tree is not None


# --------------------------------------------------------------------------- (b) what it declines
DECLINED = [
    # strings outside the simple ones
    f'{G}.model == "a\\"b"', f'{G}.model == "\\u00e9"', f'{G}.model == r"a"', f'{G}.model == R"a"', f'{G}.model == b"a"',
    f'{G}.model == """a"""', f"{G}.model == '''a'''", f'{G}.model == "é"', f'{G}["héllo"] == "x"', f'{G}.model == "a\tb"',
    f'{G}.model == "a', f'{G}.model == "a\rb"', '"a""b" == x',
    # comments, odd blanks
    f'{G}.model == "a" // a comment', f'// comment\n{G}.model == "a"', f'{G}.model\v== "a"',
    # numbers outside decimal int64
    f"{G}.index == -1", f"{G}.index == 1u", f"{G}.index == 1.0", f"{G}.index == .5", f"{G}.index == 1e3",
    f"{G}.index == 0x1F", f"{G}.index == 007", f"{G}.index == 9223372036854775808", f"{G}.index == 1" + "0" * 30,
    "1.a == b",
    # reserved words, keywords where a name is expected
    "as == a", "a.in == b", "in == a", "a.true", "a.null", "if", "while.x", "x.namespace", "package", "void",
    # calls, macros, everything else of CEL
    f"has({G}.model)", f'{G}.model.startsWith("a")', f"size({G}) > 0", f"{G}.all(k, k != \"\")", ".a == b",
    f"{G}.index + 1 > 3", f"{G}.index * 2 == 6", f"-{G}.index < 0", f"{G}.healthy ? true : false", "[1, 2][0] == 1",
    '{"a": 1}.a == 1', "a{b: 1}", f"{G}.?model", f"cel.bind(a, {G}, a.model == \"x\")", "dyn(1) == 1",
    # syntax errors
    "", " ", "a ==", "a &&", "(a", "a)", "a b", "a = b", "a & b", "a | b", "a === b", "a == == b", "a.", "a[", "a[]",
    "a[0", "a..b", "!", "a !", "()", "a ! = b", "a < = b",
    # deeper than MAX_DEPTH
    " && ".join(["a"] * (MAX_DEPTH + 1)), "(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1),
]


@pytest.mark.parametrize("text", DECLINED)
def test_what_is_outside_the_subset_is_left_to_lark(text: str) -> None:
    assert quick_parse(text) is None


INVALID = [
    f'{G}.model == "A100" &&', "device.driver ==", 'device.driver === "x"', f'{G}.model = "a100"', '(device.driver == "x"',
    'device.driver == "x")', "device.driver device.driver", f"{G}.index == 9223372036854775808", '"\\q" == device.driver',
    "device.driver == 'unterminated", 'gpu.model == "a100"', "device.attributes[true].someBoolean",
    "device.driver.frobnicate()", "device.driver", f"{G}.index < 1 < 2",
    'device.nope == "x"', f"{G} in device", "as == device.driver",
]


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_invalid_selectors_keep_their_messages(monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    for text in INVALID:
        quick = _compile(text, True, ENGINES[engine])
        assert isinstance(quick, CompileFailure), text
        assert quick == _without_quick_parser(monkeypatch, text, engine), text
    failure = compile_selector(f'{G}.model == "A100" &&')
    assert isinstance(failure, CompileFailure)
    assert failure.message == (
        "compilation failed: ERROR: <input>:1:56: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', "
        "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
        f' | {G}.model == "A100" &&\n'
        " | .......................................................^"
    )


# --------------------------------------------------------------------------- (c) no Lark in a plain run
_COMPILE_PROBE = """
import json, sys
from draguard.cel import compile_selector, make_device
device = make_device("gpu.example.com", False, {"model": ("string", "a100"), "index": ("int", 3)}, {})
answers = [compile_selector(e).evaluate(device) for e in json.loads(sys.argv[1])]
plain = "lark" in sys.modules
later = [str(compile_selector(e).evaluate(device)) for e in json.loads(sys.argv[2])]
print(json.dumps({"answers": answers, "lark_after_plain": plain, "later": later, "lark": "lark" in sys.modules}))
"""
_LINT_PROBE = """
import contextlib, io, json, sys
from draguard.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "lark": "lark" in sys.modules, "out": out.getvalue()}))
"""
_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c{n}, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {{expression: '{selector}'}}
"""


def _child(probe: str, *args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT, check=True,
                         timeout=300)
    answer: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


def test_plain_selectors_compile_and_run_without_lark() -> None:
    plain = ['device.driver == "gpu.example.com"', f'{G}.model == "a100" && {G}.index == 3',
             f'!({G}.model != "a100") || device.allowMultipleAllocations']
    later = [f'{G}.nope == "x"', f'{G}.model.startsWith("a")']  # quick-parsed, then cel-python's; not quick-parsed
    answer = _child(_COMPILE_PROBE, json.dumps(plain), json.dumps(later))
    assert answer["answers"] == [True, True, True] and answer["lark_after_plain"] is False
    assert answer["lark"] is True and answer["later"][1] == "True" and "no such key" in answer["later"][0]


def test_a_plain_lint_does_not_import_lark_and_a_lint_with_another_selector_does(tmp_path: Path) -> None:
    inventory = str(ROOT / "examples" / "inventory")
    for n, selector in enumerate([f'{G}.model == "A100"', f'{G}.model != "B200" && device.driver == "gpu.example.com"']):
        (tmp_path / f"plain-{n}.yaml").write_text(_CLAIM.format(n=n, selector=selector.replace("'", "''")))
    answer = _child(_LINT_PROBE, "lint", str(tmp_path), "--inventory", inventory)
    assert answer["code"] == 0 and answer["lark"] is False, answer
    (tmp_path / "other.yaml").write_text(_CLAIM.format(n=9, selector=f'{G}.model.startsWith("A")'))
    answer = _child(_LINT_PROBE, "lint", str(tmp_path), "--inventory", inventory)
    assert answer["code"] == 0 and answer["lark"] is True and "3 objects checked: 0 errors" in answer["out"], answer
