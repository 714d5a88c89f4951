"""``python -m draguard`` is the same as the ``draguard`` console script."""

from .cli import entry

entry()
