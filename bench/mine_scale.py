#!/usr/bin/env python3
"""Mining at scale: synthetic planted pairs mined at growing sizes, with the time of each stage,
the peak anonymous memory of the driver and of every other process of the run, the disk used and
the share of planted pairs found.

    python bench/mine_scale.py --lines 250000 1000000 --index IVF256,PQ32x4fs --nprobe 16
    python bench/mine_scale.py --lines 1000000 2000000 --scaled --nprobe 16 --stages
    python bench/mine_scale.py --lines 250000 1000000 --work-dir --ray local   # driver and workers
    python bench/mine_scale.py --cost-model --fit staged       # units refitted on the staged runs
    python bench/mine_scale.py --raw-text ../shared/data/corpus/train/fra-eng.tsv.gz --lines 4000
    python bench/mine_scale.py --raw-corpus ../shared/data/corpus/train --lines 1000000

Each side has N lines of 576-d float16 embeddings (the shipped model's width), written once
(streamed) by bench/mine_speed.py's generator into bench/out/ (git-ignored) and reused: half the
source rows have a planted partner among the target rows (the same base vector plus independent
noise of 0.6 per dimension), the other rows are independent Gaussians. Runs write under
bench/out/mine_scale/.

By default every size runs `laser mine SRC TRG --src-embeddings .. --trg-embeddings .. --index ..
--nprobe ..` under `nice -n 10`, as users run it. A sampler reads /proc at 10 Hz: the RssAnon
(anonymous resident memory: heap and arrays, not the page cache of memory-mapped embeddings) of
every process of the tree under the command (the driver, and with --ray the Ray services and
workers), each one's peak, their CPU time, and the bytes under the work directory. `--work-dir`
adds `--work-dir W` (the staged, resumable command) and reads each stage's wall and CPU time
from W/STAGE/manifest.json (`wall_s`, `cpu_s`); `--ray ADDRESS` adds `--ray ADDRESS`.
`--stages` runs the same library calls as today's command in one process instead, timed stage by
stage (train, populate, search, re-score per direction; margins, retrieval, writing), which is
what the cost model of docs/search-and-mining.md is built from.

`--scaled` picks the index by N: IVF with 2^round(log2(sqrt N)) lists, PQ32x4fs codes (16 bytes
a row, scanned by SIMD fast-scan kernels). A query costs nlist x d products for its lists and
nprobe x N / nlist codes scanned in them; their sum is least near nlist = sqrt(nprobe N c_scan /
(d c_product)), which the measured rates put at about 2 sqrt(N) for nprobe 16 and d 576; sqrt(N)
keeps the k-means training (nlist^2) 4 x cheaper (docs/search-and-mining.md, "Mining at scale").

`--raw-text FILE.tsv.gz` times the raw-text path on the first `--lines` pairs of a parallel
corpus (source column against the target column shuffled): language ID, dedup and embedding rates
with the shipped model, then `laser mine` of the embeddings, each stage by itself, and the
extrapolation of each stage's rate to 1M lines a side.

`--raw-corpus DIR` (xxx-eng.tsv.gz files, FOREIGN<TAB>ENGLISH) assembles a web-like crawl of
`--lines` lines a side under bench/out/mine_scale/crawl-N/ (once; reused), streamed and
shuffled through 64 shards a side in 4 folders, gzip, xz, zstd and bzip2 in turn: a "French
crawl" (a quarter of it the French side of fra-eng, at most all of it; a quarter repeats of its
lines, for dedup; the rest other languages' foreign lines, for the language filter) given as a
directory, and an "English crawl" (the English of those pairs, then of the other pairs, then
repeats) given as @LIST. Then one command as users run it, under `nice -n 10` and the sampler:
`laser mine SRC @LIST --src-lang fr --trg-lang en --unify --lid-filter --provenance --work-dir W
--index .. --nprobe ..` (the index as `--scaled` picks it for the larger side's distinct lines),
with each stage's wall and CPU time from W's manifests, the lines left after dedup, the pairs
dropped by --lid-filter and the fra-eng pairs found among the output. The cost model then
takes embedding and dedup per line from the largest such run.
"""
from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "mine_scale"
DIM = 576
SAMPLE_SECONDS = 0.1
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


# --- synthetic corpora ---------------------------------------------------------------------

@dataclass(frozen=True)
class Corpora:
    """Both sides of one size: source row i < pairs is planted with target row offset + i."""

    lines: int
    src: tuple[Path, Path]
    trg: tuple[Path, Path]
    pairs: int

    @property
    def offset(self) -> int:
        return self.lines - self.pairs


