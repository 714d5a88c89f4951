"""Parser limits (issue #12 item 1) and the fast decoding path (issue #11 item 3).

Each limit has a test that accepts what Kubernetes accepts and one that refuses what it refuses;
the fast path is checked against the careful (position-keeping PyYAML) decoder it stands in for.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.k8s import careful, decode
from draguard.k8s.decode import _decode_with_positions, decode_bytes, decode_text
from draguard.k8s.fastyaml import fast_yaml_documents, needs_careful_reader
from draguard.k8s.jsonparse import MAX_DEPTH, DuplicateKeyError, JsonError, loads_json

ROOT = Path(__file__).resolve().parents[2]


def _claim_with_parameters(parameters: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "deep", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}],
                             "config": [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]}},
    }


def _nested_text(depth: int) -> str:
    """A claim as JSON whose opaque parameters make the whole document ``depth`` levels deep."""
    shell = json.dumps(_claim_with_parameters("HOLE"))
    # the claim's own structure is 6 levels deep around "parameters"; the rest are lists
    inner = depth - 6
    return shell.replace('"HOLE"', "[" * inner + "]" * inner)


# ---------------------------------------------------------------------------- JSON depth
def test_json_nested_ten_thousand_deep_is_accepted_without_recursion() -> None:
    result = decode_text(_nested_text(MAX_DEPTH), "deep.json")
    assert result.findings == []
    (doc,) = result.documents
    assert doc.kind == "ResourceClaim"
    value = doc.obj["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    depth = 0
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    assert depth == MAX_DEPTH - 6


def test_json_nested_deeper_than_kubernetes_accepts_is_a_decode_error() -> None:
    result = decode_text(_nested_text(MAX_DEPTH + 1), "deeper.json")
    assert result.documents == []
    (finding,) = result.findings
    assert finding.reason == "DecodeError"
    assert "nesting depth exceeds 10000" in finding.message


def test_loads_json_depth_limit_applies_to_both_parsers() -> None:
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, reject_duplicates=True) is not None
    for strict in (False, True):
        with pytest.raises(JsonError, match="nesting depth"):
            loads_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), reject_duplicates=strict)


def test_iterative_parser_reads_what_json_reads() -> None:
    rng = random.Random(5)

    def value(depth: int) -> Any:
        kind = rng.randrange(7 if depth < 6 else 5)
        if kind == 0:
            return rng.randrange(-10**6, 10**6)
        if kind == 1:
            return rng.choice([0.5, -2.25e-3, 1e21])
        if kind == 2:
            return rng.choice(["", "a", 'q"uote', "é\n\t\\", "\u2028"])
        if kind == 3:
            return rng.choice([True, False])
        if kind == 4:
            return None
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randrange(4))}

    for _ in range(200):
        v = value(0)
        text = json.dumps(v, indent=rng.choice([None, 1]))
        deep = "[" * 2000 + text + "]" * 2000  # beyond the C parsers: the iterative one answers
        parsed = loads_json(deep, reject_duplicates=True)
        for _ in range(2000):
            parsed = parsed[0]
        assert parsed == v


@pytest.mark.parametrize(
    "text",
    ['{"a": 1, "a": 2}', "[1,]", '{"a" 1}', "[1 2]", "", "[", '{"a":1}x', "NaN", "[01]", '{"a": "\\ud800"}'],
)
def test_bad_json_is_a_json_error_in_both_parsers(text: str) -> None:
    with pytest.raises(JsonError):
        loads_json(text, reject_duplicates=True)
    if text:  # the same inside 1,500 levels of lists, where the iterative parser answers
        with pytest.raises(JsonError):
            loads_json("[" * 1500 + text + "]" * 1500, reject_duplicates=True)


def test_duplicate_json_keys_are_found_with_their_positions() -> None:
    with pytest.raises(DuplicateKeyError):
        loads_json('{"a": 1, "a": 2}', reject_duplicates=True)
    assert loads_json('{"a": 1, "a": 2}') == {"a": 2}  # an AdmissionReview: the API server decoded it
    result = decode_text('{"kind": "DeviceClass",\n "metadata": {"name": "a", "name": "b"}}\n', "d.json")
    (finding,) = result.findings
    assert 'duplicate key "metadata.name"' in finding.message
    assert finding.line == 2


# ---------------------------------------------------------------------------- YAML aliases
def _alias_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_as_excessive_aliasing() -> None:
    text = _alias_bomb()
    assert len(text) < 1024
    result = decode_text(text, "bomb.yaml")
    assert result.documents == []
    (finding,) = result.findings
    assert finding.reason == "DecodeError"
    assert "excessive aliasing" in finding.message


def test_ordinary_aliases_are_accepted() -> None:
    text = "kind: Node\nmetadata:\n  name: n\n  labels: &l {a: b}\n  annotations: *l\n"
    result = decode_text(text, "ok.yaml")
    assert result.findings == []
    assert result.documents[0].obj["metadata"]["annotations"] == {"a": "b"}
    # many aliases to a small anchor are fine too (go-yaml's ratio rule only stops expansion bombs)
    many = "x: &x [1]\ny: [" + ", ".join(["*x"] * 400) + "]\n"
    assert decode_text(many).findings == []


# ---------------------------------------------------------------------------- kind: List
class _CountingTable(dict[Any, Any]):
    scans = 0

    def items(self) -> Any:
        type(self).scans += 1
        return super().items()


def test_list_items_are_split_in_one_pass_over_the_positions() -> None:
    items = "".join(f"- kind: DeviceClass\n  metadata: {{name: c{i}}}\n" for i in range(4000))
    text = "apiVersion: v1\nkind: List\nitems:\n" + items
    (whole,) = _decode_with_positions(text.replace("kind: List", "kind: Lisst"), "l.yaml").documents
    counted_positions = _CountingTable(whole.positions)
    counted_keys = _CountingTable(whole.key_positions)
    whole.obj["kind"] = "List"
    listed = decode.Document(obj=whole.obj, source="l.yaml", positions=counted_positions, key_positions=counted_keys)
    _CountingTable.scans = 0
    docs = decode._split_list(listed)
    assert len(docs) == 4000
    assert _CountingTable.scans <= 2  # once per table, not once per item
    assert docs[3999].position_of(["metadata", "name"]) == (3 + 2 * 3999 + 2, 20)


def test_list_items_keep_positions_on_both_paths() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- kind: DeviceClass\n  metadata: {name: a}\n- kind: Node\n  metadata: {name: b}\n"
    fast = decode_text(text, "l.yaml").documents
    careful = _decode_with_positions(text, "l.yaml").documents
    assert [(d.kind, d.line, d.position_of(["metadata", "name"])) for d in fast] == [
        (d.kind, d.line, d.position_of(["metadata", "name"])) for d in careful
    ] == [("DeviceClass", 4, (5, 20)), ("Node", 6, (7, 20))]


# ---------------------------------------------------------------------------- bytes and surrogates
@pytest.mark.parametrize(
    "data",
    [b"kind: Node\nmetadata: {name: \xff}\n", b"\xc3\x28", b'{"kind": "Node", "x": "\xed\xa0\x80"}'],
)
def test_non_utf8_bytes_are_a_decode_error(data: bytes) -> None:
    result = decode_bytes(data, "b.yaml")
    assert result.documents == []
    assert result.findings[0].reason == "DecodeError"
    assert "UTF-8" in result.findings[0].message


@pytest.mark.parametrize(
    "text",
    [
        'kind: Node\nmetadata: {name: "\\ud800"}\n',
        '{"kind": "Node", "metadata": {"name": "\\ud800"}}',
        '{"kind": "Node", "metadata": {"name": "\\udfff\\ud800"}}',
        "kind: Node\nmetadata: {name: x\ud800}\n",
    ],
)
def test_lone_surrogates_are_a_decode_error(text: str) -> None:
    result = decode_text(text, "s.yaml")
    assert result.documents == []
    assert result.findings and result.findings[0].reason == "DecodeError"


def test_a_surrogate_pair_escape_is_a_character() -> None:
    (doc,) = decode_text('{"kind": "Node", "metadata": {"name": "\\ud83d\\ude00"}}', "p.json").documents
    assert doc.obj["metadata"]["name"] == "\U0001f600"


# ---------------------------------------------------------------------------- fast path == careful path
SCALARS = [
    "yes", "no", "on", "off", "Yes", "NO", "On", "OFF", "y", "n", "true", "True", "FALSE", "tRue",
    "0777", "00", "0o17", "0x1F", "0b101", "1_000", "1e3", "1E3", "1.5e3", "1.5e+3", "-1e-3", ".5", "-.5", "+.5",
    "1.", "0.", "-0", "+12", ".inf", "-.Inf", ".NaN", "12:30", "1:2:3", "190:20:30.15", "02:00:ab", "~", "null",
    "Null", "", "=", "2024-01-01", "2024-01-01T00:00:00Z", "550.54.15", "10.0.1.0/24", "40Gi", "1G", "!!str 5",
    "&a x", "! 12", "<<", "a b", "'quoted yes'", '"no"', "12345678901234567890123", "0.1e1", "7.", "1_0.5",
]


@pytest.mark.parametrize("scalar", SCALARS)
def test_fast_path_reads_a_scalar_like_the_careful_reader_or_declines(scalar: str) -> None:
    for text in (f"a: {scalar}\n", f"- {scalar}\n", f"{{a: [{scalar}]}}\n", f"{scalar}: 1\n"):
        try:
            expected = list(yaml.load_all(text, Loader=careful._Loader))
        except yaml.YAMLError:
            expected = None
        fast = fast_yaml_documents(text)
        if fast is not None:
            assert fast == expected, text


@pytest.mark.parametrize("scalar", ["yes", "0777", "1e3", "-.5", "12:30", "&a x"])
def test_guard_sends_version_dependent_scalars_to_the_careful_reader(scalar: str) -> None:
    assert needs_careful_reader(f"a: {scalar}\n")
    assert not needs_careful_reader("a: plain\nb: 40Gi\nc: [1, 2.5]\n")


def _project_manifests() -> list[Path]:
    return sorted(p for p in (ROOT / "examples").rglob("*.yaml")) + sorted((ROOT / "tests").rglob("*.yaml"))


def test_fast_path_decodes_every_project_manifest_like_the_careful_decoder() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from workload import CLAIMS, make_inventory

    texts = [p.read_text() for p in _project_manifests()]
    texts.append(yaml.safe_dump_all(make_inventory(200, seed=3) + CLAIMS, sort_keys=False))
    texts.append(json.dumps(make_inventory(40, seed=4)[5], indent=2))
    fast_count = 0
    for text in texts:
        fast = decode_text(text, "f.yaml")
        careful = _decode_with_positions(text, "f.yaml")
        fast_count += fast_yaml_documents(text) is not None
        assert [d.obj for d in fast.documents] == [d.obj for d in careful.documents]
        assert [(d.index, d.item, d.line, d.column, d.positions, d.key_positions) for d in fast.documents] == [
            (d.index, d.item, d.line, d.column, d.positions, d.key_positions) for d in careful.documents
        ]
        assert [f.message for f in fast.findings] == [f.message for f in careful.findings]
    assert fast_count >= len(texts) // 2  # the fast path is really taken


def test_positions_are_computed_only_when_asked_for() -> None:
    text = "kind: DeviceClass\nmetadata:\n  name: a\n---\nkind: DeviceClass\nmetadata:\n  name: b\n"
    docs = decode_text(text, "lazy.yaml").documents
    assert all(d._locator is not None for d in docs)
    assert docs[1].position_of(["metadata", "name"]) == (7, 9)
    assert docs[0]._locator is not None  # the other document has not been located yet
    assert docs[0].line == 1


def test_a_finding_in_one_document_decodes_only_that_document_again(monkeypatch: pytest.MonkeyPatch) -> None:
    one = "kind: DeviceClass\nmetadata:\n  name: c{}\n"
    text = "# many classes\n" + "---\n".join(one.format(i) for i in range(50))
    docs = decode_text(text, "many.yaml").documents
    seen: list[int] = []
    by_events = decode._positions_only
    lines = decode.block_positions

    def recording(t: str, source: str = "", line0: int = 0) -> Any:
        seen.append(len(t))
        return by_events(t, source, line0)

    def recording_lines(t: str, line0: int = 0) -> Any:
        seen.append(len(t))
        return lines(t, line0)

    monkeypatch.setattr(decode, "_positions_only", recording)
    monkeypatch.setattr(decode, "block_positions", recording_lines)
    assert docs[30].position_of(["metadata", "name"]) == (1 + 30 * 4 + 3, 9)
    assert docs[0].line == 2
    assert seen and max(seen) < len(text) // 10  # one document's text each time, not the file's


def test_locating_a_finding_builds_no_objects_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path's documents already hold their objects: positions come from the node tree alone."""
    text = "apiVersion: v1\nkind: List\nitems:\n- kind: DeviceClass\n  metadata: {name: a}\n---\n---\nkind: Node\n"
    docs = decode_text(text, "l.yaml").documents
    monkeypatch.setattr(careful._Loader, "construct_document", lambda *_: pytest.fail("constructed again"))
    assert [(d.kind, d.item, d.line, d.position_of(["metadata", "name"])) for d in docs] == [
        ("DeviceClass", 0, 4, (5, 20)), ("Node", None, 8, (8, 1))]


