"""The shard tasks of the cleaning stage (`laser prepare`, and `laser mine` over documents), a
task a file, idempotent, picklable and free of Ray as `laser mine`'s (`mine_tasks`):

1. `CleanFile` reads a file's documents, splits their paragraphs into sentences, normalises them
   and applies the sentence filters, writing the candidates with their provenance; for the
   boilerplate filter it also counts, for each paragraph of a document with a URL, the documents
   of its site holding it, in 16 partitions by key.
2. `ResolveBoilerplate` sums one partition's counts over every file: the keys of paragraphs in
   `boilerplate` documents of one site or more.
3. `FilterFile` drops a file's candidates of boilerplate paragraphs, then those that language
   ID does not find in the language, and writes the sentences (one a line) and their provenance
   (a TSV line each: file, document, paragraph, sentence)."""
from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Optional
from urllib.parse import urlsplit

import numpy as np

from ..cleaning.filters import CleaningOptions, first_filter, language_kept, normalize
from ..cleaning.sentences import document_sentences, field_text
from ..io.atomic import atomic_text_output
from ..io.bad_lines import BadLines
from ..io.documents import Document, DocumentOptions, file_documents
from ..io.embeddings import save_array
from ..io.sources import file_lines
from ..io.text import batched
from ..text.dedup import normalize_for_dedup
from .mine_tasks import load

PARTITION_BITS = 4
PARTITIONS = 1 << PARTITION_BITS
NO_SITE = "-"  # the boilerplate key of a candidate whose document has no URL
LID_BATCH = 8192
# What a CleanFile's record says of its lines that are not UTF-8 text: how many were skipped or
# replaced, and the first few.
BAD_LINES, BAD_NAMED = "bad_lines", "bad_named"


def paragraph_key(site: str, paragraph: str) -> int:
    """A 64-bit key of a paragraph (normalised as duplicates are) on a site."""
    text = f"{site}\n{normalize_for_dedup(paragraph)}".encode("utf-8")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def site_of(document: Document) -> Optional[str]:
    """The host of a document's URL (None: no URL, or none that names a host)."""
    if not document.url:
        return None
    try:
        return urlsplit(document.url).hostname
    except ValueError:
        return None


def sentences_path(directory: str, index: int) -> str:
    return os.path.join(directory, f"sentences-{index:06d}.txt")


def origins_path(directory: str, index: int) -> str:
    return os.path.join(directory, f"origins-{index:06d}.tsv")


@dataclass(frozen=True)
class CleanFile:
    """Read, split, normalise and filter the sentences of one file (see the module)."""

    name: str
    path: str
    prefix: str
    documents: DocumentOptions
    cleaning: CleaningOptions

    def outputs(self) -> list[str]:
        keys = range(PARTITIONS) if self.cleaning.boilerplate else ()
        return [f"{self.prefix}candidates.tsv", *map(self.keys_path, keys)]

    def keys_path(self, part: int) -> str:
        return f"{self.prefix}keys-{part:x}.npy"

    def run(self) -> dict:
        counts: Counter = Counter()
        keys: list[np.ndarray] = []
        bad = BadLines(self.documents.bad_lines, "--bad-lines")
        with atomic_text_output(f"{self.prefix}candidates.tsv") as out:
            for document in file_documents(self.path, self.documents, bad):
                out.writelines(self._candidates(document, counts, keys))
        if self.cleaning.boilerplate:
            self._save_keys(keys)
        return {**counts, BAD_LINES: bad.count, BAD_NAMED: bad.named}

    def _candidates(self, document: Document, counts: Counter,
                    keys: list[np.ndarray]) -> Iterator[str]:
        """A document's candidate lines: key, sentence and provenance, tab-separated."""
        counts["documents"] += 1
        counts["paragraphs"] += sum(1 for paragraph in document.paragraphs if paragraph.strip())
        paragraph_keys = self._paragraph_keys(document)
        name = field_text(document.name)
        empty = True
        for sentence in document_sentences(document, self.documents):
            empty = False
            counts["sentences"] += 1
            text = normalize(sentence.text)
            removed = first_filter(text, self.cleaning)
            if removed:
                counts[f"removed_{removed}"] += 1
                continue
            origin = sentence.origin
            key = NO_SITE if paragraph_keys is None else f"{paragraph_keys[origin.paragraph]:x}"
            yield (f"{key}\t{text}\t{field_text(origin.file)}\t{name}\t{origin.paragraph}\t"
                   f"{origin.sentence}\n")
        counts["empty_documents"] += empty
        if paragraph_keys is not None:
            distinct = set(paragraph_keys.values())  # a document counts once per paragraph
            keys.append(np.fromiter(distinct, dtype=np.uint64, count=len(distinct)))

    def _paragraph_keys(self, document: Document) -> Optional[dict[int, int]]:
        """The boilerplate key of each (1-based) non-blank paragraph of a document of a site;
        None without the filter or a site."""
        site = site_of(document) if self.cleaning.boilerplate else None
        if site is None:
            return None
        return {number: paragraph_key(site, paragraph)
                for number, paragraph in enumerate(document.paragraphs, 1) if paragraph.strip()}

    def _save_keys(self, keys: list[np.ndarray]) -> None:
        """Each paragraph key with the number of this file's documents holding it, by
        partition (the key's top bits), sorted by key."""
        found, docs = np.unique(np.concatenate(keys) if keys else np.zeros(0, np.uint64),
                                return_counts=True)
        part = found >> np.uint64(64 - PARTITION_BITS)
        for index in range(PARTITIONS):
            chosen = part == index
            save_array(self.keys_path(index), np.stack([found[chosen],
                                                        docs[chosen].astype(np.uint64)], axis=1))