def corpora(lines: int) -> Corpora:
    """Both sides of `lines` lines, written by bench/mine_speed.py's generator (once)."""
    from mine_speed import make_corpus
    pairs = lines // 2
    started = time.perf_counter()
    src = make_corpus("src", lines, DIM, pairs, 1, 0, np.float16)
    trg = make_corpus("trg", lines, DIM, pairs, 2, lines - pairs, np.float16)
    print(f"corpora of {lines:,} lines a side ready in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    return Corpora(lines, tuple(map(Path, src)), tuple(map(Path, trg)), pairs)


def planted_found(mined_tsv: Path, data: Corpora) -> int:
    """Pairs of the output (score, source text, target text) that are planted pairs."""
    found = 0
    with open(mined_tsv, encoding="utf-8") as f:
        for line in f:
            _, src, trg = line.rstrip("\n").split("\t")[:3]
            i, j = int(src.split()[1]), int(trg.split()[1])
            found += i < data.pairs and j == data.offset + i
    return found


# --- the index ----------------------------------------------------------------------------

def scaled_index(lines: int) -> str:
    """IVF lists ~ sqrt(N), a power of two; 16-byte fast-scan PQ codes."""
    return f"IVF{2 ** round(math.log2(math.sqrt(lines)))},PQ32x4fs"


# --- sampling the process tree --------------------------------------------------------------

def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            parent = int(stat[stat.rindex(b")") + 2:].split()[1])
            tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _tree(root: int) -> list[int]:
    tree, found, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += tree.get(pid, [])
    return found


def _process(pid: int) -> Optional[tuple[str, int, int]]:
    """(name, RssAnon bytes, CPU ticks) of a live process."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return None
    anon = next((int(line.split()[1]) * 1024 for line in status.splitlines()
                 if line.startswith("RssAnon:")), 0)
    fields = stat[stat.rindex(b")") + 2:].split()
    return command, anon, int(fields[11]) + int(fields[12])


def _disk_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


@dataclass
class Samples:
    """Peaks over a run: RssAnon of the driver, of the largest other process, of the whole tree
    and of each process (pid: [name, bytes]); CPU seconds of every process seen; peak bytes under
    the work directory."""

    driver_anon: int = 0
    other_anon: int = 0
    other_name: str = ""
    tree_anon: int = 0
    disk: int = 0
    ticks: dict = field(default_factory=dict)
    peaks: dict = field(default_factory=dict)

    @property
    def cpu_seconds(self) -> float:
        return sum(self.ticks.values()) / TICKS


class Sampler(threading.Thread):
    """Samples the processes under `pid` every 0.1 s (finds them, and `folder`'s size, every
    second) until stopped."""

    def __init__(self, pid: int, folder: Optional[Path]):
        super().__init__(daemon=True)
        self.pid, self.folder, self.samples = pid, folder, Samples()
        self.stopped = threading.Event()

    def run(self) -> None:
        tick, pids = 0, [self.pid]
        while not self.stopped.is_set():
            if tick % 10 == 0:  # the tree (all of /proc) and the disk once a second
                pids = _tree(self.pid)
                self.measure_disk()
            self.sample(pids)
            tick += 1
            self.stopped.wait(SAMPLE_SECONDS)

    def measure_disk(self) -> None:
        if self.folder is not None and self.folder.exists():
            self.samples.disk = max(self.samples.disk, _disk_bytes(self.folder))

    def sample(self, pids: list[int]) -> None:
        total, found = 0, self.samples
        for pid in pids:
            seen = _process(pid)
            if seen is None:
                continue
            name, anon, ticks = seen
            total += anon
            found.ticks[pid] = ticks
            peak = found.peaks.setdefault(pid, ["", 0])
            peak[:] = os.path.basename(name)[:40] or peak[0], max(peak[1], anon)  # after exec
            if pid == self.pid:
                found.driver_anon = max(found.driver_anon, anon)
            elif anon > found.other_anon:
                found.other_anon, found.other_name = anon, os.path.basename(name)[:40]
        found.tree_anon = max(found.tree_anon, total)

    def stop(self) -> Samples:
        self.stopped.set()
        self.join()
        self.measure_disk()
        return self.samples


def sampled_run(command: list[str], folder: Optional[Path]) -> tuple[float, Samples]:
    """Run `command` under `nice -n 10`; its wall seconds and what the sampler saw."""
    started = time.perf_counter()
    process = subprocess.Popen(["nice", "-n", "10", *command])
    sampler = Sampler(process.pid, folder)
    sampler.start()
    code = process.wait()
    seconds = time.perf_counter() - started
    samples = sampler.stop()
    if code:
        raise SystemExit(f"{' '.join(command)}: exit status {code}")
    return seconds, samples


# --- the runs -------------------------------------------------------------------------------

@dataclass
class Row:
    """One measured run."""

    lines: int
    how: str
    index: str
    nprobe: int
    wall: float
    cpu: float
    driver_mib: float
    other_mib: float
    other_name: str
    tree_mib: float
    disk_mib: float
    pairs: int
    planted: int
    found: int
    stages: dict
    load: float
    when: str
    processes: list = field(default_factory=list)


def laser_command() -> list[str]:
    return [sys.executable, "-m", "laser"]


def stage_seconds(work_dir: Path) -> dict:
    """Wall and CPU seconds per stage as the staged command records them: W/STAGE/manifest.json
    with `wall_s` and `cpu_s` (issue #62's work directory), in the order the stages ran."""
    manifests = sorted(work_dir.glob("*/manifest.json"), key=lambda path: path.stat().st_ctime)
    stages = {}
    for path in manifests:
        record = json.loads(path.read_text())
        stages[path.parent.name] = {"wall": round(record.get("wall_s", 0.0), 1),
                                    "cpu": round(record.get("cpu_s", 0.0), 1)}
    return stages


def run_command(data: Corpora, index: str, nprobe: int, work_dir: bool,
                ray: Optional[str] = None) -> Row:
    """`laser mine` on the embeddings, as users run it (with `--ray ray` on Ray)."""
    folder = OUT / f"{data.lines}-command{'-ray' if ray else ''}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    output = folder / "mined.tsv"
    command = [*laser_command(), "mine", str(data.src[0]), str(data.trg[0]),
               "--src-embeddings", str(data.src[1]), "--trg-embeddings", str(data.trg[1]),
               "--index", index, "--nprobe", str(nprobe), "-o", str(output)]
    if work_dir:
        command += ["--work-dir", str(folder / "W")]
    if ray:
        command += ["--ray", ray]
    seconds, samples = sampled_run(command, folder / "W" if work_dir else folder)
    stages = stage_seconds(folder / "W") if work_dir else {}
    how = "command" + (" --work-dir" if work_dir else "") + (f" --ray {ray}" if ray else "")
    return _row(data, how, index, nprobe, seconds, samples, stages, output)


def run_stages(data: Corpora, index: str, nprobe: int) -> Row:
    """Today's library calls in one process (this script's `stages` mode), stage by stage."""
    folder = OUT / f"{data.lines}-stages"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    output, report = folder / "mined.tsv", folder / "stages.json"
    command = [sys.executable, __file__, "stages", str(data.src[0]), str(data.trg[0]),
               str(data.src[1]), str(data.trg[1]), index, str(nprobe), str(output), str(report)]
    seconds, samples = sampled_run(command, folder)
    stages = json.loads(report.read_text())
    return _row(data, "stages in one process", index, nprobe, seconds, samples, stages, output)


def _row(data: Corpora, how: str, index: str, nprobe: int, seconds: float, samples: Samples,
         stages: dict, output: Path) -> Row:
    with open(output, "rb") as f:
        pairs = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 24), b""))
    mib = 2 ** 20
    return Row(data.lines, how, index, nprobe, round(seconds, 1), round(samples.cpu_seconds, 1),
               round(samples.driver_anon / mib), round(samples.other_anon / mib),
               samples.other_name, round(samples.tree_anon / mib),
               round(samples.disk / mib), pairs, data.pairs, planted_found(output, data), stages,
               round(os.getloadavg()[1], 2), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               process_peaks(samples))


