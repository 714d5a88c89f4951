"""No runs of Python's cyclic garbage collector while a large object tree is built.

Why: building an inventory (or linting a folder) allocates millions of dicts, lists and models
that all stay alive, and almost none of them is part of a reference cycle — they are trees, freed
by reference counting.  Every collection rescans the ever larger set of survivors to find next to
nothing: with the default thresholds ~40 % of the CPU time of ``draguard lint`` against 1,000
nodes; with raised thresholds (50,000 / 20 / 100, the previous design) still ~8 % of linting
10,000 objects — two dozen young-generation passes of 10–16 ms and one middle-generation pass of
~0.37 s over a million survivors, which together found ~100 cyclic objects.  So the collector is
paused for the block and resumed after it: what cyclic garbage the block leaves (a few hundred
objects in a 10,000-object lint) is freed by the first collection after it.

Its own top-level module, not part of :mod:`app.k8s`: ``draguard lint`` pauses the collector
before it imports the rest of draguard, whose import makes ~70 collections of its own.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["bulk_allocation"]


@contextmanager
def bulk_allocation() -> Iterator[None]:
    """Run the block with the cyclic collector paused, then put it back as it was found.

    Process-wide, as the collector is: in ``draguard serve`` it spans the start-up build only
    (bounded by the inventory), and requests served meanwhile leave their cycles for after it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
