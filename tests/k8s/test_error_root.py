"""One exception root: every public exception class of draguard derives from ``DraguardError``.

Left out on purpose (app/k8s/errors.py says why): ``BudgetExceeded`` (a BaseException, so no
``except Exception`` swallows the stop), the search's ``SearchAbort`` and private (``_``) signals.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import draguard
import pytest
from draguard.k8s import DraguardError, FeatureGateError, JsonError, QuantityError

OUTSIDE_THE_ROOT = {"BudgetExceeded", "SearchAbort"}


def exception_classes(package: object) -> dict[str, type[BaseException]]:
    """Public exception classes defined in ``package``'s modules, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    path = package.__path__  # type: ignore[attr-defined]
    for info in pkgutil.walk_packages(path, prefix=f"{package.__name__}."):  # type: ignore[attr-defined]
        if info.name.endswith(".__main__"):
            continue  # running it is the command line
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            public = not name.startswith("_") and inspect.isclass(obj) and obj.__module__ == module.__name__
            if public and issubclass(obj, BaseException):
                found[f"{module.__name__}.{name}"] = obj
    return found


def outside_the_root(classes: dict[str, type[BaseException]]) -> list[str]:
    return sorted(
        q for q, c in classes.items() if not issubclass(c, DraguardError) and c.__name__ not in OUTSIDE_THE_ROOT
    )


def test_every_public_exception_derives_from_the_root() -> None:
    classes = exception_classes(draguard)
    assert len(classes) >= 20
    assert outside_the_root(classes) == []


def test_a_class_outside_the_root_is_found() -> None:
    class Stray(ValueError):
        pass

    assert outside_the_root({"x.Stray": Stray, "x.Q": QuantityError}) == ["x.Stray"]


@pytest.mark.parametrize("cls", [QuantityError, FeatureGateError, JsonError])
def test_value_errors_stay_value_errors(cls: type[Exception]) -> None:
    assert issubclass(cls, ValueError) and issubclass(cls, DraguardError)
