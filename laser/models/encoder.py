"""The `Encoder` facade: raw sentences in, LASER embeddings out (tokenise -> BPE -> BiLSTM)."""
from __future__ import annotations

import warnings
from typing import Optional, Sequence, Union

import numpy as np
import torch

from .bilstm import (EOS, BiLSTMEncoder, length_sorted_batches, load_checkpoint, pad_batch,
                     sentence_ids)
from ..subwords.fastbpe import BPE
from ..errors import LaserError
from .files import ModelFiles, resolve_model
from ..text.tokenizer import Tokenizer

DEFAULT_MAX_TOKENS = 12000


class TruncationWarning(UserWarning):
    """Sentences longer than max_length BPE tokens were cut."""


class Encoder:
    """A loaded LASER model. `encode(sentences, lang)` returns one float32 row per sentence.

    >>> encoder = Encoder.load("path/to/model_dir")
    >>> encoder.encode(["Hello world.", "Bonjour le monde."], lang="en").shape
    """

    def __init__(self, files: ModelFiles, device: str = "cpu",
                 max_tokens: int = DEFAULT_MAX_TOKENS, max_sentences: Optional[int] = None,
                 max_length: Optional[int] = None, bpe_backend: str = "auto"):
        if max_tokens < 1:
            raise LaserError("max_tokens must be at least 1")
        if max_length is not None and max_length < 1:
            raise LaserError("max_length must be at least 1")
        self.files = files
        self.device = check_device(device)
        checkpoint = load_checkpoint(files.encoder)
        self.dictionary = checkpoint.dictionary
        self.model = BiLSTMEncoder.from_checkpoint(checkpoint).to(self.device)
        self.bpe = BPE(files.codes, files.vocab, backend=bpe_backend)
        self.max_tokens = max_tokens
        self.max_sentences = max_sentences
        self.max_length = max_length
        self._tokenizers: dict[str, Tokenizer] = {}

    @classmethod
    def load(cls, model: Optional[str] = None, **options) -> "Encoder":
        """Load a model directory (or $LASER_MODEL when None)."""
        return cls(resolve_model(model), **options)

    @property
    def dim(self) -> int:
        return self.model.output_dim

    def tokenizer(self, lang: str) -> Tokenizer:
        if lang not in self._tokenizers:
            self._tokenizers[lang] = Tokenizer(lang)
        return self._tokenizers[lang]

    def tokenize(self, sentences: Sequence[str], lang: str) -> list[str]:
        """The `.tok` stage: LASER's tokenisation of each sentence."""
        return [self.tokenizer(lang)(sentence) for sentence in sentences]

    def apply_bpe(self, tokenized: Sequence[str]) -> list[str]:
        """The `.bpe` stage: exactly the text the encoder reads."""
        return self.bpe.apply_lines(tokenized)

    def token_ids(self, bpe_line: str) -> list[int]:
        """Dictionary ids of a BPE line, unknown subwords as <unk>, then </s>."""
        return sentence_ids(self.dictionary, bpe_line)

    def encode_bpe(self, bpe_lines: Sequence[str]) -> np.ndarray:
        """Embed lines that are already tokenised and BPE-split."""
        sequences = [self.token_ids(line) for line in bpe_lines]
        if self.max_length is not None:
            sequences = self._truncate(sequences)
        return self.encode_ids(sequences)

    @torch.inference_mode()
    def encode_ids(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """Embed id sequences (each ending in </s>), batched by length, rows in input order."""
        output = np.empty((len(sequences), self.dim), dtype=np.float32)
        lengths = [len(sequence) for sequence in sequences]
        for batch in length_sorted_batches(lengths, self.max_tokens, self.max_sentences):
            tokens, batch_lengths = pad_batch([sequences[i] for i in batch])
            embeddings = self.model(tokens.to(self.device), batch_lengths.to(self.device))
            output[batch] = embeddings.float().cpu().numpy()
        return output

    def encode(self, sentences: Union[str, Sequence[str]], lang: str) -> np.ndarray:
        """Embed raw sentences of one language: (n, dim) float32, or (dim,) for a single string."""
        single = isinstance(sentences, str)
        batch = [sentences] if single else list(sentences)
        for sentence in batch:
            if "\n" in sentence:
                raise LaserError("a sentence may not contain a line break; split it first")
        embeddings = self.encode_bpe(self.apply_bpe(self.tokenize(batch, lang)))
        return embeddings[0] if single else embeddings

    def _truncate(self, sequences: list[list[int]]) -> list[list[int]]:
        limit = self.max_length
        long = sum(len(sequence) - 1 > limit for sequence in sequences)
        if long:
            warnings.warn(f"{long} sentence(s) longer than {limit} BPE tokens were truncated",
                          TruncationWarning, stacklevel=3)
        return [sequence[:limit] + [EOS] if len(sequence) - 1 > limit else sequence
                for sequence in sequences]


def check_device(name: str) -> torch.device:
    """The torch device of `name`, refusing unknown names and CUDA where there is none."""
    if name not in ("cpu", "cuda") and not name.startswith("cuda:"):
        raise LaserError(f"unknown device {name!r}; choose cpu or cuda")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise LaserError("CUDA was asked for but no CUDA device is available")
    return torch.device(name)
