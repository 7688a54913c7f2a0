"""The sentences of an input's documents (`laser.io.documents`), each with its provenance (file,
document, paragraph, sentence): paragraphs split by `laser.text.sentences`, with lang `auto` in
each paragraph's identified language; and the sentence file that commands reading one sentence
a line take in place of documents."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Iterator, Optional

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..io.bad_lines import BadLines
from ..io.documents import Document, DocumentOptions, is_document_input, read_documents
from ..text.languages import AUTO

_FIELD_BREAKS = str.maketrans("\t\n\r", "   ")


@dataclass(frozen=True)
class Origin:
    """Where a sentence comes from: file, document name, 1-based paragraph of the document and
    1-based sentence of the paragraph."""

    file: str
    document: str
    paragraph: int
    sentence: int

    def fields(self) -> tuple[str, str, int, int]:
        return self.file, self.document, self.paragraph, self.sentence


@dataclass(frozen=True)
class Sentence:
    text: str
    origin: Origin

    def tsv(self) -> str:
        """The sentence and its provenance as a TSV line."""
        return "\t".join(field_text(str(value)) for value in (self.text, *self.origin.fields())) \
            + "\n"


def document_sentences(document: Document, options: DocumentOptions) -> Iterator[Sentence]:
    """The sentences of a document's paragraphs (each paragraph whole without `options.split`);
    blank paragraphs give none, an empty document none at all."""
    split = _splitter(options)
    for paragraph_number, paragraph in enumerate(document.paragraphs, 1):
        if not paragraph.strip():
            continue
        for number, text in enumerate(split(paragraph), 1):
            yield Sentence(text, Origin(document.file, document.name, paragraph_number, number))


def _splitter(options: DocumentOptions):
    """Splits a paragraph into sentences in `options.lang`; with lang `auto`, in the language
    identified for the paragraph (`und`: left whole)."""
    if not options.split:
        return lambda paragraph: [paragraph]
    from ..text.sentences import split_sentences
    if options.lang != AUTO:
        return lambda paragraph: split_sentences(paragraph, options.lang)
    from ..lid.model import UNDETERMINED, identifier

    def split(paragraph: str) -> list[str]:
        lang = identifier().best([paragraph])[0]
        return [paragraph] if lang == UNDETERMINED else split_sentences(paragraph, lang)
    return split


def read_sentences(spec: str, options: DocumentOptions = DocumentOptions(),
                   bad: Optional[BadLines] = None) -> Iterator[Sentence]:
    """The sentences of an input's documents with their provenance, in order (lines that are
    not UTF-8 text failed, skipped or replaced and counted by `bad`: `file_documents`)."""
    for document in read_documents(spec, options, bad):
        yield from document_sentences(document, options)


@contextmanager
def sentence_input(spec: str, options: DocumentOptions, workdir: Optional[str] = None,
                   sentences_out: Optional[str] = None,
                   bad: Optional[BadLines] = None) -> Iterator[str]:
    """A sentence file of an input for the commands that read one sentence a line: `spec`
    itself when it is one (and is not to be split), else a temporary file (in `workdir`,
    removed afterwards) of the sentences of its documents; `sentences_out` gets each of them
    with its provenance (TSV: sentence, file, document, paragraph, sentence number). Lines
    of documents that are not UTF-8 text are read as `bad` says (`read_sentences`)."""
    if not is_document_input(spec, options):
        if sentences_out:
            raise LaserError("--sentences-out goes with documents or --split-sentences")
        yield spec
        return
    with tempfile.TemporaryDirectory(prefix=".laser-sentences-", dir=workdir) as folder:
        path = os.path.join(folder, "sentences.txt")
        with open(path, "w", encoding="utf-8") as out, _origins_output(sentences_out) as origins:
            for sentence in read_sentences(spec, options, bad):
                out.write(f"{sentence.text}\n")
                if origins:
                    origins.write(sentence.tsv())
        yield path


def write_sentences(spec: str, output: str, options: DocumentOptions,
                    provenance: bool = False, bad: Optional[BadLines] = None) -> int:
    """Write the sentences of an input's documents to `output` (atomically), one a line (with
    `provenance`: as `Sentence.tsv` lines); how many (`bad`: as `read_sentences`)."""
    count = 0
    with atomic_text_output(output) as out:
        for sentence in read_sentences(spec, options, bad):
            out.write(sentence.tsv() if provenance else f"{sentence.text}\n")
            count += 1
    return count


def _origins_output(path: Optional[str]):
    return atomic_text_output(path) if path else nullcontext(None)


def field_text(text: str) -> str:
    """Text as one TSV field (tabs and line breaks as spaces)."""
    return text.translate(_FIELD_BREAKS)
