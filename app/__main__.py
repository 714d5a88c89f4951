"""``python -m app`` is the same as the ``draguard`` console script."""

from app.cli import entry

entry()
