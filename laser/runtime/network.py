"""The model layer: a model = preprocessing (from the directory's files) + network (from the
checkpoint's content), and together they name its generation.

| generation | preprocessing (files) | network (checkpoint) | pooling |
| --- | --- | --- | --- |
| laser1 | Moses + fastBPE (`*.fcodes`) | BiLSTM (`params`) | max |
| laser2 | SPMApply + SentencePiece (`*.spm`) | BiLSTM (`params`) | max |
| laser3 | SPMApply + SentencePiece (`*.spm`, `*.cvocab`) | fairseq transformer (`cfg`) | max or `<s>` |

A new network is one module with a loader returning a `Network`, plus a row in `GENERATIONS`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import LaserError
from ..optional import require
from ..models.checkpoint import bilstm_checkpoint, is_transformer_checkpoint, read_checkpoint
from ..models.files import LASER1, LASER2, ModelFiles
from .sequences import sentence_ids

BILSTM, TRANSFORMER = "bilstm", "transformer"
LASER3 = "laser3"
# (preprocessing family of the files, network of the checkpoint) -> generation
GENERATIONS = {(LASER1, BILSTM): LASER1, (LASER2, BILSTM): LASER2, (LASER2, TRANSFORMER): LASER3}


@dataclass(frozen=True)
class Network:
    """A loaded encoder network, the ids it reads and the generation of its model."""

    module: Any  # a torch nn.Module, or an OnnxEncoder (`laser.runtime.onnx_cache`)
    dictionary: dict[str, int]
    kind: str  # bilstm or transformer
    generation: str  # laser1, laser2 or laser3
    pooling: str = "maxpool"  # maxpool or cls
    prepend_bos: bool = False

    def token_ids(self, line: str) -> list[int]:
        """The ids of a subword line: [<s>] if the network wants it, the pieces, </s>."""
        return sentence_ids(self.dictionary, line, bos=self.prepend_bos)

    def describe(self) -> dict[str, Any]:
        """What provenance records say about the network."""
        return {"kind": self.kind, "pooling": self.pooling, "prepend_bos": self.prepend_bos,
                "dim": self.module.output_dim, "dictionary_size": len(self.dictionary)}


def generation_of(files: ModelFiles, kind: str) -> str:
    """The generation of a model of these files and a network of this kind; refuses a mismatch."""
    found = GENERATIONS.get((files.family, kind))
    if found is None:
        raise LaserError(f"{files.encoder}: a {kind} checkpoint cannot be used with "
                         f"{files.family.upper()} preprocessing files (a transformer checkpoint "
                         "needs a SentencePiece model, *.spm, and its *.cvocab)")
    return found


@dataclass(frozen=True)
class NetworkCheckpoint:
    """A model's checkpoint as read (numpy weights), the kind of network it holds and the
    generation of the model."""

    raw: Any
    kind: str
    generation: str


def read_network_checkpoint(files: ModelFiles) -> NetworkCheckpoint:
    """The checkpoint of a model directory, its network kind checked against the files."""
    raw = read_checkpoint(files.encoder)
    kind = TRANSFORMER if is_transformer_checkpoint(raw) else BILSTM
    return NetworkCheckpoint(raw, kind, generation_of(files, kind))


def torch_network(checkpoint: NetworkCheckpoint, files: ModelFiles) -> Network:
    """The checkpoint's network as a torch module (needs the `torch` extra)."""
    require("torch", f"{files.encoder}: a LASER3 transformer model" if checkpoint.kind == TRANSFORMER
            else f"{files.encoder}: a BiLSTM run in torch (--runtime torch, --quantize fp16, a GPU)")
    from .bilstm import BiLSTMEncoder
    from .transformer import load_transformer
    if checkpoint.kind == TRANSFORMER:
        loaded = load_transformer(checkpoint.raw, files.encoder, files.spm_vocab)
        config = loaded.module.config
        return Network(loaded.module, loaded.dictionary, checkpoint.kind, checkpoint.generation,
                       config.pooling, config.prepend_bos)
    bilstm = bilstm_checkpoint(checkpoint.raw, files.encoder)
    return Network(BiLSTMEncoder.from_checkpoint(bilstm), bilstm.dictionary, checkpoint.kind,
                   checkpoint.generation)