def process_peaks(samples: Samples, at_least: int = 2 ** 20) -> list:
    """Each process's peak RssAnon in MiB and its CPU seconds, largest first (those over 1 MiB)."""
    mib = 2 ** 20
    peaks = [{"pid": pid, "name": name, "peak_mib": round(anon / mib),
              "cpu": round(samples.ticks.get(pid, 0) / TICKS, 1)}
             for pid, (name, anon) in samples.peaks.items() if anon >= at_least]
    return sorted(peaks, key=lambda peak: -peak["peak_mib"])


def stages_in_process(src_txt: str, trg_txt: str, src_npy: str, trg_npy: str, index: str,
                      nprobe: str, output: str, report: str) -> None:
    """What `laser mine --index --nprobe` computes, timed stage by stage (wall and CPU)."""
    from laser.io.embeddings import open_embeddings
    from laser.mining.corpus import corpus_vectors, scan_corpus
    from laser.mining.margins import Neighbourhoods
    from laser.mining.output import write_pairs
    from laser.mining.retrieval import retrieve
    from laser.search.approximate import check_found, rescored, ApproximateSearch
    from laser.search.index import add_rows, search, trained_index

    times: dict[str, list[float]] = {}

    def timed(stage: str, work, *args):
        wall, cpu = time.perf_counter(), time.process_time()
        value = work(*args)
        spent = times.setdefault(stage, [0.0, 0.0])
        spent[0] += time.perf_counter() - wall
        spent[1] += time.process_time() - cpu
        return value

    src, trg = timed("read", lambda: (scan_corpus(src_txt), scan_corpus(trg_txt)))
    x = corpus_vectors(src, open_embeddings(src_npy), src_npy)
    y = corpus_vectors(trg, open_embeddings(trg_npy), trg_npy)
    approximate = ApproximateSearch(index, int(nprobe), REFINE)
    found = []
    for queries, base in ((x, y), (y, x)):
        built = timed("train", trained_index, base, index)
        timed("populate", add_rows, built, base)
        candidates = timed("search", search, built, queries, K * REFINE, approximate.nprobe)
        del built
        found.append(timed("re-score", rescored, candidates, queries, base, K))
        check_found(found[-1], approximate, base.name)
        del candidates
    neighbourhoods = Neighbourhoods(*found)
    candidates = timed("margins", neighbourhoods.candidates, "ratio")
    mined = timed("retrieve", lambda: retrieve(*candidates, "max", 0.0).to_lines(src, trg))
    timed("write", write_pairs, output, mined, src, trg)
    Path(report).write_text(json.dumps({stage: {"wall": round(wall, 1), "cpu": round(cpu, 1)}
                                        for stage, (wall, cpu) in times.items()}))


# --- raw text -----------------------------------------------------------------------------

def raw_text_sides(corpus: str, lines: int) -> tuple[Path, Path]:
    """The first `lines` pairs of a parallel corpus: its source column, its target column
    shuffled (so that the pairs are to be found)."""
    folder = OUT / f"raw-{lines}"
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t")[:2] for _, line in zip(range(lines), f)]
    order = np.random.default_rng(5).permutation(len(pairs))
    src, trg = folder / "src.txt", folder / "trg.txt"
    src.write_text("".join(f"{a}\n" for a, _ in pairs), encoding="utf-8")
    trg.write_text("".join(f"{pairs[i][1]}\n" for i in order), encoding="utf-8")
    return src, trg


