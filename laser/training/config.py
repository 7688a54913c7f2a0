"""Training settings, kept free of heavy imports so the command line starts fast."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Mapping, Optional

from ..errors import LaserError


@dataclass(frozen=True)
class BPEConfig:
    merges: int = 16000
    alpha: float = 0.3
    pivot_share: float = 0.2
    grow: bool = False  # with --init: learn `merges` anew, a larger vocabulary than the init's


# Fields that fix the network's shape or data: a checkpoint resumes only with the same values
# (the teacher fixes the projection head's shape).
ARCHITECTURE_FIELDS = ("embed_dim", "hidden_size", "num_layers", "vocab_size", "teacher")


@dataclass
class TrainConfig:
    """Network shape and training recipe; the defaults are the recipe of the shipped model."""

    vocab_size: int = 0
    embed_dim: int = 256
    hidden_size: int = 320
    num_layers: int = 1
    batch_size: int = 128
    steps: int = 8000
    lr: float = 2e-3
    warmup: int = 400
    final_lr_ratio: float = 0.05
    scale: float = 20.0
    margin: float = 0.1
    clip: float = 5.0
    max_length: int = 48
    alpha: float = 0.8
    seed: int = 1
    eval_every: int = 500
    checkpoint_every: int = 200
    bow_steps: int = 6000
    bow_lr: float = 5e-3
    teacher: str = ""             # distillation teacher spec (teachers.make_teacher); "" = none
    distill_weight: float = 1.0   # loss = ranking + distill_weight * distillation
    init: str = ""                # start from this model directory's weights (warm_start)
    bf16: bool = False            # forward pass in bfloat16 (autocast); weights stay float32
    topic_clusters: int = 0       # group batches by this many teacher clusters; 0 = by length only
    topic_band: int = 8           # batches of length-sorted pairs regrouped by cluster together
    pool_batches: int = 64        # batches drawn and sorted by length together (a pool)
    chunk_sentences: int = 0      # embed a batch this many sentences at a time; 0 = all at once
    piece_sentences: Optional[int] = None  # per length-sorted forward piece; 0 = one piece;
    #                                        None = the device's default (pieces_for)
    dropout: float = 0.0          # on each BiLSTM layer's input (token embeddings, lower layers)
    embedding_dropout: Optional[float] = None  # on the token embeddings instead; None = dropout

    @classmethod
    def from_dict(cls, values: Mapping) -> "TrainConfig":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})


RECIPES = Path(__file__).with_name("recipes")  # the shipped recipes, NAME.json


def recipe_file(name_or_path: str) -> Path:
    """A recipe's file: a path, or the name of a shipped recipe (RECIPES/NAME.json)."""
    if "/" in name_or_path:
        return Path(name_or_path)
    shipped = RECIPES / f"{name_or_path}.json"
    if shipped.exists():
        return shipped
    if not Path(name_or_path).exists():
        names = ", ".join(sorted(recipe.stem for recipe in RECIPES.glob("*.json")))
        raise LaserError(f"--recipe {name_or_path}: no such file, nor a shipped recipe ({names})")
    return Path(name_or_path)


def read_recipe(path: Path) -> dict:
    """A recipe file: a JSON object of TrainConfig fields (docs/training.md, "Recipes")."""
    try:
        values = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise LaserError(f"{path}: cannot read: {error.strerror}") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        line = f":{error.lineno}" if isinstance(error, json.JSONDecodeError) else ""
        raise LaserError(f"{path}{line}: not a JSON recipe: {error}") from None
    if not isinstance(values, dict):
        raise LaserError(f"{path}: a recipe is a JSON object of training settings")
    unknown = sorted(set(values) - {field.name for field in fields(TrainConfig)})
    if unknown:
        raise LaserError(f"{path}: not training settings: {', '.join(unknown)}")
    return values


CPU_PIECE_SENTENCES = 256


def pieces_for(piece_sentences: Optional[int], device: str) -> int:
    """`piece_sentences`, or where None the device's default: pieces of CPU_PIECE_SENTENCES on
    a CPU, where they spare the padding's work, and the whole batch as one piece on a GPU, where
    an LSTM's time step costs about the same for any number of sentences, so each piece adds
    its longest sentence's steps (an H100 ran 1.9-2.6x faster in one piece)."""
    if piece_sentences is not None:
        return piece_sentences
    return CPU_PIECE_SENTENCES if str(device).split(":")[0] == "cpu" else 0


def check_bf16(bf16: bool, device: str) -> None:
    """Refuse `--bf16` off the CPU: on CUDA, torch's autocast runs cuDNN's LSTMs in float16
    whatever dtype it is given (an H200 ran them so), and float16 without loss scaling lets
    small gradients vanish. Refuse it too on a CPU where torch has no bfloat16 LSTM."""
    if not bf16:
        return
    if str(device) != "cpu":
        raise LaserError(f"--bf16 runs on the CPU only: on {device} torch's autocast would run "
                         "the LSTMs in float16; train in float32 there")
    if not cpu_runs_bf16_lstms():
        raise LaserError("--bf16: torch cannot run LSTMs in bfloat16 on this CPU (its oneDNN "
                         "kernels need AVX-512 BF16 or AMX); train in float32 here")


@functools.lru_cache(maxsize=1)
def cpu_runs_bf16_lstms() -> bool:
    """Whether a tiny LSTM runs forward and backward under bfloat16 autocast on this CPU
    (oneDNN refuses on CPUs without bfloat16 instructions, such as AVX2-only AMD EPYCs)."""
    import torch  # only when --bf16 is asked for: the command line starts without torch

    lstm = torch.nn.LSTM(4, 4)
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            output, _ = lstm(torch.zeros(2, 1, 4))
        output.float().sum().backward()
    except RuntimeError:
        return False
    return True
