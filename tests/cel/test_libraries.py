"""Ports of Kubernetes' quantity_test.go / semver_test.go plus accept/reject rows per function."""

from __future__ import annotations

import itertools
import math

import pytest
from draguard.cel.semver import Semver, SemverError, parse_semver
from draguard.k8s.quantity import Quantity, parse_quantity

from .helpers import compile_errors, runtime_error, value

QUANTITY_VALUES = [
    ('quantity("12Mi")', parse_quantity("12Mi")),
    ('isQuantity("20")', True), ('isQuantity("20M")', True), ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False), ('isQuantity("10Mm")', False),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    ('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")', True),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True), ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True), ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0), ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True), ('quantity("1.5").isInteger()', False),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
    ('sign(quantity("-3"))', -1), ('sign(quantity("0"))', 0), ('sign(quantity("2Gi"))', 1),
]


@pytest.mark.parametrize(("expr", "expected"), QUANTITY_VALUES)
def test_quantity_library(expr: str, expected: object) -> None:
    got = value(expr)
    assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize(("expr", "message"), [
    ('quantity("10Mo")', "quantities must match the regular expression"),
    ('quantity("10Mm")', "unable to parse quantity's suffix"),
    ('quantity("9999999999999999999999999999999999999G").asInteger()', "cannot convert value to integer"),
    ('quantity("1.5").asInteger()', "cannot convert value to integer"),
])
def test_quantity_runtime_errors(expr: str, message: str) -> None:
    assert message in runtime_error(expr)


@pytest.mark.parametrize(("expr", "message"), [
    ("isQuantity([1, 2, 3])", "found no matching overload for 'isQuantity' applied to '(list(int))'"),
    ('quantity("1").sign()', "found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'"),
    ('quantity("1").compareTo(semver("1.0.0")) == 0',
     "found no matching overload for 'compareTo' applied to 'kubernetes.Quantity.(kubernetes.Semver)'"),
    ('quantity("1").add(1.5)', "found no matching overload for 'add' applied to 'kubernetes.Quantity.(double)'"),
    ('quantity(1)', "found no matching overload for 'quantity' applied to '(int)'"),
    ('quantity("1") < quantity("2")', "found no matching overload for '_<_'"),
])
def test_quantity_compile_errors(expr: str, message: str) -> None:
    assert any(message in m for m in compile_errors(expr)), compile_errors(expr)


SEMVER_VALUES = [
    ('semver("1.2.3")', parse_semver("1.2.3")),
    ('isSemver("1.2.3-beta.1+build.1")', True), ('isSemver("")', False), ('isSemver("v1.0.0")', False),
    ('isSemver(" 1.0.0")', False), ('isSemver("1. 0.0")', False), ('isSemver("1.0.0 ")', False),
    ('isSemver("01.01.01")', False), ('isSemver("1")', False), ('isSemver("1.1")', False),
    ('isSemver("", true)', False), ('isSemver(" 1.0.0", true)', False), ('isSemver("1. 0.0", true)', False),
    ('isSemver("1.0.0 ", true)', False), ('isSemver("v1.0.0", true)', True), ('isSemver("01.01.01", true)', True),
    ('isSemver("1", true)', True), ('isSemver("1.1", true)', True), ('isSemver("1.1-rc", true)', False),
    ('semver("v01.01", true) == semver("1.1.0")', True),
    ('semver("1.2.3") == semver("1.2.3")', True), ('semver("1.2.3") == semver("1.0.0")', False),
    ('semver("1.0.0+a") == semver("1.0.0+b")', True),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', True), ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True), ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', 0), ('semver("1.0.0").compareTo(semver("1.2.3"))', -1),
    ('semver("1.2.3").compareTo(semver("1.0.0"))', 1),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))', True),
    ('semver("1.0.0-alpha.beta").isGreaterThan(semver("1.0.0-alpha.1"))', True),
    ('semver("1.2.3").major()', 1), ('semver("1.2.3").minor()', 2), ('semver("1.2.3").patch()', 3),
]


@pytest.mark.parametrize(("expr", "expected"), SEMVER_VALUES)
def test_semver_library(expr: str, expected: object) -> None:
    got = value(expr)
    assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize(("expr", "message"), [
    ('semver("v1.0")', "No Major.Minor.Patch elements found"),
    ('semver("1.0.0-01")', 'Version contains leading zeroes: "01"'),
    ('semver("1.0.0+")', "Build meta data is empty"),
    ('semver("1.0", true) == semver("1.0-rc", true)', "short version cannot contain PreRelease/Build meta data"),
])
def test_semver_runtime_errors(expr: str, message: str) -> None:
    assert message in runtime_error(expr)


def test_semver_compile_errors() -> None:
    assert any("found no matching overload for 'isSemver' applied to" in m for m in compile_errors("isSemver([1, 2, 3])"))
    assert any("'major' applied to 'kubernetes.Quantity.()'" in m for m in compile_errors('quantity("1").major()'))


def test_semver_precedence_chain() -> None:
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
             "1.0.0-rc.1", "1.0.0"]
    versions = [parse_semver(v) for v in chain]
    assert all(a.compare(b) == -1 for a, b in itertools.pairwise(versions))
    assert str(parse_semver("01.02.03-rc.1+b", True)) == "1.2.3-rc.1+b"
    assert isinstance(parse_semver("1.2.3"), Semver)
    with pytest.raises(SemverError):
        parse_semver("18446744073709551616.0.0")


