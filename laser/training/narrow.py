"""Narrow a trained BiLSTM to fewer units per direction (`laser train --init M --hidden-size H`
with H below M's width): every layer direction keeps its H most useful units, so a run can trade
a trained model's width for encoder speed without starting again.

A unit of an inner layer is scored by the first-order size of what removing it changes downstream:
its mean absolute output on sample sentences times the norm of the weights that read it (its own
direction's recurrent weights and the next layer's input weights). A unit of the last layer is an
embedding dimension: it is scored by how much its max-pooled value varies across the sample
sentences, the information it adds to a cosine. The narrowed network computes every kept unit from
the kept units only; a unit whose outputs nothing reads (or whose pooled value never varies) can be
dropped without changing the rest.
"""
from __future__ import annotations

import torch

from ..runtime.bilstm import WEIGHT_NAMES, BiLSTMEncoder, max_pool

GATES = 4  # input, forget, cell, output: the row blocks of an nn.LSTM's weights


def unit_scores(model: BiLSTMEncoder, tokens: torch.Tensor,
                lengths: torch.Tensor) -> list[torch.Tensor]:
    """Per layer, the (directions * hidden,) usefulness of each unit on these sentences."""
    with torch.no_grad():
        outputs = list(model.layer_outputs(tokens, lengths))
        scores = [_read_weight_norms(model, layer) * _mean_absolute(x, valid)
                  for layer, (x, valid) in enumerate(outputs[:-1])]
        scores.append(max_pool(*outputs[-1]).std(dim=0))
    return scores


def _mean_absolute(x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    mask = valid.unsqueeze(2).to(x.dtype)
    return (x.abs() * mask).sum(dim=(0, 1)) / mask.sum()


def _read_weight_norms(model: BiLSTMEncoder, layer: int) -> torch.Tensor:
    """For each unit of an inner layer, the norm of every weight that reads its output."""
    squares = torch.cat([direction.weight_hh_l0.pow(2).sum(dim=0)
                         for direction in model.layers[layer]])
    for direction in model.layers[layer + 1]:
        squares = squares + direction.weight_ih_l0.pow(2).sum(dim=0)
    return squares.sqrt()


def narrowed(model: BiLSTMEncoder, hidden: int, tokens: torch.Tensor,
             lengths: torch.Tensor) -> BiLSTMEncoder:
    """A copy of `model` with `hidden` units per direction: the highest scoring on the sample."""
    if hidden > model.hidden_size:
        raise ValueError(f"cannot narrow {model.hidden_size} units to {hidden}")
    kept = [_best_per_direction(score, model.hidden_size, hidden, len(model.directions))
            for score in unit_scores(model, tokens, lengths)]
    small = BiLSTMEncoder({**model.params, "hidden_size": hidden})
    with torch.no_grad():
        small.embed_tokens.weight.copy_(model.embed_tokens.weight)
        for layer, (directions, small_directions) in enumerate(zip(model.layers, small.layers)):
            inputs = _input_columns(kept, layer, model.hidden_size)
            for direction, (lstm, small_lstm) in enumerate(zip(directions, small_directions)):
                units = kept[layer][direction]
                _copy_units(lstm, small_lstm, units, inputs, model.hidden_size)
    return small.train(model.training)


def _best_per_direction(score: torch.Tensor, width: int, hidden: int,
                        directions: int) -> list[torch.Tensor]:
    """The indices (sorted, within the direction) of each direction's `hidden` best units."""
    return [score[d * width:(d + 1) * width].topk(hidden).indices.sort().values
            for d in range(directions)]


def _input_columns(kept: list[list[torch.Tensor]], layer: int,
                   width: int) -> torch.Tensor | None:
    """Which input features of `layer` survive: all embedding dimensions for layer 0, else the
    previous layer's kept units in its (forward, backward) concatenation."""
    if layer == 0:
        return None
    return torch.cat([units + d * width for d, units in enumerate(kept[layer - 1])])


def _copy_units(lstm: torch.nn.LSTM, small: torch.nn.LSTM, units: torch.Tensor,
                inputs: torch.Tensor | None, width: int) -> None:
    rows = torch.cat([units + gate * width for gate in range(GATES)])
    for name in WEIGHT_NAMES:
        weight = getattr(lstm, f"{name}_l0")[rows]
        if name == "weight_hh":
            weight = weight[:, units]
        elif name == "weight_ih" and inputs is not None:
            weight = weight[:, inputs]
        getattr(small, f"{name}_l0").copy_(weight)
