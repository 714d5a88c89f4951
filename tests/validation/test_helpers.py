"""Generic helpers: size limits short-circuit, duplicates at the later index."""

from __future__ import annotations

from draguard.k8s.field import FieldError, Path, invalid
from draguard.validation.helpers import (
    truncate_if_too_long,
    validate_map,
    validate_set,
    validate_slice,
)

P = Path.root("items")


def bad_if_negative(item: int, path: Path) -> list[FieldError]:
    return [invalid(path, item, "negative")] if item < 0 else []


def test_slice_limit_short_circuits_item_checks() -> None:
    assert [str(e) for e in validate_slice([-1, -2, -3], 2, bad_if_negative, P)] == [
        "items: Too many: 3: must have at most 2 items"
    ]
    assert [e.field for e in validate_slice([-1, 2], 2, bad_if_negative, P)] == ["items[0]"]
    assert validate_slice([-1] * 5, -1, bad_if_negative, P)[4].field == "items[4]"


def test_set_reports_duplicates_after_item_errors() -> None:
    errs = validate_set([1, -1, 1, 1], 10, bad_if_negative, lambda x: x, P)
    assert [(e.field, e.reason) for e in errs] == [
        ("items[1]", "FieldValueInvalid"),
        ("items[2]", "FieldValueDuplicate"),
        ("items[3]", "FieldValueDuplicate"),
    ]


def test_map_key_errors_at_map_path_item_errors_at_key() -> None:
    def key_check(key: str, path: Path) -> list[FieldError]:
        return [invalid(path, key, "bad key")] if key.startswith("x") else []

    errs = validate_map({"xa": 1, "b": -1}, -1, 96, key_check, bad_if_negative, P)
    assert [e.field for e in errs] == ["items", "items[b]"]
    assert [str(e) for e in validate_map({"a": 1, "b": 2}, 1, 96, key_check, bad_if_negative, P)] == [
        "items: Too many: 2: must have at most 1 item"
    ]


def test_truncation_keeps_both_ends() -> None:
    assert truncate_if_too_long("a" * 10, 96) == "a" * 10
    assert truncate_if_too_long("abcdefghijklmnopqrstuvwxyz", 4) == "abcdefg...uvwxyz"
