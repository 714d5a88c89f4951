"""``python -m app`` is the same as the ``draguard`` console script."""

import sys

from app.cli import main

sys.exit(main())
