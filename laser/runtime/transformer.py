"""The LASER3 encoder: fairseq transformer checkpoints, loaded and run natively with torch.

A checkpoint is `{"cfg": {"model": CFG}, "model": STATE}` (read by `checkpoint.read_checkpoint`),
with the fairseq dictionary in the model directory's `*.cvocab`. The network is fairseq's
`TransformerEncoder` in eval mode as the official `LaserTransformerEncoder` builds it:

* ids: `[<s>]` (if `prepend_bos`) + pieces + `</s>`; dictionary `<s> <pad> </s> <unk>`, the
  `.cvocab` pieces, then `<mask>` if the state has a final `layer_norm` (the MLM head's);
* `embed_scale * E[ids]` (`sqrt(dim)` unless `no_scale_embedding`) plus sinusoidal or learned
  positions numbered from 2 by fairseq's `make_positions`, `layernorm_embedding` if set;
* post-norm or pre-norm layers (`encoder_normalize_before`), the final `layer_norm` when the
  state has one (or the layers are pre-norm), then `maxpool` over the sentence or the `<s>`
  output (`cls`), as `sentemb_criterion` says.

Positions count real tokens only and attention never looks at padding, so a sentence's result does
not depend on its batch or on the side it is padded on: batches are padded on the right, also
for checkpoints trained with `left_pad_source`.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import LaserError, located
from .bilstm import torch_tensors
from ..models.checkpoint import plain_config
from .sequences import PAD

POOLINGS = ("maxpool", "cls")
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_accurate": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_fast": lambda x: F.gelu(x, approximate="tanh"),
    "tanh": torch.tanh,
    "swish": F.silu,
    "linear": lambda x: x,
}
SPECIAL_SYMBOLS = ("<s>", "<pad>", "</s>", "<unk>")
MASK = "<mask>"
FINAL_NORM_KEYS = ("encoder.layer_norm.weight", "layer_norm.weight")
# What the official loader keeps of an encoder-decoder checkpoint (then without `encoder.`).
ENCODER_PREFIXES = ("encoder.layer_norm", "encoder.layers", "encoder.embed", "encoder.version")
# Buffers and copies with no effect on the output: fairseq's version counters, the sinusoidal
# module's placeholder, the per-layer BetterTransformer copies of fairseq >= 0.12 (rebuilt
# from the named projections), and the MLM training head.
_IGNORED_SUFFIXES = ("version", "embed_positions._float_tensor", "in_proj_weight", "in_proj_bias",
                     "out_proj_weight", "out_proj_bias", "fc1_weight", "fc1_bias", "fc2_weight",
                     "fc2_bias")
_IGNORED_PREFIXES = ("lm_head_transform_weight.", "project_vocabulary.")


@dataclass(frozen=True)
class TransformerConfig:
    """What the encoder's forward needs of `cfg.model` (fairseq's defaults where absent)."""

    dim: int
    ffn_dim: int = 2048
    layers: int = 6
    heads: int = 8
    normalize_before: bool = False
    positions: Optional[str] = "sinusoidal"  # sinusoidal, learned or None
    max_source_positions: int = 1024
    layernorm_embedding: bool = False
    scale_embedding: bool = True
    activation: str = "relu"
    pooling: str = "maxpool"
    prepend_bos: bool = False

    @classmethod
    def from_cfg(cls, model: dict) -> "TransformerConfig":
        missing = [k for k in ("encoder_embed_dim", "sentemb_criterion") if k not in model]
        if missing:
            raise LaserError(f"cfg.model lacks {', '.join(missing)}")
        if model.get("adaptive_input"):
            raise LaserError("adaptive_input encoders are not supported")
        positions = None if model.get("no_token_positional_embeddings") else (
            "learned" if model.get("encoder_learned_pos") else "sinusoidal")
        config = cls(
            dim=model["encoder_embed_dim"], ffn_dim=model.get("encoder_ffn_embed_dim", 2048),
            layers=model.get("encoder_layers", 6), heads=model.get("encoder_attention_heads", 8),
            normalize_before=bool(model.get("encoder_normalize_before", False)),
            positions=positions, max_source_positions=model.get("max_source_positions", 1024),
            layernorm_embedding=bool(model.get("layernorm_embedding", False)),
            scale_embedding=not model.get("no_scale_embedding", False),
            activation=model.get("activation_fn", "relu"), pooling=model["sentemb_criterion"],
            prepend_bos=bool(model.get("prepend_bos", False)))
        config.check()
        return config

    def check(self) -> None:
        if self.pooling not in POOLINGS:
            raise LaserError(f"sentemb_criterion {self.pooling!r} is not one of "
                             f"{', '.join(POOLINGS)}")
        if self.pooling == "cls" and not self.prepend_bos:
            raise LaserError("sentemb_criterion 'cls' needs prepend_bos (no <s> to pool)")
        if self.activation not in ACTIVATIONS:
            raise LaserError(f"activation_fn {self.activation!r} is not one of "
                             f"{', '.join(ACTIVATIONS)}")
        if self.dim % self.heads:
            raise LaserError(f"encoder_embed_dim {self.dim} is not a multiple of "
                             f"encoder_attention_heads {self.heads}")


def sinusoid_table(rows: int, dim: int) -> torch.Tensor:
    """fairseq's sinusoidal position table (`sin` half then `cos` half, row PAD zero), float32.

    Each step is rounded to float32 where fairseq's float32 computation rounds, but the
    frequencies, sines and cosines are correctly rounded (computed in float64), so the table is
    the same on every machine. The angle is a float32 product, as in fairseq: it reaches
    thousands of radians, where one float32 ulp of the angle is ~1e-4.
    """
    half = dim // 2
    step = np.float32(-math.log(10000) / (half - 1))
    inv_freq = np.exp((np.arange(half, dtype=np.float32) * step).astype(np.float64))
    angles = (np.arange(rows, dtype=np.float32)[:, None]
              * inv_freq.astype(np.float32)[None, :]).astype(np.float64)
    table = np.concatenate([np.sin(angles), np.cos(angles), np.zeros((rows, dim % 2))], axis=1)
    table[PAD] = 0
    return torch.from_numpy(table.astype(np.float32))


class SinusoidalPositions(nn.Module):
    """Position embeddings from `sinusoid_table`, grown as longer batches arrive."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.register_buffer("table", sinusoid_table(256, dim), persistent=False)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        needed = int(positions.max()) + 1
        if needed > self.table.size(0):
            self.table = sinusoid_table(max(needed, 2 * self.table.size(0)), self.dim).to(
                self.table.device)
        return F.embedding(positions, self.table)