def raw_text(corpus: str, lines: int, src_lang: str, trg_lang: str) -> dict:
    """Each stage of raw text to pairs timed by itself, under the sampler."""
    src, trg = raw_text_sides(corpus, lines)
    folder = src.parent
    laser, stages = laser_command(), {}
    steps = {
        "language ID (laser lid), both sides": [
            [*laser, "lid", str(side), "-o", str(side.with_suffix(".lang")), "-q"]
            for side in (src, trg)],
        "embed (laser embed, shipped model), both sides": [
            [*laser, "embed", str(side), "-o", str(side.with_suffix(".npy")), "-l", lang, "-q",
             "--fp16"] for side, lang in ((src, src_lang), (trg, trg_lang))],
        "mine (laser mine --unify --lid-filter, exact)": [
            [*laser, "mine", str(src), str(trg), "--src-embeddings", str(src.with_suffix(".npy")),
             "--trg-embeddings", str(trg.with_suffix(".npy")), "--src-lang", src_lang,
             "--trg-lang", trg_lang, "--unify", "--lid-filter", "-o",
             str(folder / "mined.tsv")]],
    }
    for stage, commands in steps.items():
        wall, cpu, anon = 0.0, 0.0, 0
        for command in commands:
            seconds, samples = sampled_run(command, None)
            wall, cpu = wall + seconds, cpu + samples.cpu_seconds
            anon = max(anon, samples.tree_anon)
        stages[stage] = {"wall": round(wall, 1), "cpu": round(cpu, 1),
                         "peak anon MiB": round(anon / 2 ** 20),
                         "cpu s per 1M lines a side": round(cpu * 1e6 / lines)}
    with open(folder / "mined.tsv", "rb") as f:
        stages["pairs"] = sum(1 for _ in f)
    stages["lines a side"] = lines
    stages["load"] = round(os.getloadavg()[1], 2)
    return stages


# --- a raw crawl: many compressed shards a side ------------------------------------------

PIVOT = "fra-eng.tsv.gz"  # its French side is the source crawl's French, its pairs the gold
CRAWL_SHARDS, CRAWL_FOLDERS = 64, 4  # files a side, in this many folders
CODECS = (".gz", ".xz", ".zst", ".bz2")
CRAWL_SEED = 62


@dataclass(frozen=True)
class CrawlPlan:
    """What a crawl of `lines` lines a side takes from the corpus: for each file (the pivot
    first), its first `take` pairs give their foreign line to the source side and their English
    to the target; the next `pad` pairs their English only. Each side is then filled to
    `lines` with repeats of its own lines."""

    lines: int
    files: tuple[str, ...]
    take: tuple[int, ...]
    pad: tuple[int, ...]

    @property
    def french(self) -> int:
        return self.take[0]

    def repeats(self, side: str) -> int:
        return self.lines - sum(self.take) - (sum(self.pad) if side == "english" else 0)


def _gz_lines(path: str) -> int:
    with gzip.open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 22), b""))


def _shares(total: int, sizes: list[int]) -> list[int]:
    """`total` split in proportion to `sizes` (largest remainders first)."""
    exact = np.array(sizes, dtype=np.float64) * total / max(sum(sizes), 1)
    shares = np.floor(exact).astype(np.int64)
    shares[np.argsort(shares - exact, kind="stable")[:total - int(shares.sum())]] += 1
    return shares.tolist()


