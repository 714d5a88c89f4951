"""The Kubernetes DRA CEL environment for device selectors.

Parsing uses cel-python's grammar (the plainest selectors are read by a small parser of their
own that builds the same tree, :mod:`app.cel.quickparse`, so that a lint of them never loads
Lark); type checking, cost estimation and result caching are draguard's own and
engine-independent; evaluation runs on cel-python's evaluator, behind the thin interface of
:mod:`app.cel.engines`.

Public interface (other draguard modules code against exactly this):

* :func:`compile_selector` → :class:`CompiledSelector` or :class:`CompileFailure`;
* :func:`make_device` → :class:`CelDevice` (build once per inventory change);
* :meth:`CompiledSelector.evaluate` → ``bool`` or :class:`CelRuntimeError` (never raises);
* :class:`SelectorOrigin` — whose selector it is (a class's or the request's), for messages.

See :mod:`app.cel.selector` for the caching and thread-safety model.
"""

from .device import LIST_KINDS, CelDevice, device_error, make_device
from .errors import CelRuntimeError, CompileFailure
from .origin import SelectorOrigin
from .selector import CompiledSelector, compile_selector

__all__ = ["LIST_KINDS", "CelDevice", "CelRuntimeError", "CompileFailure", "CompiledSelector", "SelectorOrigin", "compile_selector", "device_error", "make_device"]
