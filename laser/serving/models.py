"""The models a server embeds with, chosen as `laser embed` chooses them, never downloaded."""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..errors import LaserError
from ..models.installed import model_directory, named_model_dir
from ..models.options import ModelOptions
from ..models.resolve import ModelRequest, choose_models
from ..models.spaces import Origin, model_origin
from .limits import RequestError

if TYPE_CHECKING:
    from .. import Encoder


@dataclass(frozen=True)
class ServedModel:
    """A loaded model and what requests and /info call it by."""

    name: str
    encoder: Encoder
    origin: Origin  # the model's name, embedding space and checkpoint sha256

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def describe(self) -> dict:
        return {"name": self.name, "dim": self.dim, "family": self.encoder.family,
                "model": self.origin.model, "space": self.origin.space,
                "sha256": self.origin.sha256, "runtime": self.encoder.runtime,
                "directory": str(self.encoder.files.encoder.parent)}


def split_model_spec(spec: str) -> tuple[str, str]:
    """`NAME=DIR`, a model name or a directory: (the name requests use, what to load)."""
    name, equals, target = spec.partition("=")
    if equals:
        if not name or not target:
            raise LaserError(f"--model {spec!r}: write NAME=DIR, a model name or a directory")
        return name, target
    return Path(spec.rstrip("/")).name or spec, spec


class ServedModels:
    """With `--model`: those models, loaded at start, the first one answering requests that name
    none. Without: each request's model is the one its language picks (the language's official
    model when it is downloaded, else the shipped default), or one it names (`default` or a
    downloaded model); loaded on first use and kept in a cache of `cache_size` models, the least
    recently used one dropped first."""

    def __init__(self, specs: list[str], options: ModelOptions, cache_size: int = 3):
        self.options = options
        self.fixed = bool(specs)
        self.cache_size = max(cache_size, len(specs))
        self._cache: OrderedDict[Path, ServedModel] = OrderedDict()
        self._names: dict[str, Path] = {}  # request names and languages -> model directory
        self._lock = threading.Lock()
        for spec in specs:
            name, target = split_model_spec(spec)
            if name in self._names:
                raise LaserError(f"--model: two models are called {name!r}; name them NAME=DIR")
            directory = Path(model_directory(target)).resolve()
            self._load(name, directory)
            self._names[name] = directory
        if not self.fixed:
            self.model(None, "en")  # the shipped default, so that /health means ready

    def loaded(self) -> list[ServedModel]:
        with self._lock:
            return list(self._cache.values())

    def model(self, name: Optional[str], lang: str) -> ServedModel:
        """The model of a request naming `name` (None: the server's choice for `lang`), loaded
        now if need be: call it off the event loop unless `ready` says it is loaded."""
        with self._lock:
            found = self._cached(name, lang)
        if found is not None:
            return found
        name, directory = self._choose(name, lang)
        return self._load(name, directory)

    def ready(self, name: Optional[str], lang: str) -> Optional[ServedModel]:
        """The model of a request when it is loaded already (see `model`), else None."""
        with self._lock:
            return self._cached(name, lang)

    def _cached(self, name: Optional[str], lang: str) -> Optional[ServedModel]:
        key = self._names.get(name if name is not None else (
            next(iter(self._names)) if self.fixed else f"lang:{lang}"))
        if key is None or key not in self._cache:
            return None
        self._cache.move_to_end(key)
        return self._cache[key]

    def _choose(self, name: Optional[str], lang: str) -> tuple[str, Path]:
        """(name, directory) of a model not yet loaded; 404 for a model the server lacks."""
        if self.fixed:
            raise RequestError(404, f"model {name!r} is not served here; choose one of "
                                    f"{', '.join(self._names)}", "model_not_found")
        try:  # a request names models, never directories
            if name is not None:
                directory = named_model_dir(name)
            else:  # as `laser embed --lang` chooses
                choice, = choose_models(self.options, [ModelRequest(lang=lang)])
                directory = choice.files.encoder.parent
        except LaserError as error:
            raise RequestError(404, str(error), "model_not_found") from None
        directory = directory.resolve()
        with self._lock:
            self._names[name if name is not None else f"lang:{lang}"] = directory
        return (name or directory.name), directory

    def _load(self, name: str, directory: Path) -> ServedModel:
        """The model in `directory` (resolved: the cache's key), loaded unless it is cached."""
        from .. import Encoder
        with self._lock:
            if directory in self._cache:
                return self._cache[directory]
        encoder = Encoder.load(str(directory), **self.options.running())
        served = ServedModel(name, encoder, model_origin(encoder.files, "the queries"))
        with self._lock:
            self._cache[directory] = served
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return served