def crawl_plan(corpus: Path, lines: int) -> CrawlPlan:
    """A quarter of the source side French (at most all of the pivot's lines), a quarter
    repeats, the rest other languages' foreign lines in proportion to their files; the target
    side the English of those pairs, then of the other pairs in the same proportion."""
    files = sorted(corpus.glob("*-eng.tsv.gz"), key=lambda path: (path.name != PIVOT, path.name))
    if not files or files[0].name != PIVOT:
        raise SystemExit(f"{corpus}: no {PIVOT}")
    sizes = [_gz_lines(str(path)) for path in files]
    french = min(sizes[0], lines // 4)
    others = lines - french - lines // 4
    if others > sum(sizes[1:]):
        raise SystemExit(f"{corpus}: {sum(sizes[1:]):,} foreign lines, {others:,} needed")
    take = [french] + _shares(others, sizes[1:])
    left = [size - taken for size, taken in zip(sizes, take)]
    pad = _shares(min(lines - sum(take), sum(left)), left)
    return CrawlPlan(lines, tuple(map(str, files)), tuple(take), tuple(pad))


def open_compressed(path: Path):
    """A text file written compressed as its suffix says."""
    from laser.io.sources import zstd_module
    openers = {".gz": lambda: gzip.open(path, "wt", encoding="utf-8"),
               ".xz": lambda: lzma.open(path, "wt", encoding="utf-8", preset=1),
               ".zst": lambda: zstd_module().open(path, "wt", encoding="utf-8"),
               ".bz2": lambda: bz2.open(path, "wt", encoding="utf-8")}
    return openers[path.suffix]()


class ShuffledShards:
    """Lines scattered at random over CRAWL_SHARDS temporary files, each line repeated as drawn
    beforehand, then each file shuffled in memory (1 / CRAWL_SHARDS of the side) and written
    compressed, the codecs taking turns: a seeded shuffle that never holds the side."""

    def __init__(self, folder: Path, pool: int, repeats: int, seed: int):
        self.folder, self.rng = folder, np.random.default_rng(seed)
        self.copies = 1 + np.bincount(self.rng.integers(0, pool, repeats), minlength=pool)
        self.buckets = self.rng.integers(0, CRAWL_SHARDS, int(self.copies.sum()))
        folder.mkdir(parents=True)
        self.parts = [open(folder / f".part-{b:03d}", "w", encoding="utf-8")
                      for b in range(CRAWL_SHARDS)]
        self.added = self.written = 0
        self.keys = np.empty(len(self.buckets), dtype=np.int64)  # hash() of each line: distinct

    def add(self, line: str) -> None:
        for _ in range(self.copies[self.added]):
            self.parts[self.buckets[self.written]].write(line + "\n")
            self.keys[self.written] = hash(line)
            self.written += 1
        self.added += 1

    def close(self) -> tuple[list[str], int]:
        """The shards written (relative to the folder) and the distinct lines of the side."""
        shards = []
        for number, part in enumerate(self.parts):
            part.close()
            with open(part.name, encoding="utf-8") as f:
                lines = f.readlines()
            folder = f"{number * CRAWL_FOLDERS // CRAWL_SHARDS:02d}"
            name = Path(folder) / f"crawl-{number:03d}.txt{CODECS[number % len(CODECS)]}"
            (self.folder / name.parent).mkdir(exist_ok=True)
            with open_compressed(self.folder / name) as f:
                f.writelines(lines[i] for i in self.rng.permutation(len(lines)))
            os.remove(part.name)
            shards.append(str(name))
        return shards, len(np.unique(self.keys))


def assemble_crawl(corpus: Path, lines: int) -> dict:
    """The two sides of a raw crawl of `lines` lines under bench/out/ (once; reused): the
    "French crawl" as a directory of shards, the "English crawl" as @LIST of its shards."""
    folder = OUT / f"crawl-{lines}"
    record = folder / "crawl.json"
    if record.exists():
        return json.loads(record.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    plan = crawl_plan(corpus, lines)
    src = ShuffledShards(folder / "french", sum(plan.take), plan.repeats("french"), CRAWL_SEED)
    trg = ShuffledShards(folder / "english", sum(plan.take) + sum(plan.pad),
                         plan.repeats("english"), CRAWL_SEED + 1)
    for path, take, pad in zip(plan.files, plan.take, plan.pad):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for number, line in zip(range(take + pad), f):
                foreign, english = line.rstrip("\n").split("\t")[:2]
                if number < take:
                    src.add(foreign)
                trg.add(english)
    (src_shards, src_distinct), (trg_shards, trg_distinct) = src.close(), trg.close()
    (folder / "english.list").write_text("".join(f"english/{name}\n" for name in trg_shards))
    crawl = {"lines a side": lines, "corpus": str(corpus), "french lines": plan.french,
             "other languages' lines": sum(plan.take) - plan.french,
             "source repeats": plan.repeats("french"), "target repeats": plan.repeats("english"),
             "distinct source lines": src_distinct, "distinct target lines": trg_distinct,
             "files a side": len(src_shards), "src": str(folder / "french"),
             "trg": "@" + str(folder / "english.list"),
             "bytes": _disk_bytes(folder), "seconds": round(time.perf_counter() - started)}
    record.write_text(json.dumps(crawl, indent=1))
    print(f"crawl of {lines:,} lines a side ready in {crawl['seconds']} s", file=sys.stderr)
    return crawl


def gold_found(mined_tsv: Path, corpus: Path, french: int) -> dict:
    """Gold pairs (the distinct pairs of the pivot's first `french` lines) in the output, and
    how many there are; a line pairs once, so at most one per distinct English line."""
    with gzip.open(corpus / PIVOT, "rt", encoding="utf-8") as f:
        gold = {tuple(line.rstrip("\n").split("\t")[:2]) for _, line in zip(range(french), f)}
    with open(mined_tsv, encoding="utf-8") as f:
        found = {pair for pair in (tuple(line.rstrip("\n").split("\t")[1:3]) for line in f)
                 if pair in gold}
    return {"gold pairs found": len(found), "gold pairs": len(gold),
            "their distinct English lines": len({english for _, english in gold})}


def _count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 24), b""))


def raw_crawl(corpus: Path, lines: int, nprobe: int) -> dict:
    """`laser mine` of the crawl in one command, from raw shards to pairs, as users run it."""
    from laser.distributed.mine_tasks import PAIR
    crawl = assemble_crawl(corpus, lines)
    index = scaled_index(max(crawl["distinct source lines"], crawl["distinct target lines"]))
    folder = OUT / f"crawl-{lines}" / "mined"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    output, work_dir = folder / "mined.tsv", folder / "W"
    command = [*laser_command(), "mine", crawl["src"], crawl["trg"], "--src-lang", "fr",
               "--trg-lang", "en", "--unify", "--lid-filter", "--provenance",
               "--work-dir", str(work_dir), "--index", index, "--nprobe", str(nprobe),
               "-o", str(output)]
    seconds, samples = sampled_run(command, work_dir)
    stages = stage_seconds(work_dir)
    retrieved = (work_dir / "retrieve" / "pairs.bin").stat().st_size // PAIR.itemsize
    pairs = _count_lines(output)
    mib = 2 ** 20
    return {"lines a side": lines, "index": index, "nprobe": nprobe, "wall": round(seconds, 1),
            "cpu": round(samples.cpu_seconds, 1), "stages": stages,
            "outside the stages (writing, --lid-filter)": {
                "wall": round(seconds - sum(stage["wall"] for stage in stages.values()), 1),
                "cpu": round(samples.cpu_seconds
                             - sum(stage["cpu"] for stage in stages.values()), 1)},
            "driver peak RssAnon MiB": round(samples.driver_anon / mib),
            "tree peak RssAnon MiB": round(samples.tree_anon / mib),
            "work dir peak MiB": round(samples.disk / mib),
            "lines after dedup": {side: _sentences(work_dir / f"{side}-split")
                                  for side in ("src", "trg")},
            "rows embedded": sum(_embedded_rows(work_dir / f"{side}-embed")
                                 for side in ("src", "trg")),
            "pairs retrieved": retrieved, "pairs written": pairs,
            "pairs dropped by --lid-filter": retrieved - pairs,
            **gold_found(output, corpus, crawl["french lines"]), "crawl": crawl,
            "command": " ".join(command[2:]), "load": round(os.getloadavg()[1], 2),
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}

def _embedded_rows(embed: Path) -> int:
    """The rows an embed stage wrote, as its manifest recorded them."""
    done = json.loads((embed / "manifest.json").read_text())["done"]
    return sum(task["rows"] for task in done.values())