class SelfAttention(nn.Module):
    """fairseq's MultiheadAttention as self-attention with a key padding mask."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(dim, dim)
                                                                for _ in range(4))

    def forward(self, x: torch.Tensor, attend: torch.Tensor) -> torch.Tensor:
        """x: (batch, time, dim); attend: (batch, 1, 1, time), True on real keys."""
        batch, steps, dim = x.shape

        def heads(projection: nn.Linear) -> torch.Tensor:
            return projection(x).view(batch, steps, self.heads, -1).transpose(1, 2)
        out = F.scaled_dot_product_attention(heads(self.q_proj), heads(self.k_proj),
                                             heads(self.v_proj), attn_mask=attend)
        return self.out_proj(out.transpose(1, 2).reshape(batch, steps, dim))


class TransformerLayer(nn.Module):
    """One fairseq TransformerEncoderLayer: attention and feed-forward, each with a residual and
    a LayerNorm after it (post-norm) or before it (pre-norm)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.normalize_before = config.normalize_before
        self.activation = ACTIVATIONS[config.activation]
        self.self_attn = SelfAttention(config.dim, config.heads)
        self.self_attn_layer_norm = nn.LayerNorm(config.dim)
        self.fc1 = nn.Linear(config.dim, config.ffn_dim)
        self.fc2 = nn.Linear(config.ffn_dim, config.dim)
        self.final_layer_norm = nn.LayerNorm(config.dim)

    def forward(self, x: torch.Tensor, attend: torch.Tensor) -> torch.Tensor:
        x = self._residual(x, self.self_attn_layer_norm, lambda h: self.self_attn(h, attend))
        return self._residual(x, self.final_layer_norm,
                              lambda h: self.fc2(self.activation(self.fc1(h))))

    def _residual(self, x: torch.Tensor, norm: nn.LayerNorm,
                  block: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        if self.normalize_before:
            return x + block(norm(x))
        return norm(x + block(x))


class TransformerEncoder(nn.Module):
    """Token ids -> fairseq transformer encoder -> one vector per sentence (maxpool or cls).

    Parameter names are fairseq's, so a LASER3 state loads with `load_state_dict`.
    """

    def __init__(self, config: TransformerConfig, vocab_size: int, final_norm: bool):
        super().__init__()
        self.config = config
        self.embed_scale = math.sqrt(config.dim) if config.scale_embedding else 1.0
        self.embed_tokens = nn.Embedding(vocab_size, config.dim, padding_idx=PAD)
        self.embed_positions: Optional[nn.Module] = None
        if config.positions == "learned":
            self.embed_positions = nn.Embedding(config.max_source_positions + PAD + 1,
                                                config.dim, padding_idx=PAD)
        elif config.positions == "sinusoidal":
            self.embed_positions = SinusoidalPositions(config.dim)
        self.layernorm_embedding = nn.LayerNorm(config.dim) if config.layernorm_embedding else None
        self.layers = nn.ModuleList(TransformerLayer(config) for _ in range(config.layers))
        self.layer_norm = nn.LayerNorm(config.dim) if final_norm else None
        self.output_dim = config.dim

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """tokens: (batch, time) right-padded ids; lengths: (batch,). Returns (batch, dim)."""
        valid = torch.arange(tokens.size(1), device=tokens.device) < lengths.unsqueeze(1)
        x = self.embed_scale * self.embed_tokens(tokens)
        if self.embed_positions is not None:
            x = x + self.embed_positions(self._positions(valid))
        if self.layernorm_embedding is not None:
            x = self.layernorm_embedding(x)
        x = x * valid.unsqueeze(2)
        attend = valid[:, None, None, :]
        for layer in self.layers:
            x = layer(x, attend)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        if self.config.pooling == "cls":
            return x[:, 0]  # <s>: the first step of every right-padded row
        return x.masked_fill(~valid.unsqueeze(2), float("-inf")).max(dim=1).values

    def _positions(self, valid: torch.Tensor) -> torch.Tensor:
        """fairseq's `make_positions`: real tokens numbered PAD+1, PAD+2, ...; padding PAD."""
        positions = torch.cumsum(valid, dim=1) * valid + PAD
        if self.config.positions == "learned" and valid.size(1) > self.config.max_source_positions:
            raise LaserError(f"a sentence of {valid.size(1)} tokens is longer than this model's "
                             f"{self.config.max_source_positions} learned positions; pass "
                             "--max-length to cut long sentences")
        return positions


def fairseq_dictionary(path: os.PathLike, with_mask: bool) -> dict[str, int]:
    """fairseq's `Dictionary.load`: the four specials, then one `PIECE COUNT [#fairseq:overwrite]`
    per line from id 4; then `<mask>` when `with_mask` (the official loader's rule)."""
    symbols = list(SPECIAL_SYMBOLS)
    dictionary = {symbol: index for index, symbol in enumerate(symbols)}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            piece, overwrite = _dictionary_entry(line.rstrip("\r\n"), path, number)
            if piece in dictionary and not overwrite:
                raise located(str(path), number, f"duplicate entry {piece!r}")
            dictionary[piece] = len(symbols)
            symbols.append(piece)
    if with_mask and MASK not in dictionary:
        dictionary[MASK] = len(symbols)
    return dictionary


def _dictionary_entry(line: str, path: os.PathLike, number: int) -> tuple[str, bool]:
    piece, _, count = line.rpartition(" ")
    overwrite = count == "#fairseq:overwrite"
    if overwrite:
        piece, _, count = piece.rpartition(" ")
    if not piece or not count.lstrip("-").isdigit():
        raise located(str(path), number, "expected 'PIECE COUNT' in a fairseq dictionary")
    return piece, overwrite


def encoder_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The encoder's tensors under the names of `TransformerEncoder`, as float32: the encoder part
    of an encoder-decoder checkpoint (official `_remove_decoder_layers`), without the tensors
    that do not change the output."""
    if "decoder.version" in state:
        state = {key[len("encoder."):]: value for key, value in state.items()
                 if key.startswith(ENCODER_PREFIXES)}
    return {key: value.float() for key, value in state.items()
            if not key.endswith(_IGNORED_SUFFIXES) and not key.startswith(_IGNORED_PREFIXES)}


@dataclass(frozen=True)
class LoadedTransformer:
    module: TransformerEncoder
    dictionary: dict[str, int]


def load_transformer(raw: dict, path: os.PathLike, vocab: Optional[os.PathLike]
                     ) -> LoadedTransformer:
    """The encoder and dictionary of the fairseq checkpoint `path`, read by `read_checkpoint`."""
    cfg = plain_config(raw["cfg"])
    model_cfg = cfg.get("model") if isinstance(cfg, dict) else None
    if not isinstance(model_cfg, dict) or not isinstance(raw["model"], dict):
        raise LaserError(f"{path}: not a LASER3 checkpoint (expected cfg.model and a model state)")
    try:
        config = TransformerConfig.from_cfg(model_cfg)
    except LaserError as error:
        raise LaserError(f"{path}: {error}") from None
    if vocab is None:
        raise LaserError(f"{path}: a LASER3 (transformer) checkpoint needs its fairseq dictionary "
                         "(*.cvocab) beside the SentencePiece model (*.spm)")
    has_final_norm = any(key in raw["model"] for key in FINAL_NORM_KEYS)
    dictionary = fairseq_dictionary(vocab, with_mask=has_final_norm)
    state = encoder_state(torch_tensors(raw["model"]))
    module = TransformerEncoder(config, len(dictionary),
                                final_norm="layer_norm.weight" in state or config.normalize_before)
    try:
        module.load_state_dict(state)
    except RuntimeError as error:
        summary = " ".join(str(error).split())
        raise LaserError(f"{path}: checkpoint weights do not match its cfg and dictionary "
                         f"({len(dictionary)} entries): {summary[:300]}") from None
    return LoadedTransformer(module.eval(), dictionary)
