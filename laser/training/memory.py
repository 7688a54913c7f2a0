"""Cross-batch memory (Wang et al. 2020, "Cross-Batch Memory for Embedding Learning"): the
embeddings of the last N training pairs, kept detached, serve as extra negatives of the ranking
loss. Once training has settled the encoder drifts slowly, so recent embeddings stand in for a
larger batch without its cost in optimiser steps or memory for activations."""
from __future__ import annotations

import torch


class NegativeMemory:
    """A first-in first-out store of `size` pairs: both sides' unit-norm embeddings and the keys
    of their sentences (rows that share a sentence with a query are not its negatives)."""

    def __init__(self, size: int, dim: int):
        self.size = size
        self.foreign = torch.empty(0, dim)
        self.english = torch.empty(0, dim)
        self.foreign_keys = torch.empty(0, dtype=torch.long)
        self.english_keys = torch.empty(0, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.foreign_keys)

    def push(self, foreign: torch.Tensor, english: torch.Tensor, foreign_keys: torch.Tensor,
             english_keys: torch.Tensor) -> None:
        """Add a batch (newest first), dropping the oldest pairs beyond `size`."""
        def newest(new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
            return torch.cat([new.detach().float().cpu(), old])[: self.size]
        self.foreign, self.english = newest(foreign, self.foreign), newest(english, self.english)
        self.foreign_keys = newest(foreign_keys, self.foreign_keys).long()
        self.english_keys = newest(english_keys, self.english_keys).long()

    def shares(self, foreign_keys: torch.Tensor, english_keys: torch.Tensor) -> torch.Tensor:
        """(B, N) bool: memory rows that share their foreign or English sentence with a query."""
        return ((foreign_keys.unsqueeze(1) == self.foreign_keys.unsqueeze(0))
                | (english_keys.unsqueeze(1) == self.english_keys.unsqueeze(0)))

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"foreign": self.foreign, "english": self.english,
                "foreign_keys": self.foreign_keys, "english_keys": self.english_keys}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore a saved memory (its newest `size` pairs when the size has shrunk)."""
        for name, tensor in state.items():
            setattr(self, name, tensor[: self.size].cpu())