def _sentences(split: Path) -> dict:
    """Lines and distinct sentences of a side, as its split stage recorded them."""
    record = json.loads((split / "split.json").read_text())
    return {"lines": record["lines"], "sentences": record["sentences"]}


# --- the cost model -----------------------------------------------------------------------

K, REFINE = 4, 4
TRAIN_PER_LIST, TRAIN_AT_LEAST = 64, 50_000  # laser.search.index.default_train_size
FIT_AT_LEAST = 250_000  # lines a side; smaller runs are mostly fixed costs
DEDUP_CPU_PER_LINE = 4.7e-6  # bench/unify_scale.py, 1M lines in 4.7 s (docs/search-and-mining.md)


def lists_of(index: str) -> int:
    return int(index.split(",")[0][3:])


def unit_costs(rows: list[dict], raw: list[dict]) -> dict:
    """CPU seconds per unit of work, from the smallest and the largest `--stages` runs and the
    two largest raw-text runs (their difference, so that start-up costs cancel out):
    populate per row = quantizer x nlist + encode; search per query = quantizer x nlist +
    scan x nprobe x N / nlist; re-score per candidate; training per (sample row x list)."""
    ordered = sorted(rows, key=lambda row: row["lines"])
    small, big = ordered[0], ordered[-1]

    def per_direction(row: dict, stage: str) -> float:
        return row["stages"][stage]["cpu"] / 2

    populate = [per_direction(row, "populate") / row["lines"] for row in (small, big)]
    lists = [lists_of(row["index"]) for row in (small, big)]
    quantizer = (populate[1] - populate[0]) / (lists[1] - lists[0])
    encode = populate[1] - quantizer * lists[1]
    searched = per_direction(big, "search") / big["lines"] - quantizer * lists[1]
    scan = searched / (big["nprobe"] * big["lines"] / lists[1])
    sample = min(big["lines"], max(TRAIN_AT_LEAST, TRAIN_PER_LIST * lists[1]))
    costs = {"quantizer per list": quantizer, "encode per row": encode,
             "scan per code": scan,
             "re-score per candidate": per_direction(big, "re-score") / (big["lines"] * K * REFINE),
             "train per sample row and list": per_direction(big, "train") / (sample * lists[1]),
             "margins, retrieval, writing per line": sum(
                 big["stages"][stage]["cpu"] for stage in ("margins", "retrieve", "write"))
                 / big["lines"],
             "dedup per line": DEDUP_CPU_PER_LINE}
    if len(raw) >= 2:
        (few, many) = sorted(raw, key=lambda run: run["lines a side"])[-2:]
        extra = 2 * (many["lines a side"] - few["lines a side"])
        for stage, name in (("language ID", "language ID per line"), ("embed", "embed per line")):
            key = next(key for key in many if key.startswith(stage))
            costs[name] = (many[key]["cpu"] - few[key]["cpu"]) / extra
    return costs


def crawl_rates(costs: dict) -> dict:
    """Embedding and dedup measured on the largest raw crawl (`--raw-corpus`), where one ran:
    the embed stages' CPU per row embedded (each distinct sentence once; every line, repeats
    included, in runs recorded before, which lack "rows embedded") and the split stages'
    (decompressing, reading, --unify) per line of either side."""
    path = OUT / "raw-crawl.jsonl"
    runs = [json.loads(line) for line in open(path)] if path.exists() else []
    runs = [run for run in runs if run["lines a side"] >= FIT_AT_LEAST]
    if not runs:
        return costs
    run = max(runs, key=lambda run: run["lines a side"])
    stages, lines = run["stages"], 2 * run["lines a side"]
    print(f"embedding and dedup per line from the raw crawl of {run['lines a side']:,} lines "
          "a side (raw-crawl.jsonl)")
    return {**costs,
            "embed per line": (stages["src-embed"]["cpu"] + stages["trg-embed"]["cpu"])
            / run.get("rows embedded", lines),
            "dedup per line": (stages["src-split"]["cpu"] + stages["trg-split"]["cpu"]) / lines}


STAGED = "command --work-dir"
STAGE_GROUPS = {"split": ("src-split", "trg-split"),
                "index (train + populate)": ("src-index", "trg-index"),
                "k-NN (search + re-score)": ("knn", "bwd"),
                "margins, runs, retrieval": ("margins", "runs", "retrieve")}


def grouped_cpu(row: dict) -> dict:
    """CPU seconds of a staged run per group of stages (from its manifests), and the rest of
    its CPU time (start-up, writing the output, Ray's own processes)."""
    groups = {group: sum(row["stages"].get(name, {}).get("cpu", 0.0) for name in names)
              for group, names in STAGE_GROUPS.items()}
    groups["rest"] = row["cpu"] - sum(groups.values())
    return groups