@dataclass(frozen=True)
class ResolveBoilerplate:
    """The paragraph keys of one partition found in `threshold` documents of a site or more,
    over every file (`parts`: each file's keys file of this partition)."""

    name: str
    parts: tuple[str, ...]
    threshold: int
    output: str

    def outputs(self) -> list[str]:
        return [self.output]

    def run(self) -> dict:
        tables = [np.asarray(load(path)) for path in self.parts]
        table = np.concatenate(tables) if tables else np.zeros((0, 2), np.uint64)
        keys, inverse = np.unique(table[:, 0], return_inverse=True)
        docs = np.bincount(inverse, weights=table[:, 1], minlength=len(keys))
        repeated = keys[docs >= self.threshold]
        save_array(self.output, repeated)
        return {"keys": int(len(repeated))}


@dataclass(frozen=True)
class FilterFile:
    """A file's candidates without boilerplate (`boilerplate`: the resolved key files, empty
    without the filter) and, with language ID, without sentences of other languages: its
    sentences file and provenance file."""

    name: str
    candidates: str
    boilerplate: tuple[str, ...]
    cleaning: CleaningOptions
    directory: str
    index: int

    def outputs(self) -> list[str]:
        return [sentences_path(self.directory, self.index),
                origins_path(self.directory, self.index)]

    def run(self) -> dict:
        repeated = (np.concatenate([np.asarray(load(path)) for path in self.boilerplate])
                    if self.boilerplate else np.zeros(0, np.uint64))
        counts: Counter = Counter()
        with atomic_text_output(self.outputs()[0]) as texts, \
                atomic_text_output(self.outputs()[1]) as origins:
            for batch in batched(file_lines(self.candidates), LID_BATCH):
                fields = [line.split("\t", 2) for line in batch]
                kept = self._kept(fields, repeated, counts)
                texts.writelines(f"{fields[i][1]}\n" for i in kept)
                origins.writelines(f"{fields[i][2]}\n" for i in kept)
                counts["kept"] += len(kept)
        return dict(counts)

    def _kept(self, fields: list[list[str]], repeated: np.ndarray, counts: Counter) -> list[int]:
        """The indexes of the candidates kept, each removal counted."""
        kept = list(range(len(fields)))
        if len(repeated):
            keys = np.array([int(key, 16) if key != NO_SITE else 0 for key, *_ in fields],
                            dtype=np.uint64)
            sited = np.array([key != NO_SITE for key, *_ in fields], dtype=bool)
            at = np.minimum(np.searchsorted(repeated, keys), len(repeated) - 1)
            boilerplate = sited & (repeated[at] == keys)
            kept = [i for i in kept if not boilerplate[i]]
            counts["removed_boilerplate"] += int(boilerplate.sum())
        if self.cleaning.lid and kept:
            found = language_kept([fields[i][1] for i in kept], self.cleaning)
            counts["removed_language"] += found.count(False)
            kept = [i for i, keep in zip(kept, found) if keep]
        return kept
