"""``draguard ui``: a local web page that shows the devices — capacity per class, pool and node,
which claim got which device, why pending pods and claims wait, the audit's findings — and a box
to paste a claim or workload into.  The figures are the commands' own (``capacity``,
``explain``, ``lint``, ``capacity --fit``); the page only draws them.  The picture comes from
files read once, or from the cluster followed by list+watch with the user's own credentials
(:mod:`.follow`, :class:`ClusterSource`).

An adapter at the top, like :mod:`app.server`: only ``draguard ui`` imports it, so a lint never
loads FastAPI, uvicorn or the page (tests/test_lazy.py).
"""

from .check import CheckError, check_paste
from .http import UiState, make_app
from .serve import DEFAULT_PORT, add_listen_arguments, serve_ui
from .source import ClusterSource, FileSource, Reading, SourceError
from .view import View, build_view

__all__ = [
    "DEFAULT_PORT",
    "CheckError",
    "ClusterSource",
    "FileSource",
    "Reading",
    "SourceError",
    "UiState",
    "View",
    "add_listen_arguments",
    "build_view",
    "check_paste",
    "make_app",
    "serve_ui",
]
