"""SentencePiece segmentation as the official `spm_encode --output_format=piece` prints it.

The `sentencepiece` package is pinned (requirements.txt): on exact score ties of the unigram
lattice, 0.2.1 picks the same split as the `spm_encode` LASER's installer builds (master, VERSION
0.2.1), while 0.2.3 can pick another one (see docs/parity.md).
"""
from __future__ import annotations

import os
from importlib import metadata
from typing import Sequence

from ..errors import LaserError


class SentencePiece:
    """A SentencePiece model: lines of text in, lines of space-separated pieces out."""

    def __init__(self, model: str | os.PathLike):
        try:
            import sentencepiece
        except ImportError:
            raise LaserError("LASER2 models need the sentencepiece package: "
                             "pip install sentencepiece") from None
        self.path = str(model)
        self._processor = sentencepiece.SentencePieceProcessor()
        try:
            self._processor.Load(self.path)
        except (OSError, RuntimeError):
            raise LaserError(f"{model}: not a loadable SentencePiece model") from None

    @property
    def backend(self) -> str:
        """What segments, with its version, for provenance records."""
        return f"sentencepiece {metadata.version('sentencepiece')}"

    def encode_lines(self, lines: Sequence[str]) -> list[str]:
        """The pieces of each line joined by one space; a blank line gives an empty line."""
        if not lines:
            return []
        pieces = self._processor.encode(list(lines), out_type=str)
        return [" ".join(line) for line in pieces]
