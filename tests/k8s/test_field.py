"""``app.k8s.field``: field paths and error rendering, byte for byte as apimachinery prints them.

Expected strings are the API server's own error lines for real DRA objects (rendering rules in
app/k8s/field.py's docstring), and come from apimachinery
``pkg/util/validation/field/errors.go`` (``ErrorBody``) and ``pkg/util/errors`` (aggregate).
"""

from __future__ import annotations

import pytest
from draguard.k8s import field
from draguard.k8s.field import (
    OMIT,
    ErrorType,
    FieldError,
    Path,
    aggregate_message,
    render_value,
)
from draguard.k8s.golang import go_quote
from draguard.k8s.quantity import parse_quantity

SLICE_DEVICE = Path.root("spec", "devices").index(0)
POLICY = SLICE_DEVICE.child("capacity").key("memory").child("requestPolicy")
REQ0 = Path.root("spec", "devices").child("requests").index(0)

C_IDENTIFIER_TEXT = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
    "validation is '[A-Za-z_][A-Za-z0-9_]*')"
)


# --------------------------------------------------------------------------- paths
@pytest.mark.parametrize(
    ("path", "expect"),
    [
        (Path(), ""),
        (Path.root("spec"), "spec"),
        (Path.root("spec", "driver"), "spec.driver"),
        (Path.root("spec").child("devices", "requests"), "spec.devices.requests"),
        (Path.root("items").index(3), "items[3]"),
        (SLICE_DEVICE, "spec.devices[0]"),
        (POLICY, "spec.devices[0].capacity[memory].requestPolicy"),
        (
            POLICY.child("validValues").index(1),
            "spec.devices[0].capacity[memory].requestPolicy.validValues[1]",
        ),
        (POLICY.child("validRange", "min"), "spec.devices[0].capacity[memory].requestPolicy.validRange.min"),
        (
            REQ0.child("firstAvailable").index(0).child("name"),
            "spec.devices.requests[0].firstAvailable[0].name",
        ),
        (
            Path.root("spec", "spec", "devices").child("constraints").index(0),
            "spec.spec.devices.constraints[0]",
        ),
        (
            Path.root("status", "allocation", "devices", "results").index(12).child("shareID"),
            "status.allocation.devices.results[12].shareID",
        ),
        (Path.root("matrix").index(1).index(2), "matrix[1][2]"),
        # map keys are printed verbatim: no quotes, no escaping of '.', '/', ' '
        (
            SLICE_DEVICE.child("attributes").key("gpu.example.com/model"),
            "spec.devices[0].attributes[gpu.example.com/model]",
        ),
        (SLICE_DEVICE.child("capacity").key("/"), "spec.devices[0].capacity[/]"),
        (SLICE_DEVICE.child("capacity").key(""), "spec.devices[0].capacity[]"),
        (
            REQ0.child("exactly", "capacity", "requests").key("not a/valid/name"),
            "spec.devices.requests[0].exactly.capacity.requests[not a/valid/name]",
        ),
        (
            Path.root("metadata", "labels").key("app.kubernetes.io/name"),
            "metadata.labels[app.kubernetes.io/name]",
        ),
    ],
)
def test_path_rendering(path: Path, expect: str) -> None:
    assert str(path) == expect
    assert repr(path) == f"Path({expect!r})"


def test_paths_are_immutable_values() -> None:
    base = Path.root("spec", "devices")
    first = base.index(0).child("name")
    second = base.index(1).child("name")
    assert str(base) == "spec.devices"
    assert str(first) == "spec.devices[0].name"
    assert str(second) == "spec.devices[1].name"
    assert base.index(0).child("name") == first
    assert hash(base.index(0).child("name")) == hash(first)
    assert first != second
    # an index and a map key render alike but are different segments
    assert str(base.index(0)) == str(base.key("0")) == "spec.devices[0]"
    assert base.index(0) != base.key("0")
    with pytest.raises(AttributeError):
        base.segments = ()  # type: ignore[misc]


def test_json_pointer_parts_keep_raw_segments() -> None:
    path = POLICY.child("validValues").index(2)
    assert path.json_pointer_parts() == [
        "spec",
        "devices",
        0,
        "capacity",
        "memory",
        "requestPolicy",
        "validValues",
        2,
    ]
    assert Path().json_pointer_parts() == []


