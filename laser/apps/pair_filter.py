"""A learned filter of sentence pairs: a small MLP on [u, v, |u-v|, u*v] of the two sides'
L2-normalised embeddings, trained on parallel pairs (positives) against random negatives
(shuffled targets) and hard ones (nearest non-partners by cosine, both ways), with a dev split and
early stopping. Scoring runs in numpy; the filter records the embedding model it was trained on."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from tqdm import tqdm

from ..errors import LaserError
from ..models.spaces import Origin, check_same_space, model_identity
from ..io.atomic import check_output_path, replace_atomically
from ..search.vectors import unit_rows
from ..version import __version__

FORMAT = 1
RECORD = "filter.json"
WEIGHTS = "weights.npz"
WEIGHT_NAMES = ("hidden_weight", "hidden_bias", "output_weight", "output_bias")
# A target this close (cosine) to the true partner says the same thing: not a negative.
SAME_MEANING = 0.95
SCORE_BLOCK = 8192
MIN_PAIRS = 20


@dataclass(frozen=True)
class FilterOptions:
    """How a filter is trained: hidden units, negatives per positive (random; hard ones each
    way), the dev share for early stopping, epochs and patience, batch, learning rate, dropout,
    and the seed that makes it all repeatable."""

    hidden: int = 128
    random_negatives: int = 1
    hard_negatives: int = 1
    dev_share: float = 0.1
    epochs: int = 40
    patience: int = 3
    batch_size: int = 256
    learning_rate: float = 1e-3
    dropout: float = 0.1
    seed: int = 1

    def __post_init__(self) -> None:
        for name in ("hidden", "epochs", "patience", "batch_size"):
            if getattr(self, name) < 1:
                raise LaserError(f"{name} must be at least 1")
        if self.random_negatives < 0 or self.hard_negatives < 0:
            raise LaserError("negatives per positive cannot be negative")
        if self.random_negatives + self.hard_negatives == 0:
            raise LaserError("training needs negatives: random, hard or both")
        if not 0 < self.dev_share < 1:
            raise LaserError("the dev share must lie between 0 and 1")
        if not 0 <= self.dropout < 1:
            raise LaserError("dropout must lie in [0, 1)")
        if self.learning_rate <= 0:
            raise LaserError("the learning rate must be positive")


@dataclass(frozen=True)
class EmbeddingModel:
    """The model behind the embeddings a filter reads: its sha256 (None: unknown, e.g.
    embeddings without a sidecar), file description, embedding dimension and versioned name."""

    sha256: Optional[str]
    dim: int
    files: dict = field(default_factory=dict)
    name: Optional[str] = None
    space: Optional[str] = None  # the embedding space (laser.models.spaces)

    @classmethod
    def of(cls, encoder) -> "EmbeddingModel":
        identity = model_identity(encoder.files)
        return cls(encoder.files.sha256(), encoder.dim, encoder.files.describe(), identity.name,
                   identity.space)

    def origin(self, source: str) -> Origin:
        """These embeddings' model and space, for `check_same_space`."""
        return Origin(source, self.name, self.space, self.sha256)


def features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """[u, v, |u - v|, u * v] of rows already L2-normalised."""
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve: the chance that a positive outranks a negative (ties half)."""
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    ranks[order] = np.repeat(first + (counts + 1) / 2, counts)
    positives = labels.astype(bool)
    n_pos, n_neg = positives.sum(), (~positives).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@dataclass
class Examples:
    """Training examples as row pairs of the (normalised) source and target matrices."""

    src: np.ndarray
    trg: np.ndarray
    label: np.ndarray

    def __len__(self) -> int:
        return len(self.label)


def random_negatives(size: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` targets per source drawn among the others (a shuffle without fixed points)."""
    shift = rng.integers(1, size, size=(size, count))
    return (np.arange(size)[:, None] + shift) % size


def _non_partners(ids: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, neighbour) for the first `count` neighbours of each row other than the row itself."""
    rows = np.broadcast_to(np.arange(len(ids))[:, None], ids.shape)
    other = ids != rows
    keep = other & (np.cumsum(other, axis=1) <= count)
    return rows[keep], ids[keep]


def hard_negatives(x: np.ndarray, y: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The `count` nearest non-partners of each source among the targets and of each target among
    the sources (exact k-NN by cosine), as (source rows, target rows)."""
    from ..search.exact import exact_knn
    from ..search.vectors import Vectors
    fwd, bwd = exact_knn(Vectors(x, "sources"), Vectors(y, "targets"), count + 1)
    src_fwd, trg_fwd = _non_partners(fwd.ids, count)
    trg_bwd, src_bwd = _non_partners(bwd.ids, count)
    return np.concatenate([src_fwd, src_bwd]), np.concatenate([trg_fwd, trg_bwd])