@pytest.mark.parametrize(
    "text",
    [
        "a: {b: [1, {c: d}]}\n'quoted key': {'x y': \"z\"}\nafter: x\n",
        "x: " + "[" * 230 + "1" + "]" * 230 + "\ny: 2\n",  # deeper than the recorded depth
        "kind: List\nitems:\n- a: 1\n- [2]\n- 3\n---\n\n---\nkind: DeviceList\nitems: []\n---\nkind: List\nitems: {}\n",
        "- 1\n- b: 2\n---\njust a scalar\n---\n{x: {y: [z]}}\n",
    ],
)
def test_positions_from_events_are_the_careful_decoders(text: str) -> None:
    """Every document the careful decoder yields is located the same (the locator also keeps
    entries for documents that are not objects, which nobody asks about)."""
    careful = {(d.index, d.item): (d.line, d.column, d.positions, d.key_positions)
               for d in _decode_with_positions(text, "e.yaml").documents}
    from_events = {(d.index, d.item): (d.line, d.column, d.positions, d.key_positions)
                   for d in decode._positions_only(text, "e.yaml")}
    assert careful
    assert {k: from_events.get(k) for k in careful} == careful


def test_an_alias_is_located_the_careful_way() -> None:
    text = "a: &x {b: 1}\nc: *x\n"
    (doc,) = decode._positions_only(text, "a.yaml")
    assert doc.obj == {"a": {"b": 1}, "c": {"b": 1}}  # the careful decoder answered