# --------------------------------------------------------------------------- error bodies
@pytest.mark.parametrize(
    ("error", "expect"),
    [
        # Required: no detail / with detail
        (
            field.required(REQ0.child("firstAvailable").index(0).child("deviceClassName")),
            "spec.devices.requests[0].firstAvailable[0].deviceClassName: Required value",
        ),
        (
            field.required(POLICY.child("default"), "required when validValues is defined"),
            "spec.devices[0].capacity[memory].requestPolicy.default: Required value: "
            "required when validValues is defined",
        ),
        (
            field.required(
                Path.root("spec", "devices", "constraints").index(2),
                'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
            ),
            'spec.devices.constraints[2]: Required value: exactly one of "matchAttribute" or '
            '"distinctAttribute" is required, but multiple fields are set',
        ),
        # Forbidden (E1, E2, E22)
        (
            field.forbidden(
                SLICE_DEVICE.child("capacity").key("cap").child("requestPolicy"),
                "allowMultipleAllocations must be true",
            ),
            "spec.devices[0].capacity[cap].requestPolicy: Forbidden: allowMultipleAllocations must be true",
        ),
        (
            field.forbidden(
                POLICY,
                'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
            ),
            "spec.devices[0].capacity[memory].requestPolicy: Forbidden: exactly one policy can be specified, "
            'cannot specify "validValues" and "validRange" at the same time',
        ),
        (
            field.forbidden(
                REQ0.child("exactly", "selectors").index(0).child("cel", "expression"),
                "too complex, exceeds cost limit",
            ),
            "spec.devices.requests[0].exactly.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit",
        ),
        # Invalid with a string value (E5, E15)
        (
            field.invalid(
                POLICY.child("validValues").index(0), "20Gi", "option is larger than capacity value: 10Gi"
            ),
            'spec.devices[0].capacity[memory].requestPolicy.validValues[0]: Invalid value: "20Gi": '
            "option is larger than capacity value: 10Gi",
        ),
        (
            field.invalid(SLICE_DEVICE.child("capacity").key("/"), "", "the domain must not be empty"),
            'spec.devices[0].capacity[/]: Invalid value: "": the domain must not be empty',
        ),
        (
            field.invalid(
                SLICE_DEVICE.child("capacity").key("memory-size"), "memory-size", C_IDENTIFIER_TEXT
            ),
            f'spec.devices[0].capacity[memory-size]: Invalid value: "memory-size": {C_IDENTIFIER_TEXT}',
        ),
        # Invalid with a Quantity value prints its String() quoted (E10)
        (
            field.invalid(
                POLICY.child("validRange", "min"),
                parse_quantity("20Gi"),
                "min is larger than capacity value: 10Gi",
            ),
            'spec.devices[0].capacity[memory].requestPolicy.validRange.min: Invalid value: "20Gi": '
            "min is larger than capacity value: 10Gi",
        ),
        (
            field.invalid(
                POLICY.child("validRange", "max"), parse_quantity("2.0Gi"), "default is more than max: 1Gi"
            ),
            'spec.devices[0].capacity[memory].requestPolicy.validRange.max: Invalid value: "2Gi": '
            "default is more than max: 1Gi",
        ),
        # Invalid with an int value (E14, E21)
        (
            field.invalid(
                SLICE_DEVICE, 33, "the total number of attributes and capacities must not exceed 32"
            ),
            "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32",
        ),
        (
            field.invalid(REQ0.child("exactly", "count"), -1, "must be greater than zero"),
            "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero",
        ),
        (
            field.invalid(
                REQ0.child("exactly", "count"), 2, "must not be specified when allocationMode is 'All'"
            ),
            "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'",
        ),
        # Invalid with a bool value
        (
            field.invalid(SLICE_DEVICE.child("allowMultipleAllocations"), True, "not allowed here"),
            "spec.devices[0].allowMultipleAllocations: Invalid value: true: not allowed here",
        ),
        (
            field.invalid(SLICE_DEVICE.child("allNodes"), False, "must be true when set"),
            "spec.devices[0].allNodes: Invalid value: false: must be true when set",
        ),
        # Invalid with null (E20)
        (
            field.invalid(
                REQ0,
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            ),
            "spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is "
            "required, but multiple fields are set",
        ),
        # Invalid with a struct value, rendered as compact JSON in field order (E25)
        (
            field.invalid(
                Path.root("status", "devices").index(0),
                {
                    "Driver": "foo",
                    "Pool": "foo",
                    "Device": "foo",
                    "ShareID": "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb",
                },
                "must be an allocated device in the claim",
            ),
            'status.devices[0]: Invalid value: {"Driver":"foo","Pool":"foo","Device":"foo",'
            '"ShareID":"bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"}: must be an allocated device in the claim',
        ),
        # Invalid whose detail spans lines: the detail is printed raw, only the value is %q-quoted (E22)
        (
            field.invalid(
                REQ0.child("exactly", "selectors").index(1).child("cel", "expression"),
                "device.attributes[true].someBoolean",
                "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied to "
                "'(map(string, map(string, any)), bool)'\n | device.attributes[true].someBoolean\n"
                " | .................^",
            ),
            'spec.devices.requests[0].exactly.selectors[1].cel.expression: Invalid value: "device.attributes[true]'
            ".someBoolean\": compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' "
            "applied to '(map(string, map(string, any)), bool)'\n | device.attributes[true].someBoolean\n"
            " | .................^",
        ),
        # an omitted value (opaque parameters, row 76)
        (
            field.invalid(
                Path.root("spec", "config").index(0).child("opaque", "parameters"),
                OMIT,
                "must be a valid JSON object",
            ),
            'spec.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object',
        ),
        # TypeInvalid prints like Invalid
        (
            field.type_invalid(REQ0.child("exactly", "count"), "two", "expected integer, got string"),
            'spec.devices.requests[0].exactly.count: Invalid value: "two": expected integer, got string',
        ),
        # NotSupported (E21 / row 62 / row 64)
        (
            field.not_supported(REQ0.child("exactly", "allocationMode"), "other", ["All", "ExactCount"]),
            'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "other": '
            'supported values: "All", "ExactCount"',
        ),
        (
            field.not_supported(
                REQ0.child("firstAvailable").index(0).child("allocationMode"), "", ["All", "ExactCount"]
            ),
            'spec.devices.requests[0].firstAvailable[0].allocationMode: Unsupported value: "": '
            'supported values: "All", "ExactCount"',
        ),
        (
            field.not_supported(
                REQ0.child("exactly", "tolerations").index(0).child("effect"),
                "NoWay",
                ["NoExecute", "NoSchedule", "None"],
            ),
            'spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: "NoWay": '
            'supported values: "NoExecute", "NoSchedule", "None"',
        ),
        (
            field.not_supported(Path.root("spec", "mode"), "x", ['say "hi"']),
            'spec.mode: Unsupported value: "x": supported values: "say \\"hi\\""',
        ),
        (
            field.not_supported(Path.root("spec", "mode"), "x", []),
            'spec.mode: Unsupported value: "x"',
        ),
        # Duplicate (E6, E7, row 85)
        (
            field.duplicate(POLICY.child("validValues").index(1), "1073741824"),
            'spec.devices[0].capacity[memory].requestPolicy.validValues[1]: Duplicate value: "1073741824"',
        ),
        (
            field.duplicate(
                SLICE_DEVICE.child("capacity").key("c").child("requestPolicy", "validValues").index(1), "1"
            ),
            'spec.devices[0].capacity[c].requestPolicy.validValues[1]: Duplicate value: "1"',
        ),
        (
            field.duplicate(REQ0.child("firstAvailable").index(1), 7),
            "spec.devices.requests[0].firstAvailable[1]: Duplicate value: 7",
        ),
        (
            field.duplicate(
                Path.root("status", "devices").index(1),
                {"Driver": "foo", "Pool": "foo", "Device": "foo", "ShareID": ""},
            ),
            'status.devices[1]: Duplicate value: {"Driver":"foo","Pool":"foo","Device":"foo","ShareID":""}',
        ),
        # TooLong: "byte" for 1, "bytes" otherwise; the value is never shown
        (
            field.too_long(Path.root("spec", "config").index(0).child("opaque", "parameters"), 10240),
            "spec.config[0].opaque.parameters: Too long: may not be more than 10240 bytes",
        ),
        (
            field.too_long(Path.root("spec", "x"), 1),
            "spec.x: Too long: may not be more than 1 byte",
        ),
        (
            field.too_long(Path.root("spec", "x"), 0),
            "spec.x: Too long: may not be more than 0 bytes",
        ),
        # TooMany: "item" for 1, "items" otherwise (E9, E16, row 65)
        (
            field.too_many(POLICY.child("validValues"), 11, 10),
            "spec.devices[0].capacity[memory].requestPolicy.validValues: Too many: 11: must have at most 10 items",
        ),
        (
            field.too_many(Path.root("spec", "devices"), 65, 64),
            "spec.devices: Too many: 65: must have at most 64 items",
        ),
        (
            field.too_many(REQ0.child("firstAvailable"), 9, 8),
            "spec.devices.requests[0].firstAvailable: Too many: 9: must have at most 8 items",
        ),
        (
            field.too_many(Path.root("spec", "x"), 2, 1),
            "spec.x: Too many: 2: must have at most 1 item",
        ),
        # Internal
        (
            field.internal(Path.root("spec"), "something broke"),
            "spec: Internal error: something broke",
        ),
    ],
    ids=lambda v: v.type.name if isinstance(v, FieldError) else None,
)
def test_error_rendering(error: FieldError, expect: str) -> None:
    assert str(error) == expect
    prefix = f"{error.field}: "
    assert expect.startswith(prefix)
    assert error.body() == expect[len(prefix) :]


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (field.required(Path.root("a")), "FieldValueRequired"),
        (field.invalid(Path.root("a"), 1, "x"), "FieldValueInvalid"),
        (field.type_invalid(Path.root("a"), 1, "x"), "FieldValueTypeInvalid"),
        (field.not_supported(Path.root("a"), "b", ["c"]), "FieldValueNotSupported"),
        (field.duplicate(Path.root("a"), "b"), "FieldValueDuplicate"),
        (field.too_long(Path.root("a"), 3), "FieldValueTooLong"),
        (field.too_many(Path.root("a"), 3, 2), "FieldValueTooMany"),
        (field.forbidden(Path.root("a"), "no"), "FieldValueForbidden"),
        (field.internal(Path.root("a"), "x"), "InternalError"),
        (field.not_found(Path.root("a"), "x"), "FieldValueNotFound"),
    ],
)
def test_reason_is_the_status_cause_type(error: FieldError, reason: str) -> None:
    assert error.reason == reason
    assert error.type.value == reason
    assert error.field == "a"


