"""The one folder where draguard may keep what it derived from its inputs between runs.

Why one place and one rule for every disk cache (the CEL grammar's Lark tables, built file
inventories): what is kept there is a pickle, and unpickling runs code, so a folder is used only
when it is ours alone.  ``DRAGUARD_CACHE_DIR`` sets the folder (``off``: no disk cache at all);
by default it is ``draguard-cache/`` under the temporary folder.  A folder that cannot be made or
written (a read-only root filesystem), or that someone else owns or may write to, turns every
disk cache off: a cache is only ever a shortcut, never needed for an answer.
"""

from __future__ import annotations

import os
import tempfile

__all__ = ["CACHE_DIR_ENV", "cache_folder"]

CACHE_DIR_ENV = "DRAGUARD_CACHE_DIR"


def cache_folder() -> str | None:
    """The trusted cache folder (made with mode 0700 when missing), or ``None`` when caching is off."""
    setting = os.environ.get(CACHE_DIR_ENV, "")
    if setting == "off":
        return None
    folder = setting or os.path.join(tempfile.gettempdir(), "draguard-cache")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.stat(folder)
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o022 or not os.access(folder, os.W_OK | os.X_OK):
        return None
    return folder