def test_a_text_libyaml_refuses_is_located_as_the_careful_decoder_locates_it() -> None:
    """yaml-rs reads flow nesting deeper than libyaml's limit: the careful answer (no positions)."""
    text = "kind: DeviceClass\nx: " + "[" * 2000 + "]" * 2000 + "\n"
    careful = _decode_with_positions(text, "d.yaml")
    assert careful.findings and not careful.documents
    assert decode._positions_only(text, "d.yaml") == []
    docs = decode_text(text, "d.yaml").documents
    if docs:  # the fast reader took it: a finding's position falls back to the document start
        assert docs[0].position_of(["x"]) == (1, 1)


CRONJOB = """apiVersion: batch/v1
kind: CronJob
metadata: {name: report, labels: {app: 'report'}}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: r
            image: "example.com/r:1.0"
            args: ['--since', "-1h", 'it''s']
"""


def test_quoted_scalars_do_not_send_a_cronjob_to_the_careful_reader() -> None:
    """``"*/5 * * * *"`` has alias-looking words, but it is one quoted string in every reader."""
    fast = fast_yaml_documents(CRONJOB)
    assert fast is not None
    assert fast == list(yaml.load_all(CRONJOB, Loader=careful._Loader))


@pytest.mark.parametrize(
    "text",
    [
        "a: [it's, yes, 'x']\n",  # a quote inside a plain scalar opens nothing: `yes` is judged
        "a: {'k': on}\n",
        "c: !!str \"5\"\n",
        "d: &a 'x'\ne: *a\n",
        "- 'x'\n- 0777\n",
    ],
)
def test_what_is_left_out_is_only_quoted_text(text: str) -> None:
    assert needs_careful_reader(text)


@pytest.mark.parametrize(
    ("text", "careful"),
    [
        ("yes: 1\n", True),  # a risky key (the token with its colon)
        ("a:: b\n", False),  # colons after a plain word
        ("x: '::'\n", False),
        ("x: ::\n", False),  # colons alone are no token YAML readers disagree on
        ("x: *a:\n", True),  # an alias with a colon in its name
        ("a: b\nc: d\ne: 'quoted'\nf: on\n", True),  # a risky token after the only quoted line
        ("a: b\nc: 'on'\nd: \"off\"\n", False),  # risky words only inside quotes, on two lines
        ("a: 'x'\nb: \"it's\"\nc: 0777\n", True),
    ],
)
def test_the_guard_reads_tokens_and_quoted_lines_as_before(text: str, careful: bool) -> None:
    assert needs_careful_reader(text) is careful
