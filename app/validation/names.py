"""Name formats: DNS labels and subdomains, C identifiers, qualified names, driver and pool names.

Why byte-for-byte texts: names are the most common reason the API server rejects a DRA object,
and users paste the message into a search engine.  The texts and regular expressions are those
of apimachinery's ``pkg/util/validation`` (``IsDNS1123Label``, ``IsDNS1123Subdomain``,
``IsCIdentifier``, ``IsQualifiedName``, ``IsValidLabelValue``) and of ``ValidateCSIDriverName``;
the DRA-specific wrappers (qualified names of attributes/capacities, fully qualified names of
constraints, pool names, UUIDs) follow ``pkg/apis/resource/validation`` as of Kubernetes 1.36.

Two families of functions live here:

* ``is_*`` return the list of problem messages (``[]string`` in Go) — no path, no error type;
* ``validate_*`` take the value and its :class:`Path` and return field errors.
"""

from __future__ import annotations

import re

from ..k8s import FieldError, Memo, Path, byte_len, go_quote, invalid, required, too_long
from .deltas import QUALIFIED_NAME_ONE_SLASH, applies

__all__ = [
    "C_IDENTIFIER_MAX_LENGTH",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "DRIVER_NAME_MAX_LENGTH",
    "POOL_NAME_MAX_LENGTH",
    "is_c_identifier",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "regex_error",
    "uuid_problem",
    "validate_c_identifier",
    "validate_dns1123_label",
    "validate_dns1123_subdomain",
    "validate_driver_name",
    "validate_fully_qualified_name",
    "validate_label_name",
    "validate_label_value",
    "validate_node_name",
    "validate_pool_name",
    "validate_qualified_name",
    "validate_uid",
]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
C_IDENTIFIER_MAX_LENGTH = 32  # resource.DeviceMaxIDLength
DRIVER_NAME_MAX_LENGTH = 63  # resource.DriverNameMaxLength (= DeviceMaxDomainLength)
POOL_NAME_MAX_LENGTH = 253  # resource.PoolNameMaxLength
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_ERR = (
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_'"
)
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)

# Go's regexp.MatchString with ^...$ anchors; \Z so that a trailing newline never matches.
_DNS1123_LABEL_RE = re.compile("^" + _DNS1123_LABEL_FMT + r"\Z")
_DNS1123_SUBDOMAIN_RE = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + r"\Z")
_C_IDENTIFIER_RE = re.compile("^" + _C_IDENTIFIER_FMT + r"\Z")
_QUALIFIED_NAME_RE = re.compile("^" + _QUALIFIED_NAME_FMT + r"\Z")
_LABEL_VALUE_RE = re.compile("^" + _LABEL_VALUE_FMT + r"\Z")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError``: note the two spaces before each ``or`` (upstream quirk)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


