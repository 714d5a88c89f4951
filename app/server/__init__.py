"""``draguard serve``: the HTTPS server (FastAPI on uvicorn) — webhook routes, ``/lint``, health,
metrics, TLS with certificate reload.  An adapter at the top: the CLI is its only importer.
"""

from .cli_serve import add_serve_arguments, run_serve

__all__ = ["add_serve_arguments", "run_serve"]
