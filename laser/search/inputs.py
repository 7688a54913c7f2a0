"""Where the embeddings of a sentence file come from: a precomputed `.npy`/raw file, or the text
embedded now with a model (into a temporary file, memory-mapped). Shared by knn, mine, score and
eval."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import is_stream
from ..io.bad_lines import BadLines
from ..io.embeddings import open_embeddings
from ..io.sources import FAIL
from ..models.resolve import ModelRequest
from ..models.spaces import Origin, embeddings_origin, model_origin

if TYPE_CHECKING:
    from ..encoder import Encoder
    from ..models.files import ModelFiles

# Loads the model on first call only: precomputed inputs never load one.
EncoderLoader = Callable[[], "Encoder"]


@dataclass(frozen=True)
class EmbeddingSource:
    """One side's input: `embeddings` (precomputed), else `text` embedded now in `lang`.

    `option` names the command-line prefix of this side (`--src-`, `--trg-`) in messages;
    `model` names this side's own model (a directory or name), else the command's is used.
    """

    text: Optional[str] = None
    embeddings: Optional[str] = None
    lang: Optional[str] = None
    dim: Optional[int] = None
    fp16: bool = False
    option: str = "--"
    model: Optional[str] = None  # this side's own model (--src-model, --trg-model), if named

    @property
    def name(self) -> str:
        return self.embeddings or self.text or "input"

    def origin(self, encoder: EncoderLoader) -> Origin:
        """The model and space of these vectors: from the embeddings' sidecar, else those of the
        model that embeds the text now (resolved, not loaded, when `encoder` knows its files)."""
        if self.embeddings:
            return embeddings_origin(self.embeddings)
        return model_origin(loader_files(encoder), self.text or self.name)

    def request(self, source: Optional[str] = None) -> ModelRequest:
        """What this side asks of the model choice (`choose_models`): its own model and language,
        or the origin of its precomputed embeddings; `source` names its text in messages
        (default: the file)."""
        origin = embeddings_origin(self.embeddings) if self.embeddings else None
        return ModelRequest(self.model, self.lang, source or self.text or self.name, origin)


def loader_files(encoder: EncoderLoader) -> ModelFiles:
    """The model files of a loader: its `files` when it has them (no loading), else the loaded
    encoder's."""
    files = getattr(encoder, "files", None)
    return files if files is not None else encoder().files


@contextmanager
def embedded_text(encoder, text_path: str, lang: str, workdir: Optional[str] = None,
                  bad: BadLines = FAIL) -> Iterator[np.ndarray]:
    """Embed each line of a text file (read as `bad` says) into a temporary .npy,
    memory-mapped (removed afterwards)."""
    from ..pipeline import EmbedOptions, embed_file
    with tempfile.TemporaryDirectory(prefix=".laser-embed-", dir=workdir) as tmp:
        path = os.path.join(tmp, "embeddings.npy")
        embed_file(encoder, text_path, path, EmbedOptions(lang, provenance=False,
                                                          bad_lines=bad))
        yield open_embeddings(path)


@contextmanager
def sentence_embeddings(source: EmbeddingSource, encoder: EncoderLoader,
                        workdir: Optional[str] = None,
                        bad: BadLines = FAIL) -> Iterator[tuple[np.ndarray, str]]:
    """(matrix, name) of one input: precomputed, or embedded now with `encoder()` (its lines
    read as `bad` says)."""
    if source.embeddings:
        yield open_embeddings(source.embeddings, source.dim, source.fp16), source.embeddings
        return
    if not (source.text and source.lang):
        raise LaserError(f"{source.name}: pass {source.option}embeddings, or {source.option}lang "
                         "to embed it with the model")
    with embedded_text(encoder(), source.text, source.lang, workdir, bad) as matrix:
        yield matrix, source.text


def work_dir(output: str) -> Optional[str]:
    """Where temporary embeddings go: beside the output file (stdout, a device or a FIFO: the
    system temp dir)."""
    return None if is_stream(output) else os.path.dirname(os.path.abspath(output))