# ---------------------------------------------------------------------------- is_* (messages)
def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: a valid subdomain that is not a label gets the short "no dots" hint."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.match(value):
        if _DNS1123_SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_c_identifier(value: str) -> list[str]:
    """``IsCIdentifier`` (no length limit of its own; DRA adds 32 bytes)."""
    if not _C_IDENTIFIER_RE.match(value):
        return [regex_error(_C_IDENTIFIER_ERR, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]
    return []


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: label keys, taint and toleration keys, annotation keys."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif byte_len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.match(name):
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: label values, taint values, toleration values (may be empty)."""
    errs: list[str] = []
    if byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


# ---------------------------------------------------------------------------- validate_* (errors)
def validate_dns1123_label(value: str, path: Path) -> list[FieldError]:
    """``corevalidation.ValidateDNS1123Label``: request, sub-request, device and counter names.

    An empty value is *Invalid* (the regular expression fails), not Required.
    """
    return [invalid(path, value, msg) for msg in is_dns1123_label(value)]


def validate_dns1123_subdomain(value: str, path: Path) -> list[FieldError]:
    """``corevalidation.ValidateDNS1123Subdomain``: device class names, pool name parts."""
    return [invalid(path, value, msg) for msg in is_dns1123_subdomain(value)]


def validate_node_name(value: str, path: Path) -> list[FieldError]:
    """``ValidateNodeName`` = ``NameIsDNSSubdomain`` without prefix handling."""
    return [invalid(path, value, msg) for msg in is_dns1123_subdomain(value)]


def validate_driver_name(value: str, path: Path) -> list[FieldError]:
    """``ValidateCSIDriverName``: required, at most 63 bytes, a DNS subdomain *after lower-casing*.

    Lower-casing first is why ``Val.Example.com`` is accepted (the API server only warns).  An
    empty name is ``Required value`` and nothing else (a real 1.36 API server stops there).
    """
    if not value:
        return [required(path)]
    errs: list[FieldError] = []
    if byte_len(value) > DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(path, DRIVER_NAME_MAX_LENGTH))
    errs.extend(invalid(path, value, msg) for msg in is_dns1123_subdomain(value.lower()))
    return errs


def validate_pool_name(value: str, path: Path) -> list[FieldError]:
    """``validatePoolName``: required, at most 253 bytes, every ``/``-separated part a DNS subdomain."""
    if not value:
        return [required(path)]
    errs: list[FieldError] = []
    if byte_len(value) > POOL_NAME_MAX_LENGTH:
        errs.append(too_long(path, POOL_NAME_MAX_LENGTH))
    for part in value.split("/"):
        errs.extend(validate_dns1123_subdomain(part, path))
    return errs


def validate_c_identifier(value: str, path: Path) -> list[FieldError]:
    """``validateCIdentifier``: at most 32 bytes and a C identifier."""
    errs: list[FieldError] = []
    if byte_len(value) > C_IDENTIFIER_MAX_LENGTH:
        errs.append(too_long(path, C_IDENTIFIER_MAX_LENGTH))
    errs.extend(invalid(path, value, msg) for msg in is_c_identifier(value))
    return errs


_VALID_QUALIFIED_NAMES: Memo[str, bool] = Memo("valid qualified names", 4096)
"""Attribute and capacity names that passed :func:`validate_qualified_name`: the same few names
(``gpu.example.com/model``, ``memory``) key every device of an inventory, and a name's validity
does not depend on where it stands.  Only valid names are remembered (errors carry their path)."""


def validate_qualified_name(name: str, path: Path) -> list[FieldError]:
    """``validateQualifiedName`` (attribute and capacity keys): ``<id>`` or ``<domain>/<id>``.

    Kubernetes 1.36 and 1.37 accept names with two or more slashes without any error (an
    upstream TODO) — reproduced here on purpose, the conformance sample shows
    ``a.example.com/b/c`` accepted.  1.38 rejects them (kubernetes#141644:
    ``must not contain more than one slash``, nothing else about that name); stored objects
    are spared by the callers' ratchets.  Empty parts are *Invalid* with value ``""`` (1.35+).
    """
    if name.count("/") > 1:
        if applies(QUALIFIED_NAME_ONE_SLASH):
            return [invalid(path, name, "must not contain more than one slash")]
        return []
    if _VALID_QUALIFIED_NAMES.get(name):
        return []
    errs = _qualified_name_errors(name, path)
    if not errs:
        _VALID_QUALIFIED_NAMES.put(name, True)
    return errs


def _qualified_name_errors(name: str, path: Path) -> list[FieldError]:
    parts = name.split("/")
    if len(parts) == 1:
        return validate_c_identifier(parts[0], path)
    if len(parts) == 2:
        errs: list[FieldError] = []
        domain, ident = parts
        if not domain:
            errs.append(invalid(path, "", "the domain must not be empty"))
        else:
            errs.extend(validate_driver_name(domain, path))
        if not ident:
            errs.append(invalid(path, "", "the name must not be empty"))
        else:
            errs.extend(validate_c_identifier(ident, path))
        return errs
    return []


def validate_fully_qualified_name(name: str, path: Path) -> list[FieldError]:
    """``validateFullyQualifiedName`` (matchAttribute, distinctAttribute): a domain is mandatory."""
    errs = validate_qualified_name(name, path)
    if "/" not in name:
        errs.append(
            invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash")
        )
    return errs


def validate_label_name(value: str, path: Path) -> list[FieldError]:
    """``metav1validation.ValidateLabelName`` (taint/toleration keys, node selector keys)."""
    return [invalid(path, value, msg) for msg in is_qualified_name(value)]


def validate_label_value(value: str, path: Path) -> list[FieldError]:
    """``validateLabelValue`` in the DRA validation (there is no metav1 equivalent)."""
    return [invalid(path, value, msg) for msg in is_valid_label_value(value)]


# ---------------------------------------------------------------------------- UUIDs (shareID)
_HEX = frozenset("0123456789abcdefABCDEF")


def uuid_problem(value: str) -> str | None:
    """google/uuid's ``Validate``: ``None`` when the text parses as a UUID, else its error text.

    Accepted spellings: 36 characters with dashes, ``urn:uuid:`` + 36, ``{`` 36 ``}``, 32 hex digits.
    """
    n = len(value)
    body = value
    if n == 36:
        pass
    elif n == 45:
        if value[:9].lower() != "urn:uuid:":
            return f"invalid urn prefix: {go_quote(value[:9])}"
        body = value[9:]
    elif n == 38:
        if value[0] != "{" or value[-1] != "}":
            return "invalid bracketed UUID format"
        body = value[1:37]
    elif n == 32:
        if any(ch not in _HEX for ch in value):
            return "invalid UUID format"
        return None
    else:
        return f"invalid UUID length: {n}"
    if body[8] != "-" or body[13] != "-" or body[18] != "-" or body[23] != "-":
        return "invalid UUID format"
    if any(ch not in _HEX for i, ch in enumerate(body) if i not in (8, 13, 18, 23)):
        return "invalid UUID format"
    return None


def validate_uid(value: str, path: Path) -> list[FieldError]:
    """``validateUID``: a UUID, and in RFC 4122 normalized form (36 lower-case characters)."""
    problem = uuid_problem(value)
    if problem is not None:
        return [invalid(path, value, f"error validating uid: {problem}")]
    if len(value) != 36 or value != value.lower():
        return [
            invalid(
                path,
                value,
                "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
                "with lowercase hexadecimal characters",
            )
        ]
    return []
