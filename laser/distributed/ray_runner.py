"""Running shards on Ray: connect to a runtime, start actors that load the model once, hand
them shards as they free up (Ray restarts a dead actor and retries its task), and assemble
the shards into the output atomically. Ray is imported inside functions only."""
from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from collections import Counter, deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, TextIO

import numpy as np
from tqdm import tqdm

from ..errors import LaserError
from ..io.atomic import is_stream
from ..io.embeddings import EmbeddingWriter, open_embeddings
from ..io.locks import hold_work_dir
from ..lid.files import languages_output
from ..pipeline import (EmbedOptions, EmbedReport, check_embed_job, encoder_fields,
                        finish_report, language_fields)
from .shards import Manifest, Shard, plan_shards
from .work import EncoderSpec, ShardJob, embed_shard, pin_threads

IN_FLIGHT = 2  # tasks queued per actor, so that it never waits for the driver
COPY_ROWS = 65536


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide a job runs: `address` is `local` (a runtime on this machine's cores),
    `auto` (a running cluster) or `ray://host:port`; `workers` actors (default: one per
    `threads` CPUs of the cluster) of `threads` cores each; shards of `shard_lines` lines
    (default: the pipeline's chunk size); finished shards kept in `work_dir` (default: a hidden
    directory beside the output, removed on success); a dead actor restarted `retries` times."""

    address: str = "local"
    workers: Optional[int] = None
    threads: int = 1
    shard_lines: Optional[int] = None
    work_dir: Optional[str] = None
    retries: int = 3


@dataclass
class ShardRun:
    """Which shards this run computed and which it took from the work directory."""

    computed: list[int] = field(default_factory=list)
    reused: list[int] = field(default_factory=list)

    def summary(self) -> str:
        return f"{len(self.computed)} shards computed, {len(self.reused)} reused from earlier runs"


RAY_MISSING = "--ray needs Ray, which is not installed: pip install 'laser-toolkit[ray]'"


def require_ray() -> None:
    """A one-line error naming the `ray` extra when Ray cannot be imported; called before any
    work (and before any shard directory exists)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise LaserError(RAY_MISSING) from None


@contextmanager
def ray_runtime(address: str) -> Iterator[None]:
    """A Ray runtime for the block: this process's own if it has one, else `address`'s
    (shut down afterwards)."""
    require_ray()
    import ray
    if ray.is_initialized():
        yield
        return
    if address == "local":
        ray.init(address="local", include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR")
    else:
        try:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        except ConnectionError as error:
            raise LaserError(f"--ray {address}: {error}") from None
    try:
        yield
    finally:
        ray.shutdown()


class EmbedWorker:
    """A Ray actor's state: one loaded encoder, threads pinned to the actor's CPUs."""

    def __init__(self, spec: EncoderSpec, threads: int):
        pin_threads(threads)
        self.encoder = spec.load()

    def fields(self) -> dict:
        """What the embedding report records about this worker's model."""
        return encoder_fields(self.encoder)

    def embed(self, job: ShardJob) -> dict:
        return embed_shard(self.encoder, job)


def start_actors(worker_class: type, count: int, options: RayOptions, *args) -> list:
    """`count` actors of `worker_class`, each reserving `options.threads` CPUs."""
    import ray
    remote = ray.remote(worker_class).options(
        num_cpus=options.threads, max_restarts=options.retries,
        max_task_retries=options.retries)
    return [remote.remote(*args, options.threads) for _ in range(count)]


def default_workers(options: RayOptions) -> int:
    import ray
    return options.workers or max(1, int(ray.cluster_resources().get("CPU", 1)) // options.threads)


def ray_result(reference):
    """A task's value; a LaserError it raised comes back as the same one-line error."""
    import ray
    try:
        return ray.get(reference)
    except ray.exceptions.RayTaskError as error:
        if isinstance(error.cause, LaserError):
            raise LaserError(str(error.cause)) from None
        raise
    except ray.exceptions.RayActorError as error:
        raise LaserError(f"a Ray worker died and could not be restarted: "
                         f"{str(error).splitlines()[0]}") from None


def run_jobs(actors: list, jobs: Iterable, submit: Callable, on_done: Callable) -> None:
    """Hand `jobs` to `actors` as they free up (`submit(actor, job)` starts a task) and call
    `on_done(job, value)` in completion order. After a LaserError (bad input) no job starts, the
    running ones finish (and are recorded, for a resumed run), then the error is raised."""
    import ray
    queue, pending, failure = deque(jobs), {}, None

    def feed(actor) -> None:
        if queue:
            job = queue.popleft()
            pending[submit(actor, job)] = (actor, job)

    for actor in actors:
        for _ in range(IN_FLIGHT):
            feed(actor)
    try:
        while pending:
            [ready], _ = ray.wait(list(pending), num_returns=1)
            actor, job = pending.pop(ready)
            try:
                value = ray_result(ready)
            except LaserError as error:
                failure = failure or error
                queue.clear()
                continue
            on_done(job, value)
            feed(actor)
    finally:
        for reference in pending:  # after a failure: not retried when the actors are stopped
            ray.cancel(reference)
    if failure:
        raise failure


def stop_actors(actors: list) -> None:
    import ray
    for actor in actors:
        ray.kill(actor)


def default_work_dir(output: str) -> Path:
    """A hidden folder beside the output; for stdout, a device or a FIFO, one of this process in
    the system's temp directory."""
    if is_stream(output):
        return Path(tempfile.gettempdir()) / f".laser-{os.getpid()}.shards"
    target = Path(output)
    return target.parent / f".{target.name}.shards"


def embed_file_on_ray(spec: EncoderSpec, input_path: str, output_path: str,
                      options: EmbedOptions, ray_options: RayOptions = RayOptions(),
                      worker_class: type = EmbedWorker) -> tuple[EmbedReport, ShardRun]:
    """`embed_file` on Ray: the same output, bit for bit, from shards embedded by actors; the
    shards finished by an earlier run of the same job in the same work directory are reused."""
    require_ray()
    check_embed_job(input_path, output_path, options)
    started = time.perf_counter()
    dtype = np.dtype(np.float16 if options.fp16 else np.float32)
    shards = plan_shards(input_path, ray_options.shard_lines or options.chunk_lines)
    work_dir = Path(ray_options.work_dir or default_work_dir(output_path))
    job = {**spec.key(), "lang": options.lang, "dtype": dtype.name,
           "chunk_lines": options.chunk_lines}
    with hold_work_dir(work_dir):
        manifest = Manifest.open(work_dir, job)
        run = ShardRun(reused=[shard.index for shard in shards if manifest.is_done(shard)])
        missing = [shard for shard in shards if not manifest.is_done(shard)]
        if missing or not has_every_model_field(manifest.encoder):
            with ray_runtime(ray_options.address):
                _embed_missing(spec, options, ray_options, worker_class, manifest, missing, run,
                               dtype)
        report = _assemble(manifest, shards, output_path, options, dtype, spec)
        report.seconds = time.perf_counter() - started
        finish_report(report, options)
        if ray_options.work_dir is None:
            shutil.rmtree(work_dir, ignore_errors=True)
    return report, run


def has_every_model_field(fields: Optional[dict]) -> bool:
    """Whether a manifest's record of the workers' model holds every field a sidecar needs now:
    one written by an older laser lacks some, and the workers are asked again (no shard is
    recomputed for it)."""
    own = {"output", "rows", "dtype", "format", "lang"}
    needed = {f.name for f in dataclasses.fields(EmbedReport)
              if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return fields is not None and needed - own <= fields.keys()


def _embed_missing(spec: EncoderSpec, options: EmbedOptions,
                   ray_options: RayOptions, worker_class: type, manifest: Manifest,
                   missing: list[Shard], run: ShardRun, dtype: np.dtype) -> None:
    """Embed the shards the manifest lacks, recording each as it finishes."""
    workers = min(default_workers(ray_options), max(1, len(missing)))
    actors = start_actors(worker_class, workers, ray_options, spec)
    try:
        fields = ray_result(actors[0].fields.remote())
        if fields["model_sha256"] != manifest.job["model_sha256"]:
            raise LaserError(f"{spec.files.encoder}: the workers see a different model file than "
                             "this machine; put models on a path every node shares")
        manifest.encoder = fields
        manifest.save()
        jobs = [ShardJob(shard, str(manifest.shard_path(shard)), options.lang, dtype.name,
                         options.chunk_lines, manifest.languages_path(shard),
                         options.bad_lines.policy)
                for shard in missing]
        with tqdm(total=len(jobs), unit="shard", disable=None if options.progress else True,
                  leave=False) as bar:
            def done(job: ShardJob, value: dict) -> None:
                found = value["bad_lines"]
                manifest.mark_done(job.shard, found if found["count"] else None)
                run.computed.append(job.shard.index)
                bar.update()
            run_jobs(actors, jobs, lambda actor, job: actor.embed.remote(job), done)
    finally:
        stop_actors(actors)


def _assemble(manifest: Manifest, shards: list[Shard], output_path: str, options: EmbedOptions,
              dtype: np.dtype, spec: EncoderSpec) -> EmbedReport:
    """Concatenate the shard files into the output, and with lang `auto` their languages into
    `options.lang_out`, written atomically as `embed_file` does; the shards' lines that were
    not UTF-8 text are counted in `options.bad_lines` in their order, as one process reads
    them."""
    fields = manifest.encoder
    counts: Counter = Counter()
    bad = options.bad_lines
    with EmbeddingWriter(output_path, fields["dim"], fmt=options.fmt, dtype=dtype) as writer, \
            languages_output(options.lang_out) as languages:
        for shard in shards:
            rows = open_embeddings(manifest.shard_path(shard))
            if rows.shape != (shard.lines, fields["dim"]) or rows.dtype != dtype:
                raise LaserError(f"{manifest.shard_path(shard)}: holds {rows.shape} {rows.dtype} "
                                 f"rows, expected {shard.lines} lines of {shard.path}")
            for start in range(0, len(rows), COPY_ROWS):
                writer.write(rows[start:start + COPY_ROWS])
            if manifest.languages_path(shard):
                _copy_languages(manifest.languages_path(shard), shard, counts, languages)
            bad.merge(**manifest.bad_lines(shard))
    return EmbedReport(output=str(output_path), rows=writer.rows, dtype=dtype.name,
                       format=options.fmt, lang=options.lang, **fields,
                       **language_fields(options, counts, spec.files, spec.lang_fallback),
                       bad_lines=bad.record() if bad.policy != "fail" else None)


def _copy_languages(path: str, shard: Shard, counts: Counter, out: Optional[TextIO]) -> None:
    """Count a shard's identified languages (each line's likeliest) and copy them to `out`."""
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    if len(lines) != shard.lines:
        raise LaserError(f"{path}: holds {len(lines)} lines, expected {shard.lines}")
    counts.update(line.split("\t", 1)[0] for line in lines)
    if out is not None:
        out.writelines(lines)
