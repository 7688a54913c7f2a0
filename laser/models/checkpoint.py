"""What does a checkpoint hold? Tensors, plain data and known config objects, read safely:
never arbitrary code.

Checkpoints (`torch.save` files, zip or legacy layout) are read without torch by the restricted
unpickler of `laser.models.torch_format`, which refuses every global outside its allow-list of
tensor-rebuilding functions; tensors come back as numpy arrays. fairseq checkpoints
(LASER3) also pickle their config: an `argparse.Namespace`, or omegaconf objects (`DictConfig`,
`ListConfig`, value nodes and their metadata). Each of those names is mapped to an inert stand-in
class defined here, which only stores the pickled state; `plain_config` then turns a config into
dicts, lists and scalars. Neither omegaconf nor fairseq is imported or needed. Any other global
(a class, a function such as `os.system`) is refused with a one-line `LaserError`.
"""
from __future__ import annotations

import collections
import os
from dataclasses import dataclass
from typing import Any

from ..errors import LaserError
from .torch_format import RefusedGlobal, load


class PickledObject:
    """A stand-in for a config class: keeps the state the pickle hands to BUILD, nothing else."""

    def __setstate__(self, state: Any) -> None:
        self.state = state


class Namespace(PickledObject):
    """argparse.Namespace: its attributes."""


class DictContainer(PickledObject):
    """omegaconf DictConfig: `_content` maps keys to nodes."""


class ListContainer(PickledObject):
    """omegaconf ListConfig: `_content` lists nodes."""


class ValueNode(PickledObject):
    """An omegaconf value node (AnyNode, StringNode, ...): `_val` is the value."""


class Metadata(PickledObject):
    """omegaconf (Container)Metadata: types and flags, which carry no config values."""


class AnyType:
    """Stands for `typing.Any`, which omegaconf metadata names as a type."""


_VALUE_NODES = ("AnyNode", "StringNode", "IntegerNode", "FloatNode", "BooleanNode", "BytesNode",
                "PathNode")

# Pickle global name -> stand-in. `dict` and `defaultdict` appear as omegaconf metadata types.
STAND_INS: dict[str, Any] = {
    "argparse.Namespace": Namespace,
    "omegaconf.dictconfig.DictConfig": DictContainer,
    "omegaconf.listconfig.ListConfig": ListContainer,
    "omegaconf.base.Metadata": Metadata,
    "omegaconf.base.ContainerMetadata": Metadata,
    "typing.Any": AnyType,
    "builtins.dict": dict,
    "collections.defaultdict": collections.defaultdict,
    **{f"omegaconf.nodes.{name}": ValueNode for name in _VALUE_NODES},
}


def read_checkpoint(path: str | os.PathLike) -> Any:
    """The unpickled content of a `torch.save` file, tensors as numpy arrays; refuses code,
    unknown classes, bad files."""
    try:
        return load(path, STAND_INS)
    except FileNotFoundError:
        raise LaserError(f"{path}: encoder checkpoint not found") from None
    except IsADirectoryError:
        raise LaserError(f"{path}: is a directory, not a checkpoint") from None
    except RefusedGlobal as refused:
        raise LaserError(f"{path}: refused: the checkpoint's pickle asks for {refused.name}, "
                         "which is neither a tensor nor a known config class (read by laser's "
                         "restricted reader; nothing was executed)") from None
    except Exception:  # noqa: BLE001 - a corrupt pickle or zip raises many types
        raise LaserError(f"{path}: not a loadable checkpoint: corrupt, truncated, or holding "
                         "Python objects beyond tensors and plain data (read by laser's "
                         "restricted reader; nothing was executed)") from None


# --- what the two networks' checkpoints hold ---

REQUIRED_PARAMS = ("num_embeddings", "embed_dim", "hidden_size", "num_layers")
# The LSTM weights of one layer and direction, as `torch.nn.LSTM` names them.
WEIGHT_NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


@dataclass(frozen=True)
class Checkpoint:
    """A BiLSTM checkpoint: the encoder's keyword arguments, its weights, its dictionary."""

    params: dict
    state: dict
    dictionary: dict[str, int]


def is_transformer_checkpoint(raw: Any) -> bool:
    """A fairseq checkpoint (`cfg` and `model`), as opposed to a BiLSTM one (`params`)."""
    return isinstance(raw, dict) and "cfg" in raw and "model" in raw and "params" not in raw


def read_bilstm_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read an official-format LASER BiLSTM checkpoint, its weights as numpy arrays."""
    return bilstm_checkpoint(read_checkpoint(path), path)


def bilstm_checkpoint(raw: Any, path: str | os.PathLike) -> Checkpoint:
    """The BiLSTM checkpoint in what `read_checkpoint` returned, checked."""
    if isinstance(raw, dict) and "params" not in raw and "cfg" in raw:
        raise LaserError(f"{path}: a fairseq transformer checkpoint (LASER3), not a BiLSTM one; "
                         "load it as a model directory with its *.spm and *.cvocab")
    if not isinstance(raw, dict) or not {"params", "model", "dictionary"} <= raw.keys():
        raise LaserError(f"{path}: not a LASER checkpoint (expected keys params, model, dictionary"
                         " of a BiLSTM, or cfg and model of a fairseq transformer)")
    missing = [name for name in REQUIRED_PARAMS if name not in raw["params"]]
    if missing:
        raise LaserError(f"{path}: checkpoint params lack {', '.join(missing)}")
    return Checkpoint(dict(raw["params"]), raw["model"], dict(raw["dictionary"]))


def plain_config(value: Any) -> Any:
    """A pickled config as plain data: Namespace/DictConfig -> dict, ListConfig -> list."""
    if isinstance(value, Namespace):
        return {key: plain_config(item) for key, item in value.state.items()}
    if isinstance(value, (DictContainer, ListContainer)):
        return plain_config(value.state.get("_content"))
    if isinstance(value, ValueNode):
        return plain_config(value.state.get("_val"))
    if isinstance(value, dict):
        return {key: plain_config(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_config(item) for item in value]
    if isinstance(value, PickledObject):  # metadata, where a value was expected
        raise LaserError(f"unexpected {type(value).__name__} object in a checkpoint config")
    return value
