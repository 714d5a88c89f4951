"""The plain selectors answered without cel-python (app/cel/plain.py): where they answer, the
answer is cel-python's; where they are not sure, cel-python answers."""

from __future__ import annotations

import pytest
from draguard.cel import celpy_engine
from draguard.cel.engines import CelPythonEngine, DeferredProgram
from draguard.cel.selector import CompiledSelector, _compile

from .test_engine_differential import SELECTORS, _devices

G = 'device.attributes["gpu.example.com"]'
PLAIN = [
    'device.driver == "gpu.example.com"', 'device.driver != "gpu.example.com"', '"gpu.example.com" == device.driver',
    f'{G}.model == "a100"', f'{G}.index == 3', f'{G}.healthy == true', f'{G}.healthy != false',
    'device.driver == "gpu.example.com" && device.allowMultipleAllocations',
    f'!({G}.model == "h100") || device.allowMultipleAllocations == false',
    'device.attributes["x.example.com"].name == "atlas"', f'{G}.model == 1', f'{G}.nope == "x"',
    'device.attributes["no.such"].x == 1', f'{G}.driverVersion == "1.2.3"', f'{G}.a == 1 || {G}.b == 2',
]


def _prepared(expression: str) -> DeferredProgram:
    compiled = _compile(expression, True, CelPythonEngine())
    assert isinstance(compiled, CompiledSelector), compiled
    prepared = compiled._prepared
    assert isinstance(prepared, DeferredProgram)
    return prepared


@pytest.mark.parametrize("expression", PLAIN)
def test_plain_shapes_are_read_as_plain(expression: str) -> None:
    assert _prepared(expression).plain is not None


@pytest.mark.parametrize("expression", [f'{G}.model.startsWith("a")', f'{G}.index > 1', f'has({G}.model)',
                                        f'"model" in {G} && {G}.model == "a100"', f'{G}.index == 3.0', "true"])
def test_anything_else_is_cel_pythons(expression: str) -> None:
    assert _prepared(expression).plain is None


@pytest.mark.parametrize("expression", sorted(set(SELECTORS + PLAIN)))
def test_where_the_plain_reader_answers_cel_python_answers_the_same(expression: str) -> None:
    compiled = _compile(expression, True, CelPythonEngine())
    if not isinstance(compiled, CompiledSelector) or compiled._prepared.plain is None:
        return
    prepared = compiled._prepared
    answered = 0
    for name, device in _devices().items():
        if device.error is not None:
            continue  # never evaluated: every selector fails on such a device before any engine runs
        got = prepared.plain(device)
        if got is None:
            continue
        answered += 1
        assert celpy_engine.run(prepared.program(), device) is got, (expression, name)
    if expression in PLAIN[:10]:
        assert answered, expression  # the shapes it exists for are answered on some device
