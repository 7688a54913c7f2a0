"""Which official models exist, and where does the download cache keep them? The shipped
manifest, the cache ($LASER_HOME) and its download records, and where the default model ships."""
from __future__ import annotations

import difflib
import json
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

from ..errors import LaserError
from ..io.atomic import atomic_text_output

HOME_ENV = "LASER_HOME"
MIRROR_ENV = "LASER_DOWNLOAD_URL"
# The default model: inside the package of an installed wheel or sdist (setup.py copies it
# there from the repository's models/default, its one source), else in a checkout's models/.
PACKAGED_MODEL_DIR = Path(__file__).resolve().parent / "default"
CHECKOUT_MODEL_DIR = Path(__file__).resolve().parents[2] / "models" / "default"
SHIPPED_MODEL_DIRS = (PACKAGED_MODEL_DIR, CHECKOUT_MODEL_DIR)
MANIFEST = Path(__file__).resolve().parents[1] / "data" / "models.json"
RECORD = "download-record.json"
DEFAULT = "default"
NOTES_SHOWN = ".notes-shown"


@dataclass(frozen=True)
class FileSpec:
    url: str
    size: Optional[int]
    sha256: Optional[str]

    @property
    def name(self) -> str:
        return urlsplit(self.url).path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str
    format: str
    description: str
    files: tuple[FileSpec, ...]
    languages: tuple[str, ...] = ()  # FLORES-200 codes this model is the official choice for
    space: str = ""  # the embedding space its vectors live in (laser.models.spaces); "": its own

    @property
    def size(self) -> Optional[int]:
        """Total bytes when the manifest knows every file's size."""
        sizes = [spec.size for spec in self.files]
        return None if None in sizes else sum(sizes)


@dataclass(frozen=True)
class Manifest:
    base_url: str
    models: dict[str, ModelSpec]


@dataclass(frozen=True)
class ModelStatus:
    name: str
    family: str
    state: str  # shipped, downloaded, partial, not downloaded, not shipped
    size: Optional[int]
    path: Optional[Path]
    version: Optional[str] = None  # the shipped model's versioned name, e.g. laser-default-v2
    space: Optional[str] = None  # the embedding space of its vectors (laser.models.spaces)

    @property
    def label(self) -> str:
        """The name `--model` takes, with the versioned name when there is one."""
        return f"{self.name} ({self.version})" if self.version else self.name


def load_manifest(path: Path = MANIFEST) -> Manifest:
    """The model manifest shipped in the package (laser/data/models.json)."""
    return _load_manifest(str(path))


@lru_cache(maxsize=4)
def _load_manifest(path: str) -> Manifest:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    models = {}
    for entry in data["models"]:
        files = tuple(FileSpec(f["url"], f.get("size"), f.get("sha256")) for f in entry["files"])
        models[entry["name"]] = ModelSpec(entry["name"], entry["family"], entry["format"],
                                          entry["description"], files,
                                          tuple(entry.get("languages", ())),
                                          entry.get("space") or entry["name"])
    return Manifest(data["base_url"].rstrip("/"), models)


def find_model(name: str, unknown: str = "unknown model") -> ModelSpec:
    """The manifest entry of `name`, or an error suggesting close names."""
    models = load_manifest().models
    if name in models:
        return models[name]
    close = difflib.get_close_matches(name, list(models) + [DEFAULT], n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise LaserError(f"{name}: {unknown}{hint}; `laser models` lists the models")


def laser_home() -> Path:
    """The download cache: $LASER_HOME, else $XDG_CACHE_HOME/laser, else ~/.cache/laser."""
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "laser"


def model_path(name: str, home: Optional[Path] = None) -> Path:
    """Where the model `name` lives once downloaded: one folder per model."""
    return (home or laser_home()) / name


def note_once(note: str) -> None:
    """`note` on stderr unless this $LASER_HOME has shown it before: a hint is news once, not on
    every run (the notes shown are remembered in $LASER_HOME/NOTES_SHOWN)."""
    shown = laser_home() / NOTES_SHOWN
    try:
        if note in shown.read_text(encoding="utf-8").splitlines():
            return
    except OSError:
        pass
    print(f"laser: {note}", file=sys.stderr)
    try:
        shown.parent.mkdir(parents=True, exist_ok=True)
        with open(shown, "a", encoding="utf-8") as record:
            record.write(note + "\n")
    except OSError:
        pass  # an unwritable cache: the note comes again next time


def mirror_url(url: str, base_url: Optional[str] = None) -> str:
    """`url` on the mirror `base_url` (or $LASER_DOWNLOAD_URL), which has the official layout."""
    base_url = base_url or os.environ.get(MIRROR_ENV)
    official = load_manifest().base_url
    if not base_url or not url.startswith(official + "/"):
        return url
    return base_url.rstrip("/") + url[len(official):]


def read_record(directory: Path) -> dict[str, dict]:
    """The size and sha256 of each file downloaded into `directory`, by file name."""
    try:
        return json.loads((directory / RECORD).read_text(encoding="utf-8"))["files"]
    except FileNotFoundError:
        return {}
    except (ValueError, KeyError, TypeError):
        raise LaserError(f"{directory / RECORD}: unreadable download record; delete it and "
                         "download again") from None


def write_record(directory: Path, name: str, files: dict[str, dict]) -> None:
    """Store the download record of `directory` atomically."""
    with atomic_text_output(str(directory / RECORD)) as f:
        json.dump({"model": name, "files": files}, f, indent=2, sort_keys=True)
        f.write("\n")


def missing_files(spec: ModelSpec, directory: Path) -> list[str]:
    """The files of `spec` not (completely) downloaded into `directory`, by the record's sizes."""
    record = read_record(directory)
    missing = []
    for file in spec.files:
        path, known = directory / file.name, record.get(file.name)
        if not known or not path.is_file() or path.stat().st_size != known["size"]:
            missing.append(file.name)
    return missing


def shipped_model_dir() -> Optional[Path]:
    """Where this installation's default model is, if it has one."""
    return next((path for path in SHIPPED_MODEL_DIRS if any(path.glob("*.pt"))), None)
