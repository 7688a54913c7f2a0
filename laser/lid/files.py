"""`laser lid` as a library call: each line of a file with its likeliest languages, streamed."""
from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Iterable, Optional, TextIO

from ..io.atomic import atomic_text_output
from ..io.text import batched, check_input, count_lines, read_lines
from ..progress import progress_bar, shows_progress
from .model import Guess, identifier


@dataclass(frozen=True)
class LidOptions:
    """How `identify_file` runs: which model (None: the shipped one), how many guesses a line."""

    model: Optional[str] = None
    top: int = 1
    batch_lines: int = 20000
    progress: bool = True


@dataclass(frozen=True)
class LidReport:
    lines: int
    seconds: float
    model: str

    def summary(self) -> str:
        rate = self.lines / self.seconds if self.seconds else 0.0
        return f"identified {self.lines} lines in {self.seconds:.1f}s ({rate:,.0f} lines/s)"


def format_guesses(codes: list[str], probabilities: list[float]) -> str:
    """`fra_Latn<TAB>0.9876`, then the next guesses' codes and probabilities on the same line."""
    if len(codes) == 1:
        return f"{codes[0]}\t{probabilities[0]:.4f}"
    return "\t".join(f"{code}\t{probability:.4f}" for code, probability in zip(codes, probabilities))


def identify_file(input_path: str, output_path: str,
                  options: LidOptions = LidOptions()) -> LidReport:
    """Write the likeliest languages of each line of `input_path` ('-': stdin) to `output_path`
    ('-': stdout; a file appears only when complete), one line per input line."""
    check_input(input_path)
    model = identifier(options.model)
    started = time.perf_counter()
    total = count_lines(input_path) if shows_progress(options.progress) else None
    lines = 0
    with atomic_text_output(output_path) as out, progress_bar(
            options.progress, total=total, unit=" lines", desc="lid") as bar:
        for batch in batched(read_lines(input_path), options.batch_lines):
            write_batch(out, *model.ranked(batch, options.top))
            lines += len(batch)
            bar.update(len(batch))
    return LidReport(lines, time.perf_counter() - started, str(model.path))


def write_batch(out: TextIO, codes: list[list[str]], probabilities: list[list[float]]) -> None:
    out.write("".join(format_guesses(line_codes, line_probabilities) + "\n"
                      for line_codes, line_probabilities in zip(codes, probabilities)))


def languages_output(path: Optional[str]) -> AbstractContextManager[Optional[TextIO]]:
    """A file for `write_batch` at `path` that appears only when complete (`--lang-out`); None
    without a path."""
    return atomic_text_output(path) if path else nullcontext()


def identify(lines: Iterable[str], model: Optional[str] = None, top: int = 1) -> list[list[Guess]]:
    """The `top` likeliest languages of each line (FLORES-200 codes with probabilities)."""
    return identifier(model).identify(list(lines), top)
