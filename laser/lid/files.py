"""`laser lid` as a library call: each line of a file with its likeliest languages, streamed."""
from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Iterable, Optional, TextIO

from ..io.atomic import atomic_text_output
from ..io.bad_lines import BadLines
from ..io.sources import read_line_blocks
from ..io.text import check_input, count_lines
from ..progress import progress_bar, shows_progress
from .model import Guess, Guesses, identifier


@dataclass(frozen=True)
class LidOptions:
    """How `identify_file` runs: which model (None: the shipped one), how many guesses a line,
    the least probability of a guess (a line left without one: `und`) and what becomes of lines
    that are not UTF-8 text (`bad_lines`, which counts them)."""

    model: Optional[str] = None
    top: int = 1
    progress: bool = True
    min_prob: float = 0.0
    bad_lines: BadLines = field(default_factory=BadLines)


@dataclass(frozen=True)
class LidReport:
    lines: int
    seconds: float
    model: str

    def summary(self) -> str:
        rate = self.lines / self.seconds if self.seconds else 0.0
        return f"identified {self.lines} lines in {self.seconds:.1f}s ({rate:,.0f} lines/s)"


def identify_file(input_path: str, output_path: str,
                  options: LidOptions = LidOptions()) -> LidReport:
    """Write the likeliest languages of each line of `input_path` ('-': stdin) to `output_path`
    ('-': stdout; a file appears only when complete), one line per input line (per line kept,
    when `options.bad_lines` skips those that are not UTF-8 text)."""
    check_input(input_path)
    model = identifier(options.model)
    started = time.perf_counter()
    total = count_lines(input_path) if shows_progress(options.progress) else None
    lines = 0
    with atomic_text_output(output_path) as out, progress_bar(
            options.progress, total=total, unit=" lines", desc="lid") as bar:
        for text, count in read_line_blocks(input_path, options.bad_lines):  # a block at a time
            out.write(model.guesses(text, count, options.top, options.min_prob).tsv())
            lines += count
            bar.update(count)
    return LidReport(lines, time.perf_counter() - started, str(model.path))


def write_batch(out: TextIO, codes: list[list[str]], probabilities: list[list[float]]) -> None:
    """Guesses (`Ranked`) as `laser lid` writes them."""
    out.write(Guesses.of(codes, probabilities).tsv())


def languages_output(path: Optional[str]) -> AbstractContextManager[Optional[TextIO]]:
    """A file for `write_batch` at `path` that appears only when complete (`--lang-out`); None
    without a path."""
    return atomic_text_output(path) if path else nullcontext()


def identify(lines: Iterable[str], model: Optional[str] = None, top: int = 1,
             min_prob: float = 0.0) -> list[list[Guess]]:
    """The `top` likeliest languages of each line (FLORES-200 codes with probabilities), those
    of probability `min_prob` or more (a line left without any: `und`)."""
    return identifier(model).identify(list(lines), top, min_prob)
