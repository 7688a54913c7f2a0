"""Progress bars on stderr, drawn with tqdm only where someone sees them: tqdm (with the
importlib.metadata it reads its version with) is a visible part of a short command's start-up,
so it is not imported when stderr is not a terminal or the user asked for quiet."""
from __future__ import annotations

import sys


class SilentBar:
    """A progress bar nobody sees: counts nothing, draws nothing."""

    def update(self, n: int = 1) -> None:
        """Nothing to draw."""

    def __enter__(self) -> "SilentBar":
        return self

    def __exit__(self, *exc_info) -> None:
        return None


def shows_progress(show: bool) -> bool:
    """Whether a bar asked for (`show`) can be seen: stderr is a terminal, as tqdm decides."""
    return show and sys.stderr.isatty()


def progress_bar(show: bool, **settings):
    """tqdm's bar on stderr with `settings` (total, unit, desc) where it can be seen, else a
    SilentBar."""
    if not shows_progress(show):
        return SilentBar()
    from tqdm import tqdm
    return tqdm(**settings, dynamic_ncols=True, leave=False)
