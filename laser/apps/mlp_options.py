"""How the classifier's MLP is shaped and trained: the options `laser.apps.classify` records
and `laser.apps.mlp` trains by."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import LaserError


@dataclass(frozen=True)
class TrainOptions:
    """The MLP (one hidden layer, dropout) and its training: Adam on mini-batches, early stopping
    on dev accuracy (`patience` epochs without a better one), all randomness from `seed`."""

    hidden: int = 256
    dropout: float = 0.3
    epochs: int = 200
    patience: int = 20
    batch_size: int = 32
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    dev_fraction: float = 0.1  # held out of the training data when no dev set is given
    seed: int = 1

    def __post_init__(self) -> None:
        if min(self.hidden, self.epochs, self.patience, self.batch_size) < 1:
            raise LaserError("hidden, epochs, patience and batch_size must be at least 1")
        if not (0 <= self.dropout < 1 and 0 < self.dev_fraction < 1):
            raise LaserError("dropout must be in [0, 1) and dev_fraction in (0, 1)")