def build_examples(x: np.ndarray, y: np.ndarray, options: FilterOptions,
                   rng: np.random.Generator) -> tuple[Examples, dict]:
    """Positives (x_i, y_i) and their negatives; negatives whose target (or source) means the same
    as the true partner's (cosine >= SAME_MEANING) are dropped. Also returns the counts."""
    size = len(x)
    rows = np.arange(size)
    src_parts, trg_parts = [], []
    if options.random_negatives:
        trg = random_negatives(size, options.random_negatives, rng)
        src_parts.append(np.repeat(rows, options.random_negatives))
        trg_parts.append(trg.ravel())
    hard_count = 0
    if options.hard_negatives:
        hard_src, hard_trg = hard_negatives(x, y, options.hard_negatives)
        src_parts.append(hard_src)
        trg_parts.append(hard_trg)
        hard_count = len(hard_src)
    drawn = np.stack([np.concatenate(src_parts), np.concatenate(trg_parts)])
    neg_src, neg_trg = np.unique(drawn, axis=1)
    same = ((y[neg_trg] * y[neg_src]).sum(axis=1) >= SAME_MEANING) | \
        ((x[neg_src] * x[neg_trg]).sum(axis=1) >= SAME_MEANING)
    neg_src, neg_trg = neg_src[~same], neg_trg[~same]
    examples = Examples(np.concatenate([rows, neg_src]), np.concatenate([rows, neg_trg]),
                        np.concatenate([np.ones(size), np.zeros(len(neg_src))]).astype(np.float32))
    counts = {"positives": size, "negatives": len(neg_src),
              "negatives_drawn": {"random": size * options.random_negatives, "hard": hard_count},
              "negatives_dropped": {"same_meaning": int(same.sum()),
                                    "duplicates": drawn.shape[1] - len(same)}}
    return examples, counts


def split_rows(size: int, share: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, dev rows): a random `share` of the pairs for dev, at least 10 a side."""
    if size < MIN_PAIRS:
        raise LaserError(f"training needs at least {MIN_PAIRS} pairs, got {size}")
    dev = min(size - MIN_PAIRS // 2, max(MIN_PAIRS // 2, round(share * size)))
    order = rng.permutation(size)
    return np.sort(order[dev:]), np.sort(order[:dev])


@dataclass
class _Split:
    """One side of the train/dev split: its normalised rows and their examples."""

    x: np.ndarray
    y: np.ndarray
    examples: Examples

    def features(self, part: np.ndarray):
        import torch
        e = self.examples
        return (torch.from_numpy(features(self.x[e.src[part]], self.y[e.trg[part]])),
                torch.from_numpy(e.label[part]))


def _evaluate(net, split: _Split, loss_fn, batch: int) -> dict:
    """Weighted loss, accuracy at probability 0.5 and AUC of the network on a split."""
    import torch
    net.eval()
    logits = []
    with torch.no_grad():
        for start in range(0, len(split.examples), batch):
            inputs, _ = split.features(np.arange(start, min(start + batch, len(split.examples))))
            logits.append(net(inputs).squeeze(1))
    logits_t = torch.cat(logits)
    labels = torch.from_numpy(split.examples.label)
    scores, truth = logits_t.numpy(), split.examples.label
    return {"loss": float(loss_fn(logits_t, labels)),
            "accuracy": float(np.mean((scores > 0) == (truth > 0.5))),
            "auc": auc(scores, truth)}


def _network(dim: int, options: FilterOptions):
    import torch
    return torch.nn.Sequential(torch.nn.Linear(4 * dim, options.hidden), torch.nn.ReLU(),
                               torch.nn.Dropout(options.dropout),
                               torch.nn.Linear(options.hidden, 1))


def _train_network(train: _Split, dev: _Split, options: FilterOptions,
                   progress: bool) -> tuple[dict[str, np.ndarray], dict]:
    """Adam on the class-balanced logistic loss; stops when the dev loss has not improved for
    `patience` epochs and keeps the best epoch's weights."""
    import torch
    labels = train.examples.label
    balance = torch.tensor(float((labels == 0).sum() / labels.sum()))
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=balance)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(options.seed)
        net = _network(train.x.shape[1], options)
        optimiser = torch.optim.Adam(net.parameters(), lr=options.learning_rate)
        best, best_state, best_epoch, epoch = None, None, 0, 0
        with progress_bar(options.epochs, progress, "epoch", "filter training") as bar:
            for epoch in range(1, options.epochs + 1):
                net.train()
                order = torch.randperm(len(train.examples)).numpy()
                for start in range(0, len(order), options.batch_size):
                    inputs, targets = train.features(order[start:start + options.batch_size])
                    optimiser.zero_grad()
                    loss_fn(net(inputs).squeeze(1), targets).backward()
                    optimiser.step()
                scores = _evaluate(net, dev, loss_fn, SCORE_BLOCK)
                bar.update()
                bar.set_postfix(dev_loss=f"{scores['loss']:.4f}", dev_auc=f"{scores['auc']:.4f}")
                if best is None or scores["loss"] < best["loss"] - 1e-4:
                    best, best_epoch = scores, epoch
                    best_state = {k: v.clone() for k, v in net.state_dict().items()}
                elif epoch - best_epoch >= options.patience:
                    break
    net.load_state_dict(best_state)
    first, last = net[0], net[3]
    weights = {"hidden_weight": first.weight, "hidden_bias": first.bias,
               "output_weight": last.weight, "output_bias": last.bias}
    weights = {name: value.detach().numpy().copy() for name, value in weights.items()}
    return weights, {"epochs_run": epoch, "best_epoch": best_epoch,
                     "dev": {k: round(v, 6) for k, v in best.items()},
                     "positive_weight": round(float(balance), 6)}


