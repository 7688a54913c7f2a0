"""Cross-batch memory (Wang et al. 2020, "Cross-Batch Memory for Embedding Learning"): the
unit-norm embeddings of both sides of the last pairs trained on, kept detached, serve the ranking
loss as extra negatives. Each sentence is then ranked against many more candidates than a batch
holds, for the cost of one matrix product; the stored embeddings are a few steps stale, which a
slowly moving model (a low learning rate, a warm start) barely notices."""
from __future__ import annotations

import torch


class NegativeMemory:
    """The last `capacity` pairs' unit-norm foreign and English embeddings and sentence keys
    (Batch.keys), newest first."""

    def __init__(self, capacity: int, dim: int, device: torch.device):
        self.capacity = capacity
        self.sources = torch.empty(0, dim, device=device)
        self.pivots = torch.empty(0, dim, device=device)
        self.keys = torch.empty(0, 2, dtype=torch.int64, device=device)

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, sources: torch.Tensor, pivots: torch.Tensor, keys: torch.Tensor) -> None:
        """Keep a batch's embeddings (detached) and keys, dropping the oldest beyond capacity."""
        keep = self.capacity
        self.sources = torch.cat([sources.detach(), self.sources])[:keep]
        self.pivots = torch.cat([pivots.detach(), self.pivots])[:keep]
        self.keys = torch.cat([keys.to(self.keys.device), self.keys])[:keep]

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"sources": self.sources, "pivots": self.pivots, "keys": self.keys}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """A saved memory, cut to this one's capacity."""
        keep = self.capacity
        self.sources, self.pivots = state["sources"][:keep], state["pivots"][:keep]
        self.keys = state["keys"][:keep]
