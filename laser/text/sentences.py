"""Sentence splitting for every language: `split_sentences(text, lang)`.

Candidate boundaries are found by rules (after sentence-final punctuation and its closing quotes
and brackets; after every space in the scripts that write no full stop), and a small classifier
trained on the project's corpus (`laser.text.splitting`) decides which of them end a sentence.
"""
from __future__ import annotations

from .splitting.split import split_sentences

__all__ = ["split_sentences"]
