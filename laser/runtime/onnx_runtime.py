"""ONNX Runtime sessions of the encoder graphs of `laser.runtime.onnx_graph`, on numpy only.

Neither torch nor onnx is imported here: a cached .onnx file and this module embed id sequences
through the same batched loop as the torch networks (`laser.runtime.sequences.embed_in_batches`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

if TYPE_CHECKING:
    import onnxruntime

from ..errors import LaserError
from .sequences import BatchPool, embed_in_batches

# The most padded tokens one batch holds, whatever max_tokens allows: small batches ran 1-49%
# faster than 6,000 tokens, and 500 was within 5% of the best size for every model and precision
# measured (bench/batch_tokens.py, docs/performance.md).
BATCH_TOKENS = 500


def _short_reason(message: str) -> str:
    """ONNX Runtime's error message on one line, without its status prefix and the C++ source
    location and signature it names."""
    message = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", message.splitlines()[-1])
    return re.sub(r":/\S*onnxruntime_src/.*?\) (?=[A-Z])", ": ", message)


def requested_threads() -> Optional[int]:
    """The thread count set in OMP_NUM_THREADS, as torch reads it (a Ray worker sets it to its
    share of the node); None when unset or not a positive number."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass
class OnnxEncoder:
    """An ONNX Runtime session of a BiLSTM graph, called like the torch network on numpy.

    The session runs each batch on one thread, and `workers` batches at a time: an LSTM's
    per-step products are too small to share between cores without waiting at every step, while
    whole batches on separate cores never wait (docs/performance.md)."""

    session: onnxruntime.InferenceSession
    output_dim: int
    workers: int = 1
    pool: BatchPool = field(init=False, repr=False)

    def __post_init__(self):
        self.pool = BatchPool(self.workers)

    @classmethod
    def load(cls, model: Union[bytes, str, os.PathLike],
             threads: Optional[int] = None) -> "OnnxEncoder":
        """A session of `model` (a serialized graph or an .onnx file) on the CPU running `threads`
        batches at a time (default: OMP_NUM_THREADS, else one per core)."""
        import onnxruntime
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        source = model if isinstance(model, bytes) else str(model)
        try:
            session = onnxruntime.InferenceSession(source, options,
                                                   providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001 - ONNX Runtime's errors derive from Exception
            name = "the graph" if isinstance(source, bytes) else source
            reason = _short_reason(str(error).strip() or type(error).__name__)
            raise LaserError(f"onnxruntime {onnxruntime.__version__} cannot load {name}: {reason} "
                             "(--runtime torch runs the network in torch)") from None
        width = session.get_outputs()[0].shape[1]
        return cls(session, int(width), threads or requested_threads() or usable_cores())

    def __call__(self, tokens: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        return self.session.run(None, {"tokens": tokens, "lengths": lengths})[0]

    @property
    def metadata(self) -> dict[str, str]:
        """The graph's string properties (`onnx_cache` keeps the network's facts there)."""
        return self.session.get_modelmeta().custom_metadata_map

    @property
    def runtime(self) -> str:
        """What runs the graph, for provenance records: `onnxruntime VERSION`."""
        import onnxruntime
        return f"onnxruntime {onnxruntime.__version__}"

    def batch_tokens(self, max_tokens: int) -> int:
        """The padded tokens one batch may hold: its share of max_tokens among the batches run
        at once, at most BATCH_TOKENS."""
        return max(1, min(max_tokens, self.workers * BATCH_TOKENS) // self.workers)

    def embed(self, sequences: Sequence[Sequence[int]], max_tokens: int,
              max_sentences: Optional[int] = None) -> np.ndarray:
        """Id sequences embedded in length-sorted batches as `embed_sequences` makes them, of at
        most `batch_tokens(max_tokens)` each, rows in input order."""
        budget = self.workers * self.batch_tokens(max_tokens)  # shared by the batches in flight
        return embed_in_batches(self, self.output_dim, sequences, budget, max_sentences,
                                self.pool)
