"""Safe checkpoint reading: tensors, plain data and known config objects, never arbitrary code.

Checkpoints are read with torch's restricted unpickler (`torch.load(weights_only=True)`), which
refuses every global outside its allow-list of tensor-rebuilding functions. fairseq checkpoints
(LASER3) also pickle their config: an `argparse.Namespace`, or omegaconf objects (`DictConfig`,
`ListConfig`, value nodes and their metadata). Each of those names is mapped to an inert stand-in
class defined here, which only stores the pickled state; `plain_config` then turns a config into
dicts, lists and scalars. Neither omegaconf nor fairseq is imported or needed. Any other global
(a class, a function such as `os.system`) is refused with a one-line `LaserError`.
"""
from __future__ import annotations

import collections
import os
import re
from typing import Any

import torch

from ..errors import LaserError


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

_GLOBAL_IN_ERROR = re.compile(r"GLOBAL (\S+)|unrecognized function (\S+)|got (<class '[^']+'>)")


def read_checkpoint(path: str | os.PathLike) -> Any:
    """The unpickled content of a `torch.save` file; refuses code, unknown classes, bad files."""
    try:
        with torch.serialization.safe_globals([(cls, name) for name, cls in STAND_INS.items()]):
            return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise LaserError(f"{path}: encoder checkpoint not found") from None
    except IsADirectoryError:
        raise LaserError(f"{path}: is a directory, not a checkpoint") from None
    except Exception as error:  # torch.load raises many types on a corrupt file
        raise _refusal(path, error) from None


def _refusal(path: str | os.PathLike, error: Exception) -> LaserError:
    """One line saying why a checkpoint was not loaded, naming the refused global if any."""
    found = _GLOBAL_IN_ERROR.search(str(error))
    if found:
        name = next(group for group in found.groups() if group)
        return LaserError(f"{path}: refused: the checkpoint's pickle asks for {name}, which is "
                          "neither a tensor nor a known config class (loaded with "
                          "weights_only=True; nothing was executed)")
    return LaserError(f"{path}: not a loadable checkpoint: corrupt, truncated, or holding "
                      "Python objects beyond tensors and plain data (loaded with "
                      "weights_only=True)")


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