def test_error_type_labels() -> None:
    assert {t.name: t.label for t in ErrorType} == {
        "REQUIRED": "Required value",
        "INVALID": "Invalid value",
        "NOT_SUPPORTED": "Unsupported value",
        "DUPLICATE": "Duplicate value",
        "TOO_LONG": "Too long",
        "TOO_MANY": "Too many",
        "FORBIDDEN": "Forbidden",
        "TYPE_INVALID": "Invalid value",
        "NOT_FOUND": "Not found",
        "INTERNAL": "Internal error",
    }


def test_errors_are_frozen_values() -> None:
    a = field.invalid(Path.root("spec", "x"), "v", "bad")
    b = field.invalid(Path.root("spec", "x"), "v", "bad")
    assert a == b
    assert hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.detail = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- Go %q
@pytest.mark.parametrize(
    ("raw", "quoted"),
    [
        ("", '""'),
        ("plain", '"plain"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("a\nb", '"a\\nb"'),
        ("a\tb", '"a\\tb"'),
        ("a\rb", '"a\\rb"'),
        ("nul\x00", '"nul\\x00"'),
        ("esc\x1b[0m", '"esc\\x1b[0m"'),
        ("del\x7f", '"del\\x7f"'),
        ("\x01\x1f", '"\\x01\\x1f"'),
        # printable non-ASCII stays as is
        ("café", '"café"'),
        ("日本語", '"日本語"'),
        ("gpu-😀", '"gpu-😀"'),
        ("it's", '"it\'s"'),
        ("device.attributes['a'] == `b`", "\"device.attributes['a'] == `b`\""),
    ],
)
def test_go_quote(raw: str, quoted: str) -> None:
    assert go_quote(raw) == quoted
    assert render_value(raw) == quoted
    assert str(field.invalid(Path.root("f"), raw, "d")) == f"f: Invalid value: {quoted}: d"


@pytest.mark.parametrize(
    ("raw", "quoted"),
    [
        ("\a", '"\\a"'),
        ("\b", '"\\b"'),
        ("\f", '"\\f"'),
        ("\v", '"\\v"'),
        ("a\u00a0b", '"a\\u00a0b"'),
        ("\u0085", '"\\u0085"'),
        ("zero\u200bwidth", '"zero\\u200bwidth"'),
        ("\u2028", '"\\u2028"'),
        ("\ufeffbom", '"\\ufeffbom"'),
        ("\U000e0001", '"\\U000e0001"'),
    ],
    ids=["BEL", "BS", "FF", "VT", "NBSP", "NEL", "ZWSP", "LSEP", "BOM", "TAG"],
)
def test_go_quote_escapes_like_strconv_quote(raw: str, quoted: str) -> None:
    """strconv.Quote: \\a \\b \\f \\v, and \\u/\\U for runes unicode.IsPrint rejects."""
    assert go_quote(raw) == quoted


# --------------------------------------------------------------------------- other values
@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-17, "-17"),
        (2**63 - 1, "9223372036854775807"),
        (2.5, "2.5"),
        (0.1, "0.1"),
        (["a", "b"], '["a","b"]'),
        ([1, 2, 3], "[1,2,3]"),
        ({"a": 1, "b": [True, None]}, '{"a":1,"b":[true,null]}'),
        (parse_quantity("1.5Gi"), '"1536Mi"'),
        (parse_quantity("+5"), '"+5"'),
        (OMIT, '"<value omitted>"'),
    ],
)
def test_render_value(value: object, rendered: str) -> None:
    assert render_value(value) == rendered


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        (1.0, "1"),
        (-3.0, "-3"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (1e21, "1e+21"),
        (0.0001, "0.0001"),
        (1e-5, "1e-05"),
        (0.1 + 0.2, "0.30000000000000004"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
        (float("nan"), "NaN"),
    ],
)
def test_render_float_like_go_percent_v(value: float, rendered: str) -> None:
    """float64 bad values print with %v: shortest digits, %e below 1e-4 and from 1e+06 on."""
    assert render_value(value) == rendered


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ({"name": "café"}, '{"name":"café"}'),
        (["<b>&"], '["\\u003cb\\u003e\\u0026"]'),
        (["a\u2028b\u2029"], '["a\\u2028b\\u2029"]'),
    ],
    ids=["non-ascii", "html", "line-separators"],
)
def test_render_json_like_go_json_marshal(value: object, rendered: str) -> None:
    """json.Marshal keeps UTF-8, HTML-escapes <, >, & and escapes U+2028/U+2029."""
    assert render_value(value) == rendered