def fit(x: np.ndarray, y: np.ndarray, options: FilterOptions,
        progress: bool = False) -> tuple[dict[str, np.ndarray], dict]:
    """Weights of a filter learned from the normalised parallel rows x[i] <-> y[i], and a record
    of the training (counts, epochs, dev loss/accuracy/AUC)."""
    rng = np.random.default_rng(options.seed)
    train_rows, dev_rows = split_rows(len(x), options.dev_share, rng)
    splits, counts = [], {}
    for name, rows in (("train", train_rows), ("dev", dev_rows)):
        examples, counts[name] = build_examples(x[rows], y[rows], options, rng)
        splits.append(_Split(x[rows], y[rows], examples))
    weights, training = _train_network(*splits, options, progress)
    return weights, {"pairs": len(x), "examples": counts, **training}


class PairFilter:
    """A trained pair filter: `probabilities(src, trg)` of each row pair being a translation.

    >>> pair_filter = PairFilter.train(src_embeddings, trg_embeddings, EmbeddingModel.of(encoder))
    >>> pair_filter.save("filter/"); PairFilter.load("filter/").probabilities(src, trg)
    """

    def __init__(self, weights: dict[str, np.ndarray], record: dict):
        self.weights = weights
        self.record = record

    @property
    def model(self) -> EmbeddingModel:
        return EmbeddingModel(self.record["model_sha256"], self.record["dim"],
                              self.record["model_files"], self.record.get("model_name"),
                              self.record.get("model_space"))

    @classmethod
    def train(cls, src: np.ndarray, trg: np.ndarray, model: EmbeddingModel,
              options: FilterOptions = FilterOptions(), progress: bool = False,
              info: Optional[dict] = None) -> "PairFilter":
        """Learn from the parallel rows src[i] <-> trg[i]; `info` is recorded as given."""
        src, trg = np.asarray(src), np.asarray(trg)
        if len(src) != len(trg):
            raise LaserError(f"{len(src)} source rows but {len(trg)} target rows")
        if src.ndim != 2 or src.shape[1] != model.dim or trg.shape[1:] != (model.dim,):
            raise LaserError(f"expected embeddings of dimension {model.dim}")
        started = time.perf_counter()
        weights, training = fit(unit_rows(src), unit_rows(trg), options, progress)
        training["seconds"] = round(time.perf_counter() - started, 4)
        record = {"format": FORMAT, "kind": "laser pair filter",
                  "features": "[u, v, |u-v|, u*v] of L2-normalised embeddings",
                  "model_sha256": model.sha256, "model_name": model.name,
                  "model_space": model.space, "model_files": model.files, "dim": model.dim,
                  "options": asdict(options), "training": training, "info": info or {},
                  "laser_version": __version__}
        return cls(weights, record)

    def probabilities(self, src: np.ndarray, trg: np.ndarray) -> np.ndarray:
        """P(translation) of src[i] <-> trg[i] for every i (float32), computed in blocks."""
        src, trg = np.asarray(src), np.asarray(trg)
        if src.shape != trg.shape or src.ndim != 2 or src.shape[1] != self.record["dim"]:
            raise LaserError(f"expected two row-aligned matrices of dimension "
                             f"{self.record['dim']}, got {src.shape} and {trg.shape}")
        out = np.empty(len(src), dtype=np.float32)
        w = self.weights
        for start in range(0, len(src), SCORE_BLOCK):
            part = slice(start, start + SCORE_BLOCK)
            hidden = features(unit_rows(src[part]), unit_rows(trg[part])) @ w["hidden_weight"].T
            hidden = np.maximum(hidden + w["hidden_bias"], 0)
            logits = hidden @ w["output_weight"][0] + w["output_bias"][0]
            out[part] = 1 / (1 + np.exp(-np.clip(logits, -60, 60)))
        return out

    score = probabilities

    @classmethod
    def train_texts(cls, encoder, src: Sequence[str], trg: Sequence[str], src_lang: str,
                    trg_lang: str, options: FilterOptions = FilterOptions(),
                    progress: bool = False) -> "PairFilter":
        """Learn from parallel sentences src[i] <-> trg[i], embedded with `encoder`."""
        return cls.train(encoder.encode(src, src_lang), encoder.encode(trg, trg_lang),
                         EmbeddingModel.of(encoder), options, progress,
                         {"src_lang": src_lang, "trg_lang": trg_lang})

    def score_texts(self, encoder, src: Sequence[str], trg: Sequence[str], src_lang: str,
                    trg_lang: str) -> np.ndarray:
        """P(translation) of sentence pairs, embedded with `encoder` (the model trained on)."""
        model = EmbeddingModel.of(encoder)
        self.check_model(model.origin(str(encoder.files.encoder)), model.dim)
        return self.probabilities(encoder.encode(src, src_lang), encoder.encode(trg, trg_lang))

    def check_model(self, origin: Origin, dim: int) -> None:
        """Refuse embeddings of another space than the one trained on (`check_same_space`) or
        of another dimension."""
        check_same_space(self.model.origin("the pair filter"), origin)
        if dim != self.record["dim"]:
            raise LaserError(f"{origin.source}: {dim}-d embeddings, but the filter was trained "
                             f"on {self.record['dim']}-d ones")

    def save(self, directory: str | Path) -> None:
        """Write weights.npz and filter.json into `directory` (created), each atomically."""
        directory = check_filter_dir(directory)
        directory.mkdir(exist_ok=True)

        def write_weights(tmp: str) -> None:
            with open(tmp, "wb") as f:
                np.savez(f, **self.weights)
        replace_atomically(directory / WEIGHTS, write_weights)
        replace_atomically(directory / RECORD, lambda tmp: Path(tmp).write_text(
            json.dumps(self.record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"))

    @classmethod
    def load(cls, directory: str | Path) -> "PairFilter":
        """A filter saved by `save`; refuses a folder that is not one."""
        directory = Path(directory)
        if not (directory / RECORD).is_file() or not (directory / WEIGHTS).is_file():
            raise LaserError(f"{directory}: not a pair filter folder (no {RECORD} and {WEIGHTS});"
                             " make one with `laser filter train`")
        try:
            record = json.loads((directory / RECORD).read_text(encoding="utf-8"))
            with np.load(directory / WEIGHTS, allow_pickle=False) as stored:
                weights = {name: stored[name].astype(np.float32) for name in WEIGHT_NAMES}
        except (ValueError, KeyError, OSError) as error:
            raise LaserError(f"{directory}: unreadable pair filter ({error})") from None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise LaserError(f"{directory / RECORD}: not a pair filter record of format {FORMAT}")
        if weights["hidden_weight"].shape[1] != 4 * record.get("dim", -1):
            raise LaserError(f"{directory}: weights do not match the recorded dimension")
        return cls(weights, record)


def check_filter_dir(directory: str | Path) -> Path:
    """Refuse, before any work, a filter folder that cannot be written: an existing file, a
    missing parent, or no permission."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise LaserError(f"{directory}: exists and is not a directory")
    check_output_path(directory / RECORD if directory.is_dir() else directory)
    return directory


def progress_bar(total: int, show: bool, unit: str, desc: str) -> tqdm:
    """A progress bar on stderr when asked for (and stderr is a terminal)."""
    return tqdm(total=total, unit=unit, desc=desc, disable=None if show else True, leave=False)
