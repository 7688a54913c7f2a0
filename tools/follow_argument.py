"""Follow one argument of `laser mine` through every call it is handed to, and count the stops.

A stop is a function of laser/ entered with a followed value among its arguments (or its
closure's variables, or one level inside a tuple or list argument). Followed are `src` (an
EmbeddingSource), the fields that choose its model (its language, its own model, its
embeddings file) and whatever a stop returns (the side's request, its chosen model, its loader,
its origin...), except data (values holding numpy arrays: vectors, corpora) and encoders. The
walk ends at the encoder: a call handed an encoder (embedding text, whichever way its model was
chosen) is no stop, nor what it calls. A return upward is a stop called from a function of an
earlier stage (tests/test_layout.py's order; the CLI last), one count per caller and callee; a
stop reached through one (a function of a later stage below it on the stack) is counted apart.
Three runs are followed, their stops counted once: both sides by language, the source side
naming its model, text against precomputed embeddings. Run from the repository root:

    python tools/follow_argument.py            # follows `src` from mine_command
    python tools/follow_argument.py -v         # and lists the stops
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "laser"
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from test_layout import INTERFACES, STAGES  # noqa: E402  (the stages in order)

SENTENCES = ["Das Buch liegt auf dem Tisch.", "Wo ist der Bahnhof?", "Ich trinke gern Tee."]
TRANSLATIONS = ["The book is on the table.", "Where is the station?", "I like drinking tea."]


def stage_rank(path: str) -> int:
    """The position of a laser file's stage: shared modules first, the interfaces last."""
    parts = Path(path).relative_to(PACKAGE).with_suffix("").parts
    stage = parts[0]
    if stage in INTERFACES:
        return len(STAGES)
    return STAGES.index(stage) if stage in STAGES else -1


def holds_arrays(value, depth: int = 2) -> bool:
    """Whether `value` is, or directly holds, numpy arrays (data, not the side's description)."""
    if isinstance(value, np.ndarray):
        return True
    if depth and isinstance(value, (tuple, list)):
        return any(holds_arrays(item, depth - 1) for item in value)
    return depth > 0 and any(holds_arrays(item, depth - 1)
                             for item in getattr(value, "__dict__", {}).values())


def is_encoder(value) -> bool:
    """Whether `value` is an encoder (its class embeds sentences)."""
    return callable(getattr(type(value), "encode", None)) and hasattr(type(value), "dim")


def worth_following(value) -> bool:
    """Whether a value a stop returns is followed: no scalar, no path, no data, no encoder."""
    return not (value is None or isinstance(value, (str, int, float, bool, Path))
                or holds_arrays(value) or is_encoder(value))


class Follower:
    """The profile hook: the followed objects, the stops and the upward calls."""

    def __init__(self, start: str, name: str):
        self.start, self.name = start, name
        self.followed: dict[int, object] = {}
        self.stops: dict[tuple[str, str], None] = {}
        self.upward: dict[tuple[str, str], None] = {}
        self.through_upward: dict[tuple[str, str], None] = {}
        self.frames: set[int] = set()
        self.beyond: set[int] = set()  # frames handed an encoder, running now

    def follows(self, value) -> bool:
        if id(value) in self.followed:
            return True
        return isinstance(value, (tuple, list)) and any(id(v) in self.followed for v in value)

    def __call__(self, frame, event, arg):
        path = frame.f_code.co_filename
        if not path.startswith(str(PACKAGE)) or frame.f_code.co_name == "<module>":
            return
        if event == "call" and not self.beyond:
            self.enter(frame)
        elif event == "return" and id(frame) in self.beyond:
            self.beyond.discard(id(frame))
        elif event == "return" and id(frame) in self.frames:
            self.frames.discard(id(frame))
            for value in (arg, *(arg if isinstance(arg, (tuple, list)) else ())):
                if worth_following(value):
                    self.followed[id(value)] = value

    def enter(self, frame) -> None:
        code = frame.f_code
        if not self.followed:
            if code.co_name == self.start:
                side = frame.f_locals[self.name]
                for value in (side, side.lang, side.model, side.embeddings):
                    if value is not None:
                        self.followed[id(value)] = value
            return
        values = frame.f_locals.values()
        if any(map(is_encoder, values)):
            self.beyond.add(id(frame))
            return
        if not any(self.follows(value) for value in values):
            return
        self.frames.add(id(frame))
        where = str(Path(code.co_filename).relative_to(ROOT))
        self.stops.setdefault((where, code.co_qualname), None)
        callers = laser_callers(frame)
        if callers and stage_rank(callers[0].f_code.co_filename) < stage_rank(code.co_filename):
            self.upward.setdefault((callers[0].f_code.co_qualname,
                                    f"{where}:{code.co_qualname}"), None)
        ranks = [stage_rank(f.f_code.co_filename) for f in [frame, *callers]]
        if any(rank > min(ranks[index + 1:], default=rank) for index, rank in enumerate(ranks)):
            self.through_upward.setdefault((where, code.co_qualname), None)


def laser_callers(frame) -> list:
    """The frames of laser/ below `frame` on the stack, nearest first, down to mine_command."""
    callers = []
    frame = frame.f_back
    while frame is not None and not (callers and callers[-1].f_code.co_name == "mine_command"):
        if frame.f_code.co_filename.startswith(str(PACKAGE)):
            callers.append(frame)
        frame = frame.f_back
    return callers


def follow_mine(follower: Follower, tmp: Path, *options: str) -> None:
    """Run `laser mine` of two small files with `options`, following its `src`."""
    from click.testing import CliRunner
    from laser.cli import main
    result = CliRunner().invoke(main, ["embed", str(tmp / "en.txt"), "-l", "en", "-q",
                                       "-o", str(tmp / "en.npy")])
    args = ["mine", str(tmp / "de.txt"), str(tmp / "en.txt"), *options,
            "-o", str(tmp / "mined.tsv")]
    sys.setprofile(follower)
    try:
        result = CliRunner().invoke(main, args)
    finally:
        sys.setprofile(None)
    if result.exit_code:
        raise SystemExit(f"laser {' '.join(args)} failed: {result.output}")


# Both sides by language; the source side naming its model; text against embeddings.
SCENARIOS = (("--src-lang", "de", "--trg-lang", "en"),
             ("--src-lang", "de", "--trg-lang", "en", "--src-model", "default"),
             ("--src-lang", "de", "--trg-embeddings", "{tmp}/en.npy"))


def follow(verbose: bool) -> Follower:
    """The stops of `src` over every scenario."""
    follower = Follower("mine_command", "src")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "de.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
        (tmp / "en.txt").write_text("\n".join(TRANSLATIONS) + "\n", encoding="utf-8")
        for options in SCENARIOS:
            follower.followed.clear()
            follow_mine(follower, tmp, *(option.format(tmp=tmp) for option in options))
    return follower


def main() -> None:
    verbose = "-v" in sys.argv[1:]
    follower = follow(verbose)
    files = {where for where, _ in follower.stops}
    if verbose:
        for where, name in follower.stops:
            print(f"stop  {where}:{name}")
        for caller, callee in follower.upward:
            print(f"up    {caller} -> {callee}")
    print(f"{len(follower.stops)} stops in {len(files)} files, {len(follower.upward)} returns "
          f"upward, {len(follower.through_upward)} stops reached through one")


if __name__ == "__main__":
    main()
