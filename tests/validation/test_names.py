"""Name formats: exact apimachinery texts and DRA-specific qualified-name rules (1.36)."""

from __future__ import annotations

import pytest
from draguard.k8s.field import Path
from draguard.validation.names import (
    validate_c_identifier,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_driver_name,
    validate_fully_qualified_name,
    validate_label_name,
    validate_label_value,
    validate_pool_name,
    validate_qualified_name,
    validate_uid,
)

F = Path.root("f")
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
C_ID = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
QNAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
FQN = "a fully qualified name must be a domain and a name separated by a slash"


def rendered(errs: list) -> list[str]:  # type: ignore[type-arg]
    return [str(e) for e in errs]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("my-name", []),
        ("a" * 63, []),
        ("", [f'f: Invalid value: "": {DNS_LABEL}']),
        ("My-Name", [f'f: Invalid value: "My-Name": {DNS_LABEL}']),
        ("a.b", ['f: Invalid value: "a.b": must not contain dots']),
        ("a" * 64, [f'f: Invalid value: "{"a" * 64}": must be no more than 63 characters']),
        ("!@#$%^", [f'f: Invalid value: "!@#$%^": {DNS_LABEL}']),
    ],
)
def test_dns_label(value: str, expected: list[str]) -> None:
    assert rendered(validate_dns1123_label(value, F)) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("gpu.example.com", []),
        ("a" * 253, []),
        ("Gpu", [f'f: Invalid value: "Gpu": {DNS_SUBDOMAIN}']),
        ("a" * 254, [f'f: Invalid value: "{"a" * 254}": must be no more than 253 characters']),
        ("gpu.", [f'f: Invalid value: "gpu.": {DNS_SUBDOMAIN}']),
    ],
)
def test_dns_subdomain(value: str, expected: list[str]) -> None:
    assert rendered(validate_dns1123_subdomain(value, F)) == expected


def test_driver_name_is_lowercased_before_the_subdomain_check() -> None:
    assert validate_driver_name("Val.Example.com", F) == []
    assert rendered(validate_driver_name("", F)) == ["f: Required value"]  # as a 1.36 API server answers
    long = "d" * 60 + ".example.com"
    assert rendered(validate_driver_name(long, F)) == ["f: Too long: may not be more than 63 bytes"]
    assert rendered(validate_driver_name("bad_driver", F)) == [
        f'f: Invalid value: "bad_driver": {DNS_SUBDOMAIN}'
    ]


def test_pool_name_parts() -> None:
    assert validate_pool_name("node-1/part.two", F) == []
    assert rendered(validate_pool_name("", F)) == ["f: Required value"]
    assert rendered(validate_pool_name("a//b", F)) == [f'f: Invalid value: "": {DNS_SUBDOMAIN}']
    assert next(e.reason for e in validate_pool_name("a" * 254, F)) == "FieldValueTooLong"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("memory", []),
        ("gpu.example.com/memory", []),
        ("a.example.com/b/c", []),  # 1.36 accepts two slashes (upstream TODO)
        ("memory-size", [f'f: Invalid value: "memory-size": {C_ID}']),
        ("1model", [f'f: Invalid value: "1model": {C_ID}']),
        ("", [f'f: Invalid value: "": {C_ID}']),
        ("/memory", ['f: Invalid value: "": the domain must not be empty']),
        ("gpu.example.com/", ['f: Invalid value: "": the name must not be empty']),
        (
            "/",
            [
                'f: Invalid value: "": the domain must not be empty',
                'f: Invalid value: "": the name must not be empty',
            ],
        ),
        ("m" * 33, ["f: Too long: may not be more than 32 bytes"]),
        ("Bad_Domain/memory", [f'f: Invalid value: "Bad_Domain": {DNS_SUBDOMAIN}']),
        ("d" * 60 + ".example.com/memory", ["f: Too long: may not be more than 63 bytes"]),
    ],
)
def test_qualified_name(value: str, expected: list[str]) -> None:
    assert rendered(validate_qualified_name(value, F)) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("gpu.example.com/index", []),
        ("index", [f'f: Invalid value: "index": {FQN}']),
        (
            "missing-domain",
            [f'f: Invalid value: "missing-domain": {C_ID}', f'f: Invalid value: "missing-domain": {FQN}'],
        ),
        ("", [f'f: Invalid value: "": {C_ID}', f'f: Invalid value: "": {FQN}']),
    ],
)
def test_fully_qualified_name(value: str, expected: list[str]) -> None:
    assert rendered(validate_fully_qualified_name(value, F)) == expected


def test_c_identifier_length_and_format() -> None:
    assert validate_c_identifier("a" * 32, F) == []
    assert rendered(validate_c_identifier("a" * 33, F)) == ["f: Too long: may not be more than 32 bytes"]


def test_label_name_and_value() -> None:
    assert validate_label_name("example.com/key", F) == []
    assert rendered(validate_label_name("", F)) == [
        'f: Invalid value: "": name part must be non-empty',
        f'f: Invalid value: "": {QNAME}',
    ]
    assert (
        rendered(validate_label_name("/k", F))[0] == 'f: Invalid value: "/k": prefix part must be non-empty'
    )
    assert validate_label_value("", F) == []
    assert rendered(validate_label_value("-x", F)) == [f'f: Invalid value: "-x": {LABEL_VALUE}']


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", []),
        ("a", ['f: Invalid value: "a": error validating uid: invalid UUID length: 1']),
        (
            "Aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
            [
                'f: Invalid value: "Aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa": uid must be in RFC 4122 normalized form, '
                "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters"
            ],
        ),
        (
            "zaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
            [
                'f: Invalid value: "zaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa": error validating uid: invalid UUID format'
            ],
        ),
        (
            "a" * 32,
            [
                f'f: Invalid value: "{"a" * 32}": uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters'
            ],
        ),
    ],
)
def test_uid(value: str, expected: list[str]) -> None:
    assert rendered(validate_uid(value, F)) == expected