def staged_unit_costs(costs: dict, small: dict, big: dict) -> dict:
    """The unit costs refitted on two staged runs at two sizes (their difference, so that
    start-up cancels out): coding a row when adding it (the index stage less the modelled
    k-means), a scanned code and a query's fixed cost (the k-NN stage: re-scoring, shard files),
    margins to output per line, and the split per line. The centroid product and k-means costs
    stay those of the `--stages` fit: the staged manifests time training with population."""
    a, b = grouped_cpu(small), grouped_cpu(big)
    lists = [lists_of(row["index"]) for row in (small, big)]
    sizes = [row["lines"] for row in (small, big)]
    grown, nprobe, product = sizes[1] - sizes[0], big["nprobe"], costs["quantizer per list"]

    def populate(groups: dict, row: dict) -> float:
        model = cost_model(costs, row["lines"], lists_of(row["index"]), row["nprobe"])
        return groups["index (train + populate)"] - model["train (one worker per side)"]

    def per_query(groups: dict, lines: int, count: int) -> float:
        return groups["k-NN (search + re-score)"] / (2 * lines) - product * count

    encode = ((populate(b, big) - populate(a, small)) / 2
              - product * (sizes[1] * lists[1] - sizes[0] * lists[0])) / grown
    queries = [per_query(a, sizes[0], lists[0]), per_query(b, sizes[1], lists[1])]
    scanned = [nprobe * size / count for size, count in zip(sizes, lists)]
    scan = (queries[1] - queries[0]) / (scanned[1] - scanned[0])
    tail = "margins, runs, retrieval"
    return {**costs, "encode per row": encode, "scan per code": scan,
            "re-score per candidate": (queries[1] - scan * scanned[1]) / (K * REFINE),
            "margins, retrieval, writing per line": (b[tail] + b["rest"] - a[tail] - a["rest"])
            / grown,
            "split per line": (b["split"] - a["split"]) / (2 * grown)}


def print_staged_check(costs: dict, rows: list[dict]) -> None:
    """Each staged run's CPU seconds per group of stages against the model's."""
    print("\nthe model against every staged run (--work-dir): modelled / measured CPU seconds")
    for row in rows:
        model = cost_model(costs, row["lines"], lists_of(row["index"]), row["nprobe"])
        measured = grouped_cpu(row)
        modelled = {"index (train + populate)": model["train (one worker per side)"]
                    + model["populate"],
                    "k-NN (search + re-score)": model["search"] + model["re-score"],
                    "margins, runs, retrieval": model["margins, retrieval, writing"]}
        print(f"  {row['lines']:,} `{row['index']}`: " + ", ".join(
            f"{group} {value:.0f} / {measured[group]:.0f}" for group, value in modelled.items())
            + f"; split {measured['split']:.0f}, rest {measured['rest']:.0f}")


def cost_model(costs: dict, lines: float, lists: int, nprobe: int) -> dict:
    """CPU seconds of each stage for `lines` lines a side (both sides, both directions)."""
    sample = max(TRAIN_AT_LEAST, TRAIN_PER_LIST * lists)
    per_query = costs["quantizer per list"] * lists + costs["scan per code"] * nprobe * lines / lists
    model = {
        "dedup": 2 * lines * costs["dedup per line"],
        "language ID": 2 * lines * costs.get("language ID per line", float("nan")),
        "embed": 2 * lines * costs.get("embed per line", float("nan")),
        "train (one worker per side)": 2 * sample * lists * costs["train per sample row and list"],
        "populate": 2 * lines * (costs["quantizer per list"] * lists + costs["encode per row"]),
        "search": 2 * lines * per_query,
        "re-score": 2 * lines * K * REFINE * costs["re-score per candidate"],
        "margins, retrieval, writing": lines * costs["margins, retrieval, writing per line"],
    }
    if "split per line" in costs:
        model["split (staged)"] = 2 * lines * costs["split per line"]
    return model


def print_cost_model(machines: list[int], cores: int, indexes: list[str], nprobe: int,
                     fit: str) -> None:
    """Unit costs, the mining stages extrapolated to 10M lines a side, and 1B x 1B on machines
    for each LISTS:NPROBE of `indexes`; with `fit` "staged", the units refitted on the largest
    and smallest staged runs of the last index the staged command ran with."""
    recorded = [json.loads(line) for line in open(OUT / "results.jsonl")]
    rows = [row for row in recorded
            if row["how"] == "stages in one process" and row["lines"] >= FIT_AT_LEAST]
    raw_path = OUT / "raw-text.jsonl"
    raw = [json.loads(line) for line in open(raw_path)] if raw_path.exists() else []
    costs = crawl_rates(unit_costs(rows, raw))
    staged = [row for row in recorded if row["how"] == STAGED and row["lines"] >= FIT_AT_LEAST]
    if fit == "staged":
        latest = {row["lines"]: row for row in staged}  # the last run of each size
        if len(latest) < 2:
            raise SystemExit("--fit staged: needs staged runs (--work-dir) at two sizes")
        small, big = latest[min(latest)], latest[max(latest)]
        costs = staged_unit_costs(costs, small, big)
        print(f"\nrefitted on the last staged runs of {small['lines']:,} (`{small['index']}`) "
              f"and {big['lines']:,} (`{big['index']}`) lines a side")
    if staged:
        print_staged_check(costs, staged)
    print("CPU seconds per unit:")
    for name, value in costs.items():
        print(f"  {name}: {value:.3g}")
    mining = ("train (one worker per side)", "populate", "search", "re-score",
              "margins, retrieval, writing") + (("split (staged)",) if fit == "staged" else ())
    print("\nthe model against every --stages run: modelled / measured CPU seconds")
    for row in rows:
        model = cost_model(costs, row["lines"], lists_of(row["index"]), row["nprobe"])
        measured = [row["stages"]["train"]["cpu"], row["stages"]["populate"]["cpu"],
                    row["stages"]["search"]["cpu"], row["stages"]["re-score"]["cpu"]]
        print(f"  {row['lines']:,} `{row['index']}`: " + ", ".join(
            f"{stage.split()[0]} {model[stage]:.0f} / {value:.0f}"
            for stage, value in zip(mining, measured)))
    print("\nmining embeddings, extrapolated CPU seconds (index sized by --scaled)")
    print("| lines a side | index | " + " | ".join(mining) + " | total |")
    print("| ---: | --- |" + " ---: |" * (len(mining) + 1))
    for size in (1_000_000, 2_000_000, 4_000_000, 10_000_000):
        index = scaled_index(size)
        model = cost_model(costs, size, lists_of(index), nprobe)
        cells = [model[stage] for stage in mining]
        print(f"| {size:,} | `{index}` | " + " | ".join(f"{value:,.0f}" for value in cells)
              + f" | {sum(cells):,.0f} |")
    for choice in indexes:
        count, probes = map(int, choice.split(":"))
        model = cost_model(costs, 1e9, count, probes)
        print(f"\n1B x 1B, IVF{count},PQ32x4fs, nprobe {probes}: core-hours, and hours on M "
              f"machines of {cores} cores (training: one machine)")
        print("| stage | core-hours | " + " | ".join(f"M = {m}" for m in machines) + " |")
        print("| --- | ---: |" + " ---: |" * len(machines))
        for stage, seconds in model.items():
            spread = [seconds / 3600 / (cores * (1 if stage.startswith("train") else m))
                      for m in machines]
            print(f"| {stage} | {seconds / 3600:,.0f} | "
                  + " | ".join(f"{hours:,.1f}" for hours in spread) + " |")


