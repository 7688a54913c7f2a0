"""The training loop: a dual-encoder translation-ranking objective (additive-margin softmax over
in-batch negatives, both directions) on one shared BiLSTM encoder, with resumable checkpoints,
periodic dev xsim and export to the official LASER checkpoint format."""
from __future__ import annotations

import json
import math
import sys
import time
from contextlib import closing
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from ..runtime.bilstm import BiLSTMEncoder
from ..runtime.sequences import PAD, embed_sequences
from ..errors import LaserError
from ..io.atomic import copy_atomically, replace_atomically
from ..eval.xsim import xsim_errors
from ..search.vectors import Vectors
from .batches import Batch, BatchSampler, prefetched
from .config import ARCHITECTURE_FIELDS, TrainConfig, check_bf16, pieces_for
from .distill import Distiller, TeacherTargets
from .warm_start import init_files, warm_start

# An extra loss term of a batch's embeddings (the distillation), added to the ranking loss.
ExtraLoss = Callable[[torch.Tensor, Batch], torch.Tensor]

# Batches of training pairs whose sentences score the units when --init narrows a model.
SAMPLE_BATCHES = 8
# Training batches (both sides) embedded to fit the projection head at the start of a run.
HEAD_FIT_BATCHES = 8
# The resumable checkpoint (weights, optimiser, projection head, step) in the work folder.
CHECKPOINT_FILE = "checkpoint.pt"


def encoder_params(config: TrainConfig) -> dict:
    """The `params` of the official LASER checkpoint for this shape."""
    return {"num_embeddings": config.vocab_size, "padding_idx": PAD,
            "embed_dim": config.embed_dim, "hidden_size": config.hidden_size,
            "num_layers": config.num_layers, "bidirectional": True, "left_pad": True,
            "padding_value": 0.0}


def learning_rate(config: TrainConfig, step: int) -> float:
    """Linear warm-up, then cosine decay to final_lr_ratio * lr at config.steps."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = min(1.0, (step - config.warmup) / max(1, config.steps - config.warmup))
    floor = config.final_lr_ratio
    return config.lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def ranking_loss(embeddings: torch.Tensor, duplicate: torch.Tensor, scale: float,
                 margin: float) -> torch.Tensor:
    """Additive-margin softmax both ways: foreign i must pick English i among the batch's English
    sentences and vice versa; rows sharing a sentence with i are not counted as negatives."""
    size = duplicate.size(0)
    normalized = F.normalize(embeddings, dim=1)
    similarity = normalized[:size] @ normalized[size:].t()
    logits = scale * (similarity - margin * torch.eye(size, device=similarity.device))
    logits = logits.masked_fill(duplicate.to(similarity.device), float("-inf"))
    target = torch.arange(size, device=similarity.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2


def initialise_embeddings(embedding: nn.Embedding) -> None:
    """N(0, 1/dim) rather than torch's N(0, 1): rare tokens get few updates, and with unit-scale
    random vectors Adam's small steps would leave them mostly noise for a long time."""
    with torch.no_grad():
        embedding.weight.normal_(0, embedding.embedding_dim ** -0.5)
        embedding.weight[PAD].zero_()


class BagOfSubwords(nn.Module):
    """Mean of a sentence's token embeddings: trains ~50 x faster than the BiLSTM, which makes it a
    cheap way to align the token embeddings of all languages before the BiLSTM is trained."""

    def __init__(self, num_embeddings: int, embed_dim: int):
        super().__init__()
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=PAD)
        initialise_embeddings(self.embed_tokens)
        self.output_dim = embed_dim

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = (tokens != PAD).unsqueeze(2)
        return (self.embed_tokens(tokens) * mask).sum(1) / lengths.unsqueeze(1)


