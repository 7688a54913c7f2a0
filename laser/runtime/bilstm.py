"""The LASER BiLSTM encoder (LASER1 and LASER2): checkpoint content and the network.

A checkpoint is a dict with `params` (the encoder's keyword arguments), `model` (its state dict:
`embed_tokens.weight` and `lstm.*` in `torch.nn.LSTM` naming) and `dictionary` (token -> id with
`<s>`=0, `<pad>`=1, `</s>`=2, `<unk>`=3). A sentence is its token ids followed by `</s>`; its
embedding is the max over time of the last layer's outputs of both directions.

Each layer direction runs as its own one-layer `nn.LSTM` over a right-padded batch; the backward
direction gets each sentence reversed within its own length. Padding therefore never reaches a
real time step, the result of a sentence does not depend on what it is batched with, and the
fast un-packed LSTM kernels can be used.
"""
from __future__ import annotations

import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import LaserError
from ..models.checkpoint import WEIGHT_NAMES, Checkpoint, read_bilstm_checkpoint
from .sequences import PAD


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read an official-format LASER BiLSTM checkpoint (tensors and plain data only), its
    weights as torch tensors."""
    checkpoint = read_bilstm_checkpoint(path)
    return Checkpoint(checkpoint.params, torch_tensors(checkpoint.state), checkpoint.dictionary)


def torch_tensors(state: dict) -> dict:
    """A state dict of numpy arrays (as `read_checkpoint` returns them) as torch tensors."""
    return {name: torch.from_numpy(value) if isinstance(value, np.ndarray) else value
            for name, value in state.items()}


def _direction_lstm(input_size: int, hidden_size: int) -> nn.LSTM:
    return nn.LSTM(input_size, hidden_size, num_layers=1)


class BiLSTMEncoder(nn.Module):
    """Token embeddings -> stacked (Bi)LSTM -> max-pooling over the sentence's time steps.

    Built from checkpoint `params` with fresh weights (for training); `from_checkpoint` loads them.
    """

    def __init__(self, params: dict):
        super().__init__()
        self.params = dict(params)
        self.padding_idx = params.get("padding_idx", PAD)
        self.hidden_size = params["hidden_size"]
        self.bidirectional = params.get("bidirectional", False)
        self.embed_tokens = nn.Embedding(params["num_embeddings"], params["embed_dim"],
                                         padding_idx=self.padding_idx)
        self.directions = ("", "_reverse") if self.bidirectional else ("",)
        width = len(self.directions) * self.hidden_size
        self.layers = nn.ModuleList(
            nn.ModuleList(_direction_lstm(params["embed_dim"] if layer == 0 else width,
                                          self.hidden_size) for _ in self.directions)
            for layer in range(params["num_layers"]))
        self.output_dim = width
        # on each layer's input while training (not part of the checkpoint); the token
        # embeddings, the first layer's input, get `embedding_dropout` when it is set
        self.dropout = 0.0
        self.embedding_dropout: float | None = None

    @classmethod
    def from_checkpoint(cls, checkpoint: Checkpoint) -> "BiLSTMEncoder":
        model = cls(checkpoint.params)
        try:
            model.load_official_state(checkpoint.state)
        except (KeyError, RuntimeError) as error:
            raise LaserError(f"checkpoint weights do not match its params: {error}") from None
        return model.eval()

    def load_official_state(self, state: dict) -> None:
        """Load weights named as the official encoder names them (`lstm.weight_ih_l0_reverse`)."""
        state = torch_tensors(state)
        self.embed_tokens.load_state_dict({"weight": state["embed_tokens.weight"].float()})
        for layer, directions in enumerate(self.layers):
            for suffix, lstm in zip(self.directions, directions):
                lstm.load_state_dict({f"{name}_l0": state[f"lstm.{name}_l{layer}{suffix}"].float()
                                      for name in WEIGHT_NAMES})

    def official_state(self) -> dict[str, torch.Tensor]:
        """The weights under the official encoder's names, ready for a LASER checkpoint."""
        state = {"embed_tokens.weight": self.embed_tokens.weight.detach().clone()}
        for layer, directions in enumerate(self.layers):
            for suffix, lstm in zip(self.directions, directions):
                for name in WEIGHT_NAMES:
                    state[f"lstm.{name}_l{layer}{suffix}"] = \
                        getattr(lstm, f"{name}_l0").detach().clone()
        return state

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """tokens: (batch, time) right-padded ids; lengths: (batch,). Returns (batch, output_dim)."""
        *_, (x, valid) = self.layer_outputs(tokens, lengths)
        return max_pool(x, valid)

    def layer_outputs(self, tokens: torch.Tensor, lengths: torch.Tensor):
        """Each layer's (time, batch, width) outputs, with the (time, batch) mask of real steps."""
        steps = tokens.size(1)
        x = self.embed_tokens(tokens.t())  # (time, batch, dim)
        time_index = torch.arange(steps, device=tokens.device).unsqueeze(1)
        valid = time_index < lengths.unsqueeze(0)  # (time, batch)
        reverse_index = torch.where(valid, lengths.unsqueeze(0) - 1 - time_index, time_index)
        for layer, directions in enumerate(self.layers):
            x = F.dropout(x, self._dropout_before(layer), self.training)
            outputs = [directions[0](x)[0]]
            if self.bidirectional:
                backward = directions[1](_reverse_within_length(x, reverse_index))[0]
                outputs.append(_reverse_within_length(backward, reverse_index))
            x = torch.cat(outputs, dim=2) if len(outputs) > 1 else outputs[0]
            yield x, valid

    def _dropout_before(self, layer: int) -> float:
        if layer == 0 and self.embedding_dropout is not None:
            return self.embedding_dropout
        return self.dropout


def max_pool(x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """The maximum over each sentence's real time steps: (time, batch, width) -> (batch, width)."""
    return x.masked_fill(~valid.unsqueeze(2), float("-inf")).max(dim=0).values


def _reverse_within_length(x: torch.Tensor, reverse_index: torch.Tensor) -> torch.Tensor:
    """Reverse each column's first `length` steps; padding steps stay where they are."""
    return x.gather(0, reverse_index.unsqueeze(2).expand_as(x))
