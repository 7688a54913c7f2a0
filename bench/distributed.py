"""`laser embed` in one process next to `laser embed --ray` with 1 and 2 workers: throughput,
Ray's overhead, and a cost model for a billion sentences from the measured per-core speed.

Sentences are real dev sentences (shared/data/corpus/dev, the foreign side), repeated up to
--lines; the shipped default model embeds them. Each configuration runs once, in this order:

* `1 process, T threads` — `embed_file` in this process, torch on T threads (T = 1, 2);
* `ray, W workers`       — `embed_file_on_ray` on a fresh local runtime of W CPUs, W one-core
                           actors; the runtime's start is timed apart from the job.

Every Ray output is checked to be bit-identical to the single-process one on one thread
(the workers' thread count: OpenBLAS rounds differently with more threads).

    python bench/distributed.py [--lines 200000] [--shard-lines 10000] [--workers 1,2] [--json F]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.distributed.ray_runner import RayOptions, embed_file_on_ray  # noqa: E402
from laser.distributed.work import EncoderSpec  # noqa: E402
from laser.models.files import ModelFiles  # noqa: E402
from laser.pipeline import EmbedOptions, embed_file  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "dev"
MODEL = ROOT / "models" / "default"


def write_sentences(path: Path, lines: int) -> None:
    """`lines` real sentences (the foreign side of the dev corpus, cycled)."""
    def sentences():
        for source in sorted(CORPUS.glob("*-eng.tsv.gz")):
            with gzip.open(source, "rt", encoding="utf-8") as f:
                yield from (line.split("\t")[0] for line in f)
    with open(path, "w", encoding="utf-8") as out:
        for sentence in itertools.islice(itertools.cycle(list(itertools.islice(sentences(),
                                                                                100_000))), lines):
            out.write(sentence.replace("\n", " ") + "\n")


def single_process(text: Path, output: Path, threads: int) -> dict:
    import torch
    from laser.encoder import Encoder
    torch.set_num_threads(threads)
    started = time.perf_counter()
    encoder = Encoder.load(str(MODEL))
    loaded = time.perf_counter()
    embed_file(encoder, str(text), str(output), EmbedOptions("mul"))
    done = time.perf_counter()
    return {"config": f"1 process, {threads} thread{'s' * (threads > 1)}", "cores": threads,
            "setup_s": loaded - started, "job_s": done - loaded, "total_s": done - started}


def on_ray(text: Path, output: Path, workers: int, shard_lines: int) -> dict:
    import ray
    started = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    ready = time.perf_counter()
    try:
        _, run = embed_file_on_ray(EncoderSpec(ModelFiles.from_dir(MODEL)), str(text),
                                   str(output), EmbedOptions("mul"),
                                   RayOptions(workers=workers, shard_lines=shard_lines))
    finally:
        ray.shutdown()
    done = time.perf_counter()
    return {"config": f"ray, {workers} worker{'s' * (workers > 1)}", "cores": workers,
            "setup_s": ready - started, "job_s": done - ready, "total_s": done - started,
            "shards": len(run.computed)}


def report(result: dict, lines: int) -> None:
    """One finished configuration on stderr, so a long run shows its figures as they come."""
    print(f"{result['config']}: job {result['job_s']:.1f} s, "
          f"{lines / result['job_s']:,.0f} sentences/s", file=sys.stderr, flush=True)


def table(results: list[dict], lines: int) -> str:
    rows = ["| configuration | cores | start (s) | job (s) | total (s) | sentences/s (job) | "
            "sentences/s per core |", "|---|---|---|---|---|---|---|"]
    for r in results:
        rate = lines / r["job_s"]
        rows.append(f"| {r['config']} | {r['cores']} | {r['setup_s']:.1f} | {r['job_s']:.1f} | "
                    f"{r['total_s']:.1f} | {rate:,.0f} | {rate / r['cores']:,.0f} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--shard-lines", type=int, default=10_000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--json", help="Also write the measurements here.")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="laser-bench-") as tmp:
        text = Path(tmp) / "sentences.txt"
        write_sentences(text, args.lines)
        reference = Path(tmp) / "single1.npy"
        for threads in (1, 2):
            results.append(single_process(text, Path(tmp) / f"single{threads}.npy", threads))
            report(results[-1], args.lines)
        for workers in map(int, args.workers.split(",")):
            output = Path(tmp) / f"ray{workers}.npy"
            results.append(on_ray(text, output, workers, args.shard_lines))
            report(results[-1], args.lines)
            if output.read_bytes() != reference.read_bytes():
                raise SystemExit(f"ray with {workers} workers: output differs from one process "
                                 "on one thread")
    print(f"{args.lines:,} lines, shards of {args.shard_lines:,} lines; every Ray output "
          "bit-identical to the single-process one\n")
    print(table(results, args.lines))
    if args.json:
        Path(args.json).write_text(json.dumps({"lines": args.lines, "shard_lines":
                                               args.shard_lines, "results": results}, indent=2))


if __name__ == "__main__":
    main()
