"""Optional dependencies: imported by name when a feature needs them, else a one-line error
naming the package extra that installs them.

The base install (`pip install laser-toolkit`) embeds, searches and mines on ONNX Runtime and
numpy. torch (training, LASER3 transformers, GPUs, `--runtime torch`), scipy (k-NN graphs) and
starlette + uvicorn + orjson (`laser serve`) are extras.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from .errors import LaserError

# top-level module -> the extra of laser-toolkit that installs it
EXTRAS = {"torch": "torch", "scipy": "graph", "starlette": "serve", "uvicorn": "serve",
          "orjson": "serve"}
# The extras that bring torch, whose default build from PyPI brings CUDA (several GB)
TORCH_EXTRAS = ("torch", "train", "all")
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def extra_hint(extra: str) -> str:
    """What to run to install the extra `extra` of laser-toolkit (torch's CPU build with it)."""
    hint = f"pip install 'laser-toolkit[{extra}]'"
    if extra in TORCH_EXTRAS:
        hint += (f" --extra-index-url {TORCH_CPU_INDEX} (torch's CPU build; leave the index "
                 "out for a CUDA GPU)")
    return hint


def install_hint(module: str) -> str:
    """What to run to get `module`: pip install 'laser-toolkit[EXTRA]' (see `extra_hint`)."""
    return extra_hint(EXTRAS[module])


def require(module: str, purpose: str) -> ModuleType:
    """`module` imported, or a LaserError saying that `purpose` needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise LaserError(f"{purpose} needs {top}, which is not installed: "
                         f"{install_hint(top)}") from None
