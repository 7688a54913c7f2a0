"""Progress bars on stderr, drawn with tqdm only where someone sees them: tqdm (with the
importlib.metadata it reads its version with) is a visible part of a short command's start-up,
so it is not imported when stderr is not a terminal or the user asked for quiet. Where no bar
can be drawn, long jobs of a few big tasks (the shards of `laser mine`) say where they are in
plain lines (`task_progress`)."""
from __future__ import annotations

import sys
import time


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


# A plain progress line at most this often (and always at the end), where no bar can be drawn.
PLAIN_EVERY_SECONDS = 10.0


class PlainProgress:
    """Progress where no bar can be drawn (stderr a file or a pipe): one line now and then, and
    one when all is done (unless that was one task of a moment): `laser: mine src-embed: 3/10
    shards, 0.52 shards/s, 0:13 left`."""

    def __init__(self, desc: str, total: int, unit: str, every: float = PLAIN_EVERY_SECONDS):
        self.desc, self.total, self.unit, self.every = desc, total, unit, every
        self.done = 0
        self.started = self.said = time.monotonic()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        finished = self.done >= self.total and (self.total > 1 or now - self.started >= self.every)
        if finished or now - self.said >= self.every:
            self.said = now
            print(self.line(now - self.started), file=sys.stderr, flush=True)

    def line(self, elapsed: float) -> str:
        """The state after `elapsed` seconds: done of all, rate and time left (or taken)."""
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if self.done >= self.total:
            timing = f"done in {clock(elapsed)}"
        else:
            left = (self.total - self.done) / rate if rate else None
            timing = f"{clock(left)} left" if left is not None else "time left unknown"
        return (f"laser: {self.desc}: {self.done}/{self.total} {self.unit}s, "
                f"{rate:.3g} {self.unit}s/s, {timing}")

    def __enter__(self) -> "PlainProgress":
        return self

    def __exit__(self, *exc_info) -> None:
        return None


def clock(seconds: float) -> str:
    """Seconds as a clock reads, as tqdm shows them: `0:07`, `12:30`, `1:02:03`."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def task_progress(show: bool, desc: str, total: int, unit: str = "shard"):
    """Progress through `total` tasks on stderr unless `show` is off: tqdm's bar on a terminal,
    plain lines otherwise (`PlainProgress`)."""
    if not show:
        return SilentBar()
    if not sys.stderr.isatty():
        return PlainProgress(desc, total, unit)
    from tqdm import tqdm
    return tqdm(total=total, unit=unit, desc=desc, dynamic_ncols=True, leave=False)
