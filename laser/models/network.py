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
from .files import LASER1, LASER2, ModelFiles
from .sequences import sentence_ids

BILSTM, TRANSFORMER = "bilstm", "transformer"
LASER3 = "laser3"
# (preprocessing family of the files, network of the checkpoint) -> generation
GENERATIONS = {(LASER1, BILSTM): LASER1, (LASER2, BILSTM): LASER2, (LASER2, TRANSFORMER): LASER3}


@dataclass(frozen=True)
class Network:
    """A loaded encoder network, the ids it reads and the generation of its model."""

    module: Any  # a torch nn.Module, or an OnnxEncoder (`laser.models.onnx_cache`)
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


def load_network(files: ModelFiles) -> Network:
    """The torch network of a model directory, of the kind its checkpoint holds."""
    from .bilstm import BiLSTMEncoder, bilstm_checkpoint
    from .checkpoint import read_checkpoint
    from .transformer import is_transformer_checkpoint, load_transformer
    raw = read_checkpoint(files.encoder)
    kind = TRANSFORMER if is_transformer_checkpoint(raw) else BILSTM
    found = generation_of(files, kind)
    if kind == TRANSFORMER:
        loaded = load_transformer(raw, files.encoder, files.spm_vocab)
        config = loaded.module.config
        return Network(loaded.module, loaded.dictionary, kind, found, config.pooling,
                       config.prepend_bos)
    checkpoint = bilstm_checkpoint(raw, files.encoder)
    return Network(BiLSTMEncoder.from_checkpoint(checkpoint), checkpoint.dictionary, kind, found)
