"""Which model did the user ask for, and how should it run? The values of a command's model
options, built once (`laser.cli.common.model_options`) and handed down as one object."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional

from ..text.languages import DEFAULT_LANG_FALLBACK

DEFAULT_MAX_TOKENS = 12000


@dataclass(frozen=True)
class ModelOptions:
    """Which model: `model` (a directory or a name), else the files named one by one
    (`encoder` with `bpe_codes` and `bpe_vocab`, or with `spm_model` and `spm_vocab`); None
    everywhere leaves the choice to $LASER_MODEL and each side's language
    (`laser.models.resolve`). How it runs: the `Encoder`'s options of the same names."""

    model: Optional[str] = None
    encoder: Optional[str] = None
    bpe_codes: Optional[str] = None
    bpe_vocab: Optional[str] = None
    spm_model: Optional[str] = None
    spm_vocab: Optional[str] = None
    device: str = "cpu"
    runtime: str = "auto"
    quantize: Optional[str] = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_length: Optional[int] = None
    bpe_backend: str = "auto"
    lang_fallback: str = DEFAULT_LANG_FALLBACK

    @property
    def names_files(self) -> bool:
        """Whether the model's files are named one by one (--encoder, --bpe-codes, --spm-model)."""
        return bool(self.encoder or self.bpe_codes or self.spm_model)

    def running(self) -> dict:
        """How the model runs, as the keyword arguments of `Encoder` (and `EncoderSpec`)."""
        return dict(device=self.device, runtime=self.runtime, quantize=self.quantize,
                    max_tokens=self.max_tokens, max_length=self.max_length,
                    bpe_backend=self.bpe_backend, lang_fallback=self.lang_fallback)

    @classmethod
    def take(cls, values: dict) -> ModelOptions:
        """The options among a command's keyword arguments `values`, taken out of them."""
        return cls(**{field.name: values.pop(field.name) for field in fields(cls)})
