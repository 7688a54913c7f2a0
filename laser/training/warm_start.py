"""Start training from a trained LASER BiLSTM model (`laser train --init MODEL_DIR`): its BPE files
replace the learned ones, its token embeddings are copied by token string and its LSTM layers by
position, so a deeper network keeps what the shallower one learned and a run can go on from a
shipped model on any machine. A narrower network keeps each layer's most useful units (narrow.py).
With more merges learned instead (`--grow-vocab`), a token the model lacks starts at the mean of
the embeddings of the pieces the model's own BPE cuts it into."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import torch

from ..errors import LaserError
from ..io.atomic import copy_atomically
from ..runtime.bilstm import BiLSTMEncoder, load_checkpoint
from ..models.files import LASER1, ModelFiles
from ..models.installed import model_directory
from ..subwords.fastbpe import BPE, CONTINUATION, read_codes
from .narrow import narrowed

WORD_GOES_ON = "\ue000"  # a private-use character: no merge of any BPE takes it

# Draws sentences of the training data that score the units of a narrowed model: (tokens, lengths).
Sample = Callable[[], tuple[torch.Tensor, torch.Tensor]]


@dataclass(frozen=True)
class WarmStart:
    tokens_copied: int
    tokens_composed: int  # tokens the init model lacks, started from their pieces
    tokens_total: int
    layers_copied: int
    hidden_from: int


def init_files(model: str | Path) -> ModelFiles:
    """The model to start from: a LASER1-family directory (BiLSTM checkpoint + fastBPE files),
    or a model name (`default`: the shipped model)."""
    directory = model_directory(model)
    files = ModelFiles.from_dir(directory)
    if files.family != LASER1 or files.vocab is None:
        raise LaserError(f"{directory}: --init needs a model with fastBPE codes and vocabulary "
                         "(*.fcodes, *.fvocab)")
    return files


def check_growth(files: Optional[ModelFiles], merges: int) -> None:
    """--grow-vocab: an init model, and more merges than its BPE codes hold."""
    if files is None:
        raise LaserError("--grow-vocab needs --init: it grows that model's vocabulary")
    known = len(read_codes(files.codes))
    if merges <= known:
        raise LaserError(f"{files.codes}: --grow-vocab needs more --merges than the init "
                         f"model's {known}")


def copy_bpe(files: ModelFiles, codes: Path, vocab: Path) -> None:
    """The init model's BPE files as the work folder's (no BPE is learned)."""
    copy_atomically(files.codes, codes)
    copy_atomically(files.vocab, vocab)


def warm_start(model: BiLSTMEncoder, dictionary: dict[str, int], files: ModelFiles,
               sample: Sample) -> WarmStart:
    """Copy the init model's weights into `model`: every token both dictionaries share, and LSTM
    layers 0..k-1 where k is the smaller depth. The embedding sizes must agree; a narrower `model`
    gets the units that score best on the sentences `sample()` draws (only then called), a wider
    one is refused."""
    source = load_checkpoint(files.encoder)
    _check_widths(source.params, model.params, files.encoder)
    start = BiLSTMEncoder.from_checkpoint(source)
    width = source.params["hidden_size"]
    wide = model if width == model.hidden_size else \
        BiLSTMEncoder({**model.params, "hidden_size": width})
    shared = [(ours, source.dictionary[token]) for token, ours in dictionary.items()
              if token in source.dictionary]
    with torch.no_grad():
        rows, source_rows = map(torch.tensor, zip(*shared))
        wide.embed_tokens.weight[rows] = start.embed_tokens.weight[source_rows]
        composed = _compose_new_tokens(wide.embed_tokens.weight, start.embed_tokens.weight,
                                       dictionary, source.dictionary, files)
    layers = min(len(model.layers), len(start.layers))
    for layer in range(layers):
        wide.layers[layer].load_state_dict(start.layers[layer].state_dict())
    if wide is not model:
        model.load_state_dict(narrowed(wide, model.hidden_size, *sample()).state_dict())
    return WarmStart(len(shared), composed, len(dictionary), layers, width)


def _compose_new_tokens(weight: torch.Tensor, source_weight: torch.Tensor,
                        dictionary: dict[str, int], source_dictionary: dict[str, int],
                        files: ModelFiles) -> int:
    """Set each token the init model lacks to the mean embedding of its pieces under the init
    model's BPE (those the model knows); returns how many were set."""
    new_tokens = [token for token in dictionary if token not in source_dictionary]
    if not new_tokens:
        return 0
    bpe = BPE(files.codes, files.vocab)
    composed = 0
    for token in new_tokens:
        known = [source_dictionary[piece] for piece in pieces(token, bpe)
                 if piece in source_dictionary]
        if known:
            weight[dictionary[token]] = source_weight[known].mean(dim=0)
            composed += 1
    return composed


def pieces(token: str, bpe: BPE) -> list[str]:
    """A subword of the grown vocabulary cut by a smaller BPE: `hello` (a word's end) -> `hel@@
    lo`; `hello@@` (inside a word) is cut with a character after it that no merge takes, which
    is then dropped: `hel@@ lo@@`."""
    if not token.endswith(CONTINUATION):
        return bpe.apply_word(token).split()
    return bpe.apply_word(token[: -len(CONTINUATION)] + WORD_GOES_ON).split()[:-1]


def _check_widths(source: dict, target: dict, path: Path) -> None:
    if source["embed_dim"] != target["embed_dim"]:
        raise LaserError(f"{path}: --init model has embed_dim {source['embed_dim']}, "
                         f"the network to train {target['embed_dim']}")
    if source["hidden_size"] < target["hidden_size"]:
        raise LaserError(f"{path}: --init model has hidden_size {source['hidden_size']}, "
                         f"the network to train {target['hidden_size']} (a model can be "
                         "narrowed, not widened)")
