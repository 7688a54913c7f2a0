"""The classifier network (unit-length input -> one hidden layer -> dropout -> labels) and its
deterministic training with early stopping."""
from __future__ import annotations

import copy
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from ..errors import LaserError
from .mlp_options import TrainOptions

Split = tuple[np.ndarray, np.ndarray]  # (embeddings, label indices)


class UnitLength(nn.Module):
    """Scale each embedding to unit length: sentence vectors differ in norm across languages,
    their direction is what transfers."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(x, dim=-1)


def build(dim: int, classes: int, hidden: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(UnitLength(), nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(hidden, classes))


@contextmanager
def one_thread():
    """Run torch on one CPU thread: the network is too small to gain from more, and on a busy
    machine waiting for other threads makes training many times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def held_out_split(x: np.ndarray, y: np.ndarray, fraction: float, seed: int) -> tuple[Split, Split]:
    """A random `fraction` of the rows (at least one, fixed by `seed`) held out as dev."""
    order = np.random.default_rng(seed).permutation(len(y))
    dev_rows = max(1, round(fraction * len(y)))
    if dev_rows >= len(y):
        raise LaserError(f"{len(y)} examples are too few to hold out {fraction:.0%} as dev; "
                         "give a dev set")
    dev, train = np.sort(order[:dev_rows]), np.sort(order[dev_rows:])
    return (x[train], y[train]), (x[dev], y[dev])


def fit(train: Split, dev: Split, classes: int, options: TrainOptions,
        progress: bool = False) -> tuple[nn.Sequential, dict]:
    """Train with Adam, keep the epoch with the best dev accuracy (ties: lower dev loss), stop
    after `patience` epochs without one. The same seed and data give the same weights."""
    x, y = torch.from_numpy(train[0]), torch.from_numpy(train[1])
    with torch.random.fork_rng(devices=[]), one_thread():
        torch.manual_seed(options.seed)
        network = build(x.shape[1], classes, options.hidden, options.dropout)
        optimizer = torch.optim.Adam(network.parameters(), lr=options.learning_rate,
                                     weight_decay=options.weight_decay)
        order = torch.Generator().manual_seed(options.seed)
        best, best_state, best_epoch = (-1.0, 0.0), None, 0
        with tqdm(range(1, options.epochs + 1), unit="epoch", desc="training",
                  disable=None if progress else True, leave=False) as epochs:
            for epoch in epochs:
                network.train()
                for batch in torch.randperm(len(y), generator=order).split(options.batch_size):
                    optimizer.zero_grad()
                    nn.functional.cross_entropy(network(x[batch]), y[batch]).backward()
                    optimizer.step()
                accuracy, loss = dev_scores(network, dev)
                epochs.set_postfix(dev_accuracy=f"{accuracy:.3f}")
                if (accuracy, -loss) > best:
                    best, best_state, best_epoch = (accuracy, -loss), copy.deepcopy(
                        network.state_dict()), epoch
                elif epoch - best_epoch >= options.patience:
                    break
    network.load_state_dict(best_state)
    history = {"epochs_run": epoch, "best_epoch": best_epoch, "dev_accuracy": best[0],
               "dev_loss": -best[1]}
    return network.eval(), history


@torch.no_grad()
def dev_scores(network: nn.Module, dev: Split) -> tuple[float, float]:
    """Accuracy and mean cross-entropy on the dev split."""
    network.eval()
    logits = network(torch.from_numpy(dev[0]))
    labels = torch.from_numpy(dev[1])
    accuracy = (logits.argmax(dim=1) == labels).double().mean().item()
    return accuracy, nn.functional.cross_entropy(logits, labels).item()
