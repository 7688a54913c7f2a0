"""BiLSTM networks on ONNX Runtime, their graphs built once per checkpoint and cached.

On the CPU a BiLSTM checkpoint (LASER1, LASER2, the shipped default) runs as an ONNX graph
(`laser.runtime.onnx_graph`) in ONNX Runtime: in float32 it gives the torch network's rows to
~1e-7, faster; `quantize="int8"` runs its int8 version. Each graph is written once, as
`$LASER_HOME/onnx/<checkpoint sha256>.<fp32|int8>.v<GRAPH_VERSION>.onnx`, with what the encoder
needs besides the weights (the dictionary, the pooling) in the graph's metadata. A later run
loads that file alone: neither the checkpoint is unpickled nor torch imported, which is most of
a command's start-up. Where the folder cannot be written, the graph built in memory serves the
run (with one warning). Deleting the folder is always safe.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Optional

from ..errors import LaserError
from ..io.atomic import atomic_path
from ..models.checkpoint import Checkpoint
from ..models.files import ModelFiles
from .network import BILSTM, Network, generation_of
from .onnx_runtime import OnnxEncoder
from ..models.registry import laser_home

CACHE_DIR = "onnx"  # under $LASER_HOME
# Part of the cached file's name: raise it when the graph builder, its metadata or the
# quantisation settings change, so that graphs built by an earlier version are not reused.
GRAPH_VERSION = 4
METADATA_KEY = "laser.network"


def precision(quantize: Optional[str]) -> str:
    """The weights' precision in a cached graph's name: fp32, or the quantization."""
    return quantize or "fp32"


def graph_path(sha256: str, quantize: Optional[str] = None) -> Path:
    """Where the graph of the checkpoint with this sha256 is cached."""
    return laser_home() / CACHE_DIR / f"{sha256}.{precision(quantize)}.v{GRAPH_VERSION}.onnx"


def cached_bilstm(files: ModelFiles, quantize: Optional[str]) -> Optional[Network]:
    """The network of `files` as a session of its cached graph, without torch; None when no
    graph of it is cached or the cached file cannot be read (the caller builds it anew)."""
    path = graph_path(files.sha256(), quantize)
    if not path.is_file():
        return None
    try:
        session = OnnxEncoder.load(path)
        facts = json.loads(session.metadata[METADATA_KEY])
    except Exception:  # noqa: BLE001 - ONNX Runtime's errors derive from Exception alone
        return None
    return Network(session, facts["dictionary"], BILSTM, generation_of(files, BILSTM),
                   facts["pooling"], facts["prepend_bos"])


def cache_bilstm(checkpoint: Checkpoint, files: ModelFiles, quantize: Optional[str]) -> Network:
    """The BiLSTM `checkpoint` of `files` as an ONNX Runtime session of its graph, built from the
    numpy weights and cached first."""
    from .onnx_graph import bilstm_graph
    facts = {"dictionary": checkpoint.dictionary, "pooling": "maxpool", "prepend_bos": False}
    graph = bilstm_graph(checkpoint, {METADATA_KEY: json.dumps(facts, ensure_ascii=False)},
                         int8=quantize == "int8")
    path = graph_path(files.sha256(), quantize)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            Path(tmp).write_bytes(graph)
    except (OSError, LaserError) as error:
        warnings.warn(f"the {precision(quantize)} ONNX graph cannot be cached ({error}); "
                      "building it for this run only", stacklevel=4)
    return Network(OnnxEncoder.load(graph), checkpoint.dictionary, BILSTM,
                   generation_of(files, BILSTM))
