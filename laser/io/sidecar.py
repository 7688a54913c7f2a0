"""Provenance sidecars: OUTPUT.json beside embeddings (model sha256, language, options, shape)."""
from __future__ import annotations

import json
import os
from typing import Optional

from ..errors import LaserError
from .atomic import atomic_text_output, takes_sidecar
from .sources import expand

SUFFIX = ".json"


def sidecar_path(path: str | os.PathLike) -> str:
    return f"{path}{SUFFIX}"


def write_sidecar(path: str | os.PathLike, record: dict) -> None:
    """Store `record` as the sidecar of `path`, atomically; none beside stdout, a device or a
    FIFO. A new sidecar gets the mode and group of `path` (a private output, a private record)."""
    if not takes_sidecar(path):
        return
    with atomic_text_output(sidecar_path(path), like=path) as f:
        json.dump(record, f, indent=2, ensure_ascii=False)
        f.write("\n")


def sidecar_outputs(option: str, path: str | os.PathLike) -> dict[str, str]:
    """The sidecar of the output `option` as one more output of its command (`check_outputs`:
    an existing read-only sidecar is refused before any work, as the output would be replaced
    and its record not); none beside stdout, a device or a FIFO."""
    return {f"{option}'s sidecar": sidecar_path(path)} if takes_sidecar(path) else {}


def read_sidecar(path: str | os.PathLike) -> dict:
    """The sidecar of `path`, empty when there is none; one that cannot be read, is not JSON
    or not a JSON object is damaged: a LaserError naming it, never taken for absence."""
    name = sidecar_path(path)
    try:
        with open(name, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise LaserError(f"{name}: cannot read the sidecar "
                         f"({(error.strerror or str(error)).lower()})") from None
    except UnicodeDecodeError:
        raise damaged(name, "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise damaged(name, f"not valid JSON ({error.msg} at line {error.lineno} column "
                            f"{error.colno})") from None
    if not isinstance(record, dict):
        raise damaged(name, f"a JSON {type(record).__name__}, not an object")
    return record


def damaged(name: str, what: str) -> LaserError:
    return LaserError(f"{name}: damaged sidecar, {what}; repair it, or delete it to go on "
                      "without its record")


def shared_sidecar(spec: str | os.PathLike) -> dict:
    """The sidecar of an input's embeddings: its file's, or for a directory, glob or @LIST of
    files the first one's when all of them record the same model (else empty)."""
    paths = [path for path in expand(spec) if not path.endswith(SUFFIX)]
    records = [read_sidecar(path) for path in paths]
    models = {record.get("model_sha256") for record in records}
    return records[0] if records and len(models) == 1 else {}


def embeddings_model(path: str) -> Optional[str]:
    """The model sha256 recorded beside some embeddings, if any."""
    return read_sidecar(path).get("model_sha256")