# --------------------------------------------------------------------------- aggregate
A = field.required(Path.root("spec", "driver"))
B = field.invalid(Path.root("metadata", "name"), "Bad_Name", "must be lowercase")
C = field.too_many(Path.root("spec", "devices"), 129, 128)


def test_aggregate_single_error_is_unbracketed() -> None:
    assert aggregate_message([A]) == "spec.driver: Required value"


def test_aggregate_several_errors_are_bracketed_in_order() -> None:
    assert aggregate_message([A, B]) == (
        '[spec.driver: Required value, metadata.name: Invalid value: "Bad_Name": must be lowercase]'
    )
    assert aggregate_message([B, A, C]) == (
        '[metadata.name: Invalid value: "Bad_Name": must be lowercase, spec.driver: Required value, '
        "spec.devices: Too many: 129: must have at most 128 items]"
    )


def test_aggregate_deduplicates_identical_messages() -> None:
    assert aggregate_message([A, B, A, field.required(Path.root("spec", "driver"))]) == (
        '[spec.driver: Required value, metadata.name: Invalid value: "Bad_Name": must be lowercase]'
    )
    # several copies of one message collapse to a single, unbracketed error
    assert aggregate_message([A, A, A]) == "spec.driver: Required value"


def test_aggregate_dedup_is_by_rendered_text_not_by_type() -> None:
    # Invalid and TypeInvalid render identically, so upstream's string-keyed set drops the second
    inv = field.invalid(Path.root("spec", "count"), "two", "bad")
    typ = field.type_invalid(Path.root("spec", "count"), "two", "bad")
    assert aggregate_message([inv, typ]) == 'spec.count: Invalid value: "two": bad'
    # ... while the same body on two paths is kept twice
    other = field.invalid(Path.root("spec", "other"), "two", "bad")
    assert (
        aggregate_message([inv, other])
        == '[spec.count: Invalid value: "two": bad, spec.other: Invalid value: "two": bad]'
    )


def test_aggregate_accepts_any_iterable() -> None:
    assert aggregate_message(e for e in (A, B)) == aggregate_message([A, B])


def test_aggregate_of_nothing_is_empty() -> None:
    """ToAggregate() of no errors is nil; an empty aggregate's Error() is ''."""
    assert aggregate_message([]) == ""


def test_not_found_renders_like_field_not_found() -> None:
    assert str(field.not_found(Path.root("a").child("capacityKey"), "nosuch")) == 'a.capacityKey: Not found: "nosuch"'


def test_a_root_path_is_the_path_its_children_make() -> None:
    """``Path.root`` builds its segments at once; it must equal the child-by-child path."""
    assert Path.root("spec", "devices", "requests") == Path().child("spec").child("devices").child("requests")
    assert hash(Path.root("metadata")) == hash(Path().child("metadata"))
    assert str(Path.root("spec", "devices").index(0).key("memory")) == "spec.devices[0][memory]"
    assert Path.root() == Path() and str(Path.root()) == ""
