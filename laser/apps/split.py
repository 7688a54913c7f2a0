"""`laser split` as a library call: each line of a file (a paragraph or a document) as its
sentences, one a line, streamed."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..io.bad_lines import BadLines
from ..io.text import batched, check_input, count_lines, read_lines
from ..progress import progress_bar, shows_progress
from ..text.languages import AUTO, UnknownLanguage, resolve
from ..text.sentences import split_sentences

BATCH = 1000  # lines identified at a time with --lang auto


@dataclass(frozen=True)
class SplitOptions:
    """How `split_file` runs: the language (`auto`: each line's own, identified), whether each
    sentence is prefixed by its input line's number, which language-ID model for `auto`, what
    becomes of lines that are not UTF-8 text (`bad_lines`: fail, skip or replace)."""

    lang: str
    with_line: bool = False
    lid_model: Optional[str] = None
    progress: bool = True
    bad_lines: BadLines = field(default_factory=BadLines)


@dataclass(frozen=True)
class SplitReport:
    lines: int
    sentences: int
    seconds: float

    def summary(self) -> str:
        return (f"split {self.lines} lines into {self.sentences} sentences in "
                f"{self.seconds:.1f}s")


def split_file(input_path: str, output_path: str, options: SplitOptions) -> SplitReport:
    """Write the sentences of each line of `input_path` ('-': stdin) to `output_path` ('-':
    stdout; a file appears only when complete), one a line, in order."""
    check_input(input_path)
    if options.with_line and options.bad_lines.policy == "skip":
        raise LaserError("--bad-lines skip with --with-line would number the lines kept, not "
                         "the input's: use --bad-lines replace")
    if options.lang != AUTO:
        resolve(options.lang)  # an unknown language is refused before anything is read
    started, lines, sentences = time.perf_counter(), 0, 0
    total = count_lines(input_path) if shows_progress(options.progress) else None
    with atomic_text_output(output_path) as out, progress_bar(
            options.progress, total=total, unit=" lines", desc="split") as bar:
        for batch in batched(read_lines(input_path, options.bad_lines), BATCH):
            for line, lang in zip(batch, _languages(batch, options)):
                lines += 1
                prefix = f"{lines}\t" if options.with_line else ""
                for sentence in split_sentences(line, lang):
                    out.write(f"{prefix}{sentence}\n")
                    sentences += 1
            bar.update(len(batch))
    return SplitReport(lines, sentences, time.perf_counter() - started)


def _languages(batch: list[str], options: SplitOptions) -> Iterator[str]:
    """Each line's language: the one given, or with `auto` the one identified."""
    if options.lang != AUTO:
        return iter([options.lang] * len(batch))
    from ..lid.model import identifier
    return map(_known, identifier(options.lid_model).best(batch))


def _known(code: str) -> str:
    """An identified code the splitter knows, else `und` (its rules for every language)."""
    try:
        resolve(code)
    except UnknownLanguage:
        return "und"
    return code
