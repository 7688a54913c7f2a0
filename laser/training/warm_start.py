"""Start training from a trained LASER BiLSTM model (`laser train --init MODEL_DIR`): its BPE files
replace the learned ones, its token embeddings are copied by token string and its LSTM layers by
position, so a deeper network keeps what the shallower one learned and a run can go on from a
shipped model on any machine."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from ..errors import LaserError
from ..models.bilstm import BiLSTMEncoder, load_checkpoint
from ..models.files import LASER1, ModelFiles


@dataclass(frozen=True)
class WarmStart:
    tokens_copied: int
    tokens_total: int
    layers_copied: int


def init_files(directory: Path) -> ModelFiles:
    """The model to start from: a LASER1-family directory (BiLSTM checkpoint + fastBPE files)."""
    files = ModelFiles.from_dir(directory)
    if files.family != LASER1 or files.vocab is None:
        raise LaserError(f"{directory}: --init needs a model with fastBPE codes and vocabulary "
                         "(*.fcodes, *.fvocab)")
    return files


def copy_bpe(files: ModelFiles, codes: Path, vocab: Path) -> None:
    """The init model's BPE files as the work folder's (no BPE is learned)."""
    shutil.copyfile(files.codes, codes)
    shutil.copyfile(files.vocab, vocab)


def warm_start(model: BiLSTMEncoder, dictionary: dict[str, int], files: ModelFiles) -> WarmStart:
    """Copy the init model's weights into `model`: every token both dictionaries share, and LSTM
    layers 0..k-1 where k is the smaller depth. The widths must agree."""
    source = load_checkpoint(files.encoder)
    for name in ("embed_dim", "hidden_size"):
        if source.params[name] != model.params[name]:
            raise LaserError(f"{files.encoder}: --init model has {name} {source.params[name]}, "
                             f"the network to train {model.params[name]}")
    start = BiLSTMEncoder.from_checkpoint(source)
    shared = [(ours, source.dictionary[token]) for token, ours in dictionary.items()
              if token in source.dictionary]
    with torch.no_grad():
        rows, source_rows = map(torch.tensor, zip(*shared))
        model.embed_tokens.weight[rows] = start.embed_tokens.weight[source_rows]
    layers = min(len(model.layers), len(start.layers))
    for layer in range(layers):
        model.layers[layer].load_state_dict(start.layers[layer].state_dict())
    return WarmStart(len(shared), len(dictionary), layers)