STANDARD = [
    ('"abc".contains("b") && "abc".startsWith("a") && "abc".endsWith("c")', True),
    ('"abc".matches("^a.c$") && matches("abc", "b")', True),
    ('"abc".matches("^b")', False),
    ('"abc 123".find("[0-9]+")', "123"), ('"abc".find("[0-9]+")', ""),
    ('"a1b22c333".findAll("[0-9]+")', ["1", "22", "333"]), ('"a1b22c333".findAll("[0-9]+", 2)', ["1", "22"]),
    ('"Hello".lowerAscii() + "hello".upperAscii()', "helloHELLO"),
    ('"a,b,c".split(",")', ["a", "b", "c"]), ('"a,b,c".split(",", 2)', ["a", "b,c"]),
    ('"hello".substring(1, 3)', "el"), ('"hello".charAt(1)', "e"), ('"hello".indexOf("l")', 2),
    ('"hello".lastIndexOf("l")', 3), ('" x ".trim()', "x"), ('"aaa".replace("a", "b", 2)', "bba"),
    ('["a", "b"].join("-")', "a-b"),
    ("[1, 2, 3].isSorted() && ![3, 1].isSorted()", True), ("[1, 2, 3].sum()", 6), ("[3, 1, 2].min()", 1),
    ("[3, 1, 2].max()", 3), ("[1, 2, 3].indexOf(2)", 1), ("[1, 2, 1].lastIndexOf(1)", 2),
    ("[1, 2, 3, 4].slice(1, 3)", [2, 3]), ("[[1], [2, 3]].flatten()", [1, 2, 3]), ("[1, 2, 1].distinct()", [1, 2]),
    ("[3, 1, 2].sort()", [1, 2, 3]),
    ("sets.contains([1, 2, 3], [1, 2]) && !sets.contains([1], [2])", True),
    ("sets.equivalent([1, 2], [2, 1, 1]) && sets.intersects([1, 2], [2, 3]) && !sets.intersects([1], [2])", True),
    ("cel.bind(x, 2, x * x) == 4", True),
    ("[1, 2, 3].map(x, x * 2)", [2, 4, 6]), ("[1, 2, 3].filter(x, x > 1)", [2, 3]),
    ("[1, 2, 3].map(x, x > 1, x * 10)", [20, 30]),
    ("[1, 2, 3].exists_one(x, x == 2)", True),
    ('{"a": 1, "b": 2}.all(k, v, v > 0)', True), ('{"a": 1}.exists(k, v, k == "a" && v == 1)', True),
    ("[10, 20].transformList(i, v, i + v)", [10, 21]), ('{"a": 1}.transformMap(k, v, v + 1)', {"a": 2}),
    ("1 < 1.5 && 2u > 1 && 1.0 <= 1", True),
    ("dyn(1) == 1.0 && dyn(1u) == 1", True), ('dyn("a100") == 1', False), ("dyn([1]) == [1.0]", True),
    ("int('42') + int(3.9) + int(7u)", 52), ("double(1) + double('0.5')", 1.5), ("string(1.5) + string(true)", "1.5true"),
    ("size('héllo') == 5 && size([1, 2]) == 2 && 'ab'.size() == 2", True),
    ("type(1) == int && type('a') == string", True),
    ("-7 / 2 == -3 && -7 % 3 == -1", True),
    ("has({'a': 1}.a) && !has({'a': 1}.b)", True),
    ("true ? 1 : 2", 1),
]


@pytest.mark.parametrize(("expr", "expected"), STANDARD)
def test_standard_and_extension_functions(expr: str, expected: object) -> None:
    got = value(expr)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(("expr", "message"), [
    ("9223372036854775807 + 1", "integer overflow"),
    ("1 / 0", "division by zero"),
    ("1 % 0", "modulus by zero"),
    ("0u - 1u", "unsigned integer overflow"),
    ("[1, 2][5]", "index out of bounds: 5"),
    ('{"a": 1}["b"]', "no such key: b"),
    ('"abc".matches("[")', "error parsing regexp"),
    ("int('x')", "cannot convert string 'x' to int"),
    ("[].min()", "min(list) called on empty list"),
    ("dyn(1) < dyn('a')", "no such overload"),
    ("dyn(quantity('1')) > dyn(quantity('2'))", "no such overload"),
    ("dyn('a').compareTo(dyn(1))", "no such overload"),
])
def test_runtime_errors(expr: str, message: str) -> None:
    assert message in runtime_error(expr)


@pytest.mark.parametrize(("expr", "message"), [
    ("1 + 2u == 3u", "found no matching overload for '_+_' applied to '(int, uint)'"),
    ("1 == 1.0", "found no matching overload for '_==_' applied to '(int, double)'"),
    ("[1, 'a'].size() == 2", "expected type 'int' but found 'string'"),
    ("'abc'.nosuch()", "undeclared reference to 'nosuch' (in container '')"),
    ("ip('1.2.3.4') == ip('1.2.3.4')", "function 'ip' of the Kubernetes CEL environment is not supported by draguard"),
    ("(1).all(x, x)", "cannot be range of a comprehension"),
    ("[1].all(x, x)", "found no matching overload for '_&&_' applied to '(bool, int)'"),
    ("'a'.b", "type 'string' does not support field selection"),
])
def test_type_errors(expr: str, message: str) -> None:
    errors = compile_errors(expr)
    assert any(message in m for m in errors), errors


def test_quantity_values_are_exact() -> None:
    q = value('quantity("1Ki").add(quantity("1m"))')
    assert isinstance(q, Quantity) and q.nanos == 1024 * 10**9 + 10**6
    assert math.isclose(value('quantity("10000").asApproximateFloat()'), 10000.0)
