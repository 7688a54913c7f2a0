"""What an interrupted or failed run leaves in its work directory for the next run, found and
sized, so that the command can say so (a hidden folder of gigabytes is never left unmentioned)."""
from __future__ import annotations

import os
from pathlib import Path
from .shards import MANIFEST, read_json


def holds_finished_work(root: str | os.PathLike) -> bool:
    """Whether the manifest of `root` (`laser embed --ray`) or of a stage under it (`laser
    mine`) records a finished task, something the same command reuses."""
    root = Path(root)
    return any(read_json(path).get("done")
               for path in (root / MANIFEST, *root.glob(f"*/{MANIFEST}")))


def directory_bytes(root: str | os.PathLike) -> int:
    """The size of the files under `root`, in bytes."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass  # removed meanwhile
    return total