def _optimise(model: nn.Module, optimizer, config: "TrainConfig", step: int,
              batch: Batch, device: torch.device, extra: Optional[ExtraLoss] = None) -> float:
    """One step of the ranking loss (plus `extra`) at the scheduled learning rate; with
    `config.bf16` the forward pass runs in bfloat16, the loss and the weights in float32."""
    for group in optimizer.param_groups:
        group["lr"] = learning_rate(config, step)
    optimizer.zero_grad(set_to_none=True)
    loss = backward_loss(model, batch, config, device, extra)
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    torch.nn.utils.clip_grad_norm_(parameters, config.clip)
    optimizer.step()
    return loss


def _embed(model: nn.Module, tokens: torch.Tensor, lengths: torch.Tensor, config: "TrainConfig",
           device: torch.device) -> torch.Tensor:
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=config.bf16):
        embeddings = model(tokens.to(device), lengths.to(device))
    return embeddings.float()


def _batch_loss(embeddings: torch.Tensor, batch: Batch, config: "TrainConfig",
                extra: Optional[ExtraLoss]) -> torch.Tensor:
    loss = ranking_loss(embeddings, batch.duplicate, config.scale, config.margin)
    return loss + extra(embeddings, batch) if extra is not None else loss


def backward_loss(model: nn.Module, batch: Batch, config: "TrainConfig", device: torch.device,
                  extra: Optional[ExtraLoss] = None) -> float:
    """The batch's loss, its gradients accumulated. The sentences are embedded in length-sorted
    pieces (`length_pieces`) of `config.piece_sentences`. With config.chunk_sentences, the
    gradient cache of Gao et al. 2021: all sentences are embedded in pieces of that many without
    autograd, the loss is differentiated to those embeddings, then each piece is embedded again
    and given its slice of that gradient. The gradients are the whole batch's (each piece's
    second pass draws the dropout of its first), and only one piece's activations are held."""
    chunk = config.chunk_sentences
    if not chunk or len(batch.tokens) <= chunk:
        embeddings = _embed_pieces(model, length_pieces(batch, config.piece_sentences), config,
                                   device)
        loss = _batch_loss(embeddings, batch, config, extra)
        loss.backward()
        return loss.item()
    pieces = length_pieces(batch, chunk)
    random_states = []
    with torch.no_grad():
        embeddings = _embed_pieces(model, pieces, config, device, random_states)
    embeddings.requires_grad_(True)
    loss = _batch_loss(embeddings, batch, config, extra)
    loss.backward()
    for piece, state in zip(pieces, random_states):
        _set_random_state(state, device)
        gradient = embeddings.grad[piece.rows.to(embeddings.device)]
        _embed(model, piece.tokens, piece.lengths, config, device).backward(gradient)
    return loss.item()


def _random_state(device: torch.device) -> tuple:
    """Torch's random state (CPU, and the device's when it is a GPU): the dropout masks."""
    return torch.get_rng_state(), (torch.cuda.get_rng_state(device)
                                    if device.type == "cuda" else None)


def _set_random_state(state: tuple, device: torch.device) -> None:
    torch.set_rng_state(state[0])
    if state[1] is not None:
        torch.cuda.set_rng_state(state[1], device)


@dataclass(frozen=True)
class Piece:
    """Sentences of a batch embedded together: their rows in the batch, ids and lengths."""
    rows: torch.Tensor
    tokens: torch.Tensor
    lengths: torch.Tensor


def length_pieces(batch: Batch, size: int) -> list[Piece]:
    """The batch's sentences sorted by length, in pieces of at most `size` (0: one piece), each
    cut to its own longest sentence. A batch grouped by topic mixes short and long sentences,
    and the network's work is its padded size: pieces of similar length spare most padding."""
    order = torch.argsort(batch.lengths, stable=True)
    return [Piece(rows, batch.tokens[rows, :int(batch.lengths[rows].max())], batch.lengths[rows])
            for rows in order.split(size or len(order))]


def in_batch_order(embeddings: Sequence[torch.Tensor], pieces: Sequence[Piece]) -> torch.Tensor:
    """The pieces' embeddings as one matrix in the rows of their batch."""
    rows = torch.cat([piece.rows for piece in pieces]).to(embeddings[0].device)
    return torch.cat(embeddings)[torch.argsort(rows)]


