"""Provenance sidecars: OUTPUT.json beside embeddings (model sha256, language, options, shape)."""
from __future__ import annotations

import json
import os
from typing import Optional

from .atomic import atomic_text_output, takes_sidecar
from .sources import expand

SUFFIX = ".json"


def sidecar_path(path: str | os.PathLike) -> str:
    return f"{path}{SUFFIX}"


def write_sidecar(path: str | os.PathLike, record: dict) -> None:
    """Store `record` as the sidecar of `path`, atomically; none beside stdout, a device or a
    FIFO."""
    if not takes_sidecar(path):
        return
    with atomic_text_output(sidecar_path(path)) as f:
        json.dump(record, f, indent=2, ensure_ascii=False)
        f.write("\n")


def read_sidecar(path: str | os.PathLike) -> dict:
    """The sidecar of `path`; empty when there is none or it is not a JSON object."""
    try:
        with open(sidecar_path(path), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def shared_sidecar(spec: str) -> dict:
    """The sidecar of an input's embeddings: its file's, or for a directory, glob or @LIST of
    files the first one's when all of them record the same model (else empty)."""
    paths = [path for path in expand(spec) if not path.endswith(SUFFIX)]
    records = [read_sidecar(path) for path in paths]
    models = {record.get("model_sha256") for record in records}
    return records[0] if records and len(models) == 1 else {}


def embeddings_model(path: str) -> Optional[str]:
    """The model sha256 recorded beside some embeddings, if any."""
    return read_sidecar(path).get("model_sha256")
