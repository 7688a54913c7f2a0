"""The work directory of `laser mine`: one folder per stage holding its shard files and a
manifest (`manifest.json`) of what they depend on (input fingerprints, options, the stages
before), which shard tasks are done, and the stage's wall and CPU time. A re-run keeps a stage
whose dependencies are unchanged and runs only its missing tasks; a stage whose dependencies
changed starts again from an empty folder, and so does every stage after it (their
dependencies name its key)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional, Protocol

from ..errors import LaserError
from .shards import read_json
from ..io.atomic import atomic_text_output, remove_temp_files
from ..io.locks import create_work_dir, holds
from ..io.sources import expand
from ..progress import task_progress

MANIFEST = "manifest.json"
SHARD_LINES = 100_000


class Task(Protocol):
    """A shard task: idempotent, picklable, free of Ray; `run` writes its files (atomically)
    and returns what the manifest records of it."""

    name: str

    def outputs(self) -> list[str]: ...

    def run(self) -> dict: ...


@dataclass
class Stage:
    """A stage's folder and manifest: `depends` is everything its files depend on."""

    directory: Path
    depends: dict
    done: dict[str, dict] = field(default_factory=dict)
    wall_s: float = 0.0
    cpu_s: float = 0.0

    @property
    def key(self) -> str:
        """A digest of the dependencies, which the stages after this one depend on."""
        return key_of(self.depends)

    @classmethod
    def open(cls, directory: Path, depends: dict) -> "Stage":
        """The stage in `directory`: kept when its manifest records the same dependencies,
        else emptied."""
        depends = json.loads(json.dumps(depends))  # tuples as lists, as read back
        stored = read_json(directory / MANIFEST)
        if stored.get("depends") != depends:
            if directory.exists():
                shutil.rmtree(directory)
            stored = {}
        create_work_dir(directory)
        if holds(directory.parent):  # what a killed run was writing: no other run writes here
            remove_temp_files(directory)
        return cls(directory, depends, stored.get("done", {}), stored.get("wall_s", 0.0),
                   stored.get("cpu_s", 0.0))

    def path(self, name: str) -> str:
        return str(self.directory / name)

    def is_done(self, task: Task) -> bool:
        return task.name in self.done and all(os.path.exists(path) for path in task.outputs())

    def mark_done(self, task: Task, record: dict, cpu_s: float) -> None:
        self.done[task.name] = record
        self.cpu_s += cpu_s
        self.save()

    def save(self) -> None:
        record = {"depends": self.depends, "key": self.key, "wall_s": round(self.wall_s, 3),
                  "cpu_s": round(self.cpu_s, 3), "done": self.done}
        with atomic_text_output(str(self.directory / MANIFEST)) as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")


def key_of(depends: dict) -> str:
    """A short digest of what something depends on."""
    text = json.dumps(depends, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def timed(task: Task) -> tuple[dict, float]:
    """Run a task; its record and the CPU seconds its process spent on it."""
    started = time.process_time()
    record = task.run()
    return record, time.process_time() - started


# Runs tasks and calls back (task, record, cpu seconds) as each finishes: in this process, or
# on Ray (`laser.distributed.ray_tasks`).
Runner = Callable[[list, Callable[[Task, dict, float], None]], None]


def in_process(tasks: list, done: Callable[[Task, dict, float], None]) -> None:
    for task in tasks:
        done(task, *timed(task))


@dataclass(frozen=True)
class WorkOptions:
    """Where the stages keep their shards (`work_dir`), shards of `shard_lines` lines (of
    sentences, to embed and search), how tasks run (`runner`: here, or on Ray) and whether
    progress (and what a resumed run found done) is shown on stderr."""

    work_dir: str
    shard_lines: int = SHARD_LINES
    runner: Runner = in_process
    progress: bool = False
    chunk_lines: int = 10000


def run_stage(stage: Stage, tasks: Iterable[Task], runner: Runner = in_process,
              progress: bool = False, what: str = "") -> None:
    """Run the tasks the stage lacks, recording each as it finishes, and the stage's time."""
    missing = [task for task in tasks if not stage.is_done(task)]
    if not missing:
        return
    started = time.perf_counter()
    with task_progress(progress, what or stage.directory.name, len(missing)) as bar:
        def done(task: Task, record: dict, cpu_s: float) -> None:
            stage.mark_done(task, record, cpu_s)
            bar.update()
        try:
            runner(missing, done)
        finally:
            stage.wall_s += time.perf_counter() - started
            stage.save()


def fingerprint(spec: str) -> list:
    """What identifies the files of an input without reading them: path, size, mtime."""
    found = []
    for path in expand(spec):
        try:
            status = os.stat(path)
        except OSError as error:
            raise LaserError(f"{path}: {(error.strerror or str(error)).lower()}") from None
        found.append([os.path.abspath(path), status.st_size, status.st_mtime_ns])
    return found


def holds_finished_tasks(root: str | os.PathLike) -> bool:
    """Whether the manifest of `root` (`laser embed --ray`) or of a stage under it (`laser
    mine`) recorded a finished task (something a re-run reuses)."""
    root = Path(root)
    return any(read_json(path).get("done")
               for path in (root / MANIFEST, *root.glob(f"*/{MANIFEST}")))


def directory_bytes(root: str | os.PathLike) -> int:
    """The size of the files under `root`, in bytes."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass  # removed meanwhile
    return total


def checked_file(path: str, what: Optional[str] = None) -> str:
    """A shard file a stage reads, or one line saying it is missing."""
    if not os.path.isfile(path):
        raise LaserError(f"{path}: {what or 'shard'} missing from the work directory; run the "
                         "command again to compute it")
    return path