def _embed_pieces(model: nn.Module, pieces: Sequence[Piece], config: "TrainConfig",
                  device: torch.device, random_states: Optional[list] = None) -> torch.Tensor:
    """The pieces' embeddings in batch order, one piece at a time; `random_states` receives the
    random state before each piece, so that a second pass can draw the same dropout."""
    embeddings = []
    for piece in pieces:
        if random_states is not None:
            random_states.append(_random_state(device))
        embeddings.append(_embed(model, piece.tokens, piece.lengths, config, device))
    return in_batch_order(embeddings, pieces)


def pretrain_embeddings(config: "TrainConfig", sampler: BatchSampler, dev: Mapping,
                        device: torch.device, progress: bool
                        ) -> tuple[torch.Tensor, Optional[float]]:
    """Token embeddings aligned across languages by `bow_steps` of bag-of-subwords training,
    and that model's dev error (None without dev pairs)."""
    torch.manual_seed(config.seed)
    model = BagOfSubwords(config.vocab_size, config.embed_dim).to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.bow_lr)
    schedule = replace(config, steps=config.bow_steps, lr=config.bow_lr,
                       warmup=max(1, min(config.warmup, config.bow_steps // 10)))
    for step in tqdm(range(config.bow_steps), desc="bag-of-subwords pretraining", unit="step",
                     file=sys.stderr, disable=not progress, dynamic_ncols=True):
        _optimise(model, optimizer, schedule, step, sampler.batch(step), device)
    error = average_error(dev_errors(model, dev, device)) if dev else None
    return model.embed_tokens.weight.detach().cpu(), error


def embed_ids(model: nn.Module, sequences: Sequence[Sequence[int]], device: torch.device,
              max_tokens: int = 8000) -> np.ndarray:
    """Embeddings of id sequences in input order (the model left in training mode afterwards)."""
    model.eval()
    output = embed_sequences(model, sequences, device, max_tokens)
    model.train()
    return output


def dev_errors(model: nn.Module, dev: Mapping[str, tuple[list, list]],
               device: torch.device) -> dict[str, tuple[float, float]]:
    """Cosine xsim error per language: (xx -> en, en -> xx)."""
    errors = {}
    for lang, (sources, pivots) in dev.items():
        x = Vectors(embed_ids(model, sources, device), f"{lang} dev")
        y = Vectors(embed_ids(model, pivots, device), "eng dev")
        errors[lang] = xsim_errors(x, y)
    return errors


def average_error(errors: Mapping[str, tuple[float, float]]) -> float:
    return float(np.mean([(a + b) / 2 for a, b in errors.values()]))


def _finite(value):
    """`value` with every NaN or infinite float (in dicts and lists) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def save_laser_checkpoint(model: BiLSTMEncoder, dictionary: dict[str, int], path: Path,
                          fp16: bool = False) -> None:
    """An official-format checkpoint (params, model, dictionary); fp16 halves the file."""
    state = model.official_state()
    if fp16:
        state = {name: tensor.half() for name, tensor in state.items()}
    _atomic_torch_save({"params": dict(model.params), "model": state,
                        "dictionary": dict(dictionary)}, path)


def _atomic_torch_save(obj, path: Path) -> None:
    replace_atomically(path, lambda tmp: torch.save(obj, tmp))


def export_model(model: BiLSTMEncoder, dictionary: dict[str, int], codes: Path, vocab: Path,
                 directory: Path, name: str, fp16: bool = True) -> None:
    """A model directory `laser embed --model` reads: NAME.pt, NAME.fcodes, NAME.fvocab."""
    directory.mkdir(parents=True, exist_ok=True)
    save_laser_checkpoint(model, dictionary, directory / f"{name}.pt", fp16)
    copy_atomically(codes, directory / f"{name}.fcodes")
    copy_atomically(vocab, directory / f"{name}.fvocab")


class Trainer:
    """Owns the model, optimiser and step counter of one run in `work_dir` (and, when
    distilling, the projection head: trained and checkpointed, never exported)."""

    def __init__(self, config: TrainConfig, sampler: BatchSampler, dev: Mapping,
                 dictionary: dict[str, int], work_dir: Path, device: str = "cpu",
                 progress: Optional[bool] = None, targets: Optional[TeacherTargets] = None):
        """`progress`: show progress bars on stderr (default: when stderr is a terminal);
        `targets`: the teacher's, to distil (the batches must carry teacher rows)."""
        self.config = replace(config, piece_sentences=pieces_for(config.piece_sentences, device))
        self.sampler, self.dev = sampler, dev
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.dictionary, self.work_dir = dictionary, work_dir
        check_bf16(config.bf16, device)
        self.device = torch.device(device)
        torch.manual_seed(config.seed)
        self.model = BiLSTMEncoder(encoder_params(config))
        self.model.dropout = config.dropout
        self.model.embedding_dropout = config.embedding_dropout
        initialise_embeddings(self.model.embed_tokens)
        self.model.to(self.device).train()
        self.distiller = (Distiller(self.model.output_dim, targets, config.distill_weight)
                          .to(self.device) if targets is not None else None)
        trained = list(self.model.parameters())
        if self.distiller is not None:
            trained += list(self.distiller.parameters())
        self.optimizer = torch.optim.Adam(trained, lr=config.lr)
        self.step = 0
        self.best_error = math.inf
        self.log_path = work_dir / "log.jsonl"
        self._resume()

    @property
    def checkpoint_path(self) -> Path:
        return self.work_dir / CHECKPOINT_FILE

    @property
    def bow_path(self) -> Path:
        return self.work_dir / "bow-embeddings.pt"

    def _resume(self) -> None:
        if not self.checkpoint_path.exists():
            if self.config.init:
                self._warm_start(self.config.init)
            elif self.config.bow_steps:
                self._initialise_embeddings()
            if self.distiller is not None:
                self._fit_head()
            return
        state = torch.load(self.checkpoint_path, map_location=self.device, weights_only=True)
        saved = TrainConfig.from_dict(state["config"])
        changed = [f for f in ARCHITECTURE_FIELDS
                   if getattr(saved, f) != getattr(self.config, f)]
        if changed:
            raise LaserError(f"{self.checkpoint_path}: cannot resume with a different "
                             f"{', '.join(changed)}; use another --work-dir")
        self.model.load_state_dict(state["model"])
        if self.distiller is not None:
            self.distiller.load_state_dict(state["head"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step, self.best_error = state["step"], state["best_error"]

    def _warm_start(self, model: str) -> None:
        """Start from a trained model's weights instead of bag-of-subwords embeddings (copied
        on the CPU, where the init model is loaded, then moved back to the training device)."""
        files = init_files(model)
        started = warm_start(self.model.cpu(), self.dictionary, files,
                             lambda: self.sampler.sample(SAMPLE_BATCHES))
        self.model.to(self.device)
        self._log({"stage": "init", "from": str(files.encoder.parent), "model": files.name,
                   **asdict(started)})

    def _fit_head(self) -> None:
        """Start the projection head at the least-squares fit of the starting student on the
        first HEAD_FIT_BATCHES training batches."""
        batches = [self.sampler.batch(step) for step in range(HEAD_FIT_BATCHES)]
        foreign, english = [], []
        self.model.eval()
        for batch in batches:
            pieces = length_pieces(batch, self.config.chunk_sentences
                                   or self.config.piece_sentences)
            with torch.no_grad():
                embeddings = _embed_pieces(self.model, pieces, self.config, self.device)
            foreign.append(embeddings[:batch.size])
            english.append(embeddings[batch.size:])
        self.model.train()
        fit = self.distiller.fit_head(torch.cat(foreign + english),
                                      np.concatenate([batch.teacher_rows for batch in batches]))
        self._log({"stage": "head", **asdict(fit)})

    def _initialise_embeddings(self) -> None:
        """Start from bag-of-subwords embeddings (trained once, kept in the work folder)."""
        if not self.bow_path.exists():
            weights, error = pretrain_embeddings(self.config, self.sampler, self.dev,
                                                 self.device, self.progress)
            record = {"stage": "bag-of-subwords", "steps": self.config.bow_steps}
            self._log(record if error is None else {**record, "average_error": error})
            _atomic_torch_save(weights, self.bow_path)
        with torch.no_grad():
            self.model.embed_tokens.weight.copy_(torch.load(self.bow_path, weights_only=True))

    def _log(self, record: dict) -> None:
        """One line of strict JSON (a diverged, non-finite loss is written as null)."""
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(_finite(record), allow_nan=False) + "\n")

    def save(self) -> None:
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "step": self.step, "best_error": self.best_error, "config": asdict(self.config)}
        if self.distiller is not None:
            state["head"] = self.distiller.state_dict()
        _atomic_torch_save(state, self.checkpoint_path)

    def _distillation(self, embeddings: torch.Tensor, batch: Batch) -> torch.Tensor:
        return self.distiller(embeddings, batch.teacher_rows)

    def train_step(self, batch: Batch) -> float:
        extra = self._distillation if self.distiller is not None else None
        loss = _optimise(self.model, self.optimizer, self.config, self.step, batch, self.device,
                         extra)
        self.step += 1
        return loss

    def evaluate(self, **extra) -> float:
        """Dev xsim error, logged to log.jsonl with `extra` (loss, speed) beside it."""
        errors = dev_errors(self.model, self.dev, self.device)
        average = average_error(errors)
        self._log({"step": self.step, "time": time.time(), "average_error": average, **extra,
                   "errors": {lang: list(pair) for lang, pair in errors.items()}})
        return average

    def run(self, on_new_best) -> None:
        """Train to config.steps; `on_new_best(model)` is called when the dev error improves."""
        config = self.config
        bar = tqdm(total=config.steps, initial=self.step, file=sys.stderr, unit="step",
                   disable=not self.progress,
                   dynamic_ncols=True)
        smoothed, started, pairs, first = None, time.time(), 0, self.step
        self._log({"event": "start", "step": self.step, "steps": config.steps,
                   "teacher": config.teacher, "bf16": config.bf16,
                   "topic_clusters": config.topic_clusters, "topic_band": config.topic_band,
                   "pool_batches": config.pool_batches, "dropout": config.dropout,
                   "embedding_dropout": config.embedding_dropout,
                   "max_length": config.max_length, "piece_sentences": config.piece_sentences,
                   "time": started})
        with closing(prefetched(self.sampler, self.step)) as batches:
            while self.step < config.steps:
                batch = next(batches)
                loss = self.train_step(batch)
                pairs += batch.size
                smoothed = loss if smoothed is None else 0.98 * smoothed + 0.02 * loss
                bar.update(1)
                bar.set_postfix(loss=f"{smoothed:.3f}",
                                pairs_s=f"{pairs / (time.time() - started):.0f}", refresh=False)
                if (self.step % config.eval_every == 0 or self.step == config.steps) and self.dev:
                    error = self.evaluate(loss=smoothed,
                                          pairs_per_second=pairs / (time.time() - started))
                    bar.write(f"step {self.step}: dev xsim error {100 * error:.2f}% "
                              f"(loss {smoothed:.3f})", file=sys.stderr)
                    if error < self.best_error:
                        self.best_error = error
                        on_new_best(self.model)
                elif self.step == config.steps:
                    self._log({"step": self.step, "time": time.time(), "loss": smoothed,
                               "pairs_per_second": pairs / (time.time() - started)})
                if self.step % config.checkpoint_every == 0 or self.step == config.steps:
                    self.save()
        bar.close()
        elapsed = time.time() - started
        self._log({"event": "end", "step": self.step, "steps_run": self.step - first,
                   "seconds": elapsed, "pairs_per_second": pairs / elapsed if pairs else 0.0})