# --- main ---------------------------------------------------------------------------------

def table(rows: list[Row]) -> str:
    head = ("| lines a side | how | index, nprobe | wall | CPU | driver RssAnon | largest other "
            "| tree RssAnon | disk | planted found | load |\n"
            "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    lines = [head]
    for row in rows:
        lines.append(
            f"| {row.lines:,} | {row.how} | `{row.index}`, {row.nprobe} | {row.wall:.0f} s | "
            f"{row.cpu:.0f} s | {row.driver_mib} MiB | {row.other_mib} MiB | {row.tree_mib} MiB | "
            f"{row.disk_mib} MiB | {row.found:,} / {row.planted:,} "
            f"({100 * row.found / row.planted:.1f}%) | {row.load} |")
    return "\n".join(lines)


def stage_table(rows: list[Row]) -> str:
    names = list(dict.fromkeys(stage for row in rows for stage in row.stages))
    if not names:
        return ""
    lines = ["| lines a side | index | " + " | ".join(names) + " |",
             "| ---: | --- |" + " ---: |" * len(names)]
    for row in rows:
        cells = []
        for name in names:
            value = row.stages.get(name)
            cells.append("" if value is None else
                         f"{value['wall']} s ({value['cpu']} s CPU)" if isinstance(value, dict)
                         else f"{value} s")
        lines.append(f"| {row.lines:,} | `{row.index}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "stages":
        stages_in_process(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[250_000, 1_000_000],
                        help="lines a side, one run each")
    parser.add_argument("--index", default="IVF256,PQ32x4fs", help="FAISS factory")
    parser.add_argument("--scaled", action="store_true",
                        help="the index by N: IVF lists ~ sqrt(N), PQ32x4fs")
    parser.add_argument("--nprobe", type=int, default=16)
    parser.add_argument("--stages", action="store_true",
                        help="today's library calls in one process, timed stage by stage")
    parser.add_argument("--work-dir", action="store_true",
                        help="laser mine --work-dir W; stage times from W's manifests")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="laser mine --ray ADDRESS (e.g. local): workers sampled too")
    parser.add_argument("--raw-text", metavar="TSV_GZ",
                        help="time raw text to pairs on the first --lines pairs of this corpus")
    parser.add_argument("--raw-corpus", metavar="CORPUS_DIR", type=Path,
                        help="mine a crawl of --lines lines a side, many compressed shards "
                             "assembled from this corpus (xxx-eng.tsv.gz), in one command")
    parser.add_argument("--langs", nargs=2, default=["fr", "en"], metavar=("SRC", "TRG"))
    parser.add_argument("--cost-model", action="store_true",
                        help="print the 1B x 1B cost model from the runs recorded so far")
    parser.add_argument("--fit", choices=["stages", "staged"], default="stages",
                        help="cost model units from the --stages runs, or refitted on the two "
                             "staged (--work-dir) runs of one index")
    parser.add_argument("--machines", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--cores", type=int, default=32, help="cores a machine (cost model)")
    parser.add_argument("--model-index", nargs="+", default=["32768:16", "262144:128"],
                        metavar="LISTS:NPROBE", help="indexes of the 1B x 1B cost model")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.cost_model:
        print_cost_model(args.machines, args.cores, args.model_index, args.nprobe, args.fit)
        return
    if args.raw_corpus:
        for lines in args.lines:
            result = raw_crawl(args.raw_corpus, lines, args.nprobe)
            print(json.dumps(result, indent=1))
            with open(OUT / "raw-crawl.jsonl", "a") as f:
                f.write(json.dumps(result) + "\n")
        return
    if args.raw_text:
        for lines in args.lines:
            result = raw_text(args.raw_text, lines, *args.langs)
            print(json.dumps(result, indent=1))
            with open(OUT / "raw-text.jsonl", "a") as f:
                f.write(json.dumps(result) + "\n")
        return
    rows = []
    for lines in args.lines:
        data = corpora(lines)
        index = scaled_index(lines) if args.scaled else args.index
        row = (run_stages(data, index, args.nprobe) if args.stages
               else run_command(data, index, args.nprobe, args.work_dir, args.ray))
        rows.append(row)
        print(json.dumps(asdict(row)), file=sys.stderr)
        with open(OUT / "results.jsonl", "a") as f:
            f.write(json.dumps(asdict(row)) + "\n")
    print(table(rows))
    print(stage_table(rows))


if __name__ == "__main__":
    main()
