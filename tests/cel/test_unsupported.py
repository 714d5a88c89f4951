"""CEL that Kubernetes accepts but draguard cannot evaluate is 'unsupported', never 'invalid'.

An 'invalid' verdict becomes a FieldValueInvalid denial; for these expressions that would be a
false rejection, so they get their own kind, which callers turn into a warning.
"""

from __future__ import annotations

import pytest
from draguard.cel import CompileFailure, compile_selector
from draguard.cel.selector import uses_optional_syntax


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["gpu.example.com"].?model.orValue("") == "a100"',
        'device.attributes[?"gpu.example.com"].hasValue()',
        '{?"a": optional.none()}.size() == 0',
        'ip("10.0.0.1").family() == 4',
        'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))',
        'url("https://example.com").getHost() == "example.com"',
    ],
)
def test_kubernetes_cel_draguard_cannot_evaluate_is_unsupported(expression: str) -> None:
    result = compile_selector(expression)
    assert isinstance(result, CompileFailure)
    assert result.kind == "unsupported"
    assert "not checked" in result.message


@pytest.mark.parametrize(
    "expression",
    ['device.driver == ".?"', "true ? false : true", 'device.driver == "a" ? true : false'],
)
def test_question_marks_in_strings_and_ternaries_are_not_optional_syntax(expression: str) -> None:
    assert not uses_optional_syntax(expression)
    assert not isinstance(compile_selector(expression), CompileFailure)


def test_real_syntax_errors_stay_invalid() -> None:
    result = compile_selector("device.driver ==")
    assert isinstance(result, CompileFailure) and result.kind == "invalid"
    result = compile_selector("frobnicate(device.driver)")
    assert isinstance(result, CompileFailure) and result.kind == "invalid"
