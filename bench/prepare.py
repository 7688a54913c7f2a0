#!/usr/bin/env python3
"""The cleaning stage (`laser prepare`) on a crawl built from the corpus: lines per second per
core, and what each filter removed.

    python bench/prepare.py ../shared/data/corpus/train --lines 200000

The crawl is the "French crawl" of `bench/mine_scale.py --raw-corpus` (assembled by its own
code, once, under bench/out/mine_scale/crawl-N/, and shared with it): `--lines` lines in 64
shards in 4 folders (gzip, xz, zstd and bzip2 in turn), a quarter of them the French side of
fra-eng, a quarter repeats of its lines, the rest the foreign lines of the other languages.
It runs twice, each time one command under `nice -n 10` with a work directory (whose manifests
give each stage's wall and CPU time):

1. as the plain text it is: `laser prepare DIR --lang fr --unify` (each line a paragraph,
   split into sentences);
2. as web pages: the same lines, in order, written as WET files (bench/out/prepare/wet-N/, a
   file a shard), pages of PAGE_LINES lines each with a menu line of its site (a site has
   SITE_PAGES pages), read by `laser prepare` as documents: the WARC reading and the
   boilerplate filter at work.

It also counts the distinct French lines that come out whole, and the other sentences kept.
Per-core rates are lines over CPU seconds (the stage's tasks run one at a time in this process).
Results are appended to bench/out/prepare/runs.jsonl and printed as a Markdown table.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from mine_scale import OUT as SCALE_OUT, assemble_crawl  # noqa: E402

OUT = ROOT / "bench" / "out" / "prepare"
PAGE_LINES = 10
SITE_PAGES = 20


def laser_command() -> list[str]:
    return ["nice", "-n", "10", str(Path(sys.executable).parent / "laser")]


def wet_crawl(crawl: dict) -> Path:
    """The French crawl as WET files, a file a shard (once; reused)."""
    from warcio.warcwriter import WARCWriter
    from laser.io.sources import expand, file_lines
    folder = OUT / f"wet-{crawl['lines a side']}"
    done = OUT / f"wet-{crawl['lines a side']}.json"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    page = 0
    for number, shard in enumerate(expand(crawl["src"])):
        with open(folder / f"crawl-{number:03d}.warc.wet.gz", "wb") as out:
            writer = WARCWriter(out, gzip=True)
            lines = list(file_lines(shard))
            for start in range(0, len(lines), PAGE_LINES):
                site = page // SITE_PAGES
                text = "".join(f"{line}\n" for line in lines[start:start + PAGE_LINES])
                text += f"Accueil | Actualités | Contact | Site {site}\n"
                writer.write_record(writer.create_warc_record(
                    f"http://site-{site}.example/page-{page}", "conversion",
                    payload=io.BytesIO(text.encode("utf-8")), warc_content_type="text/plain"))
                page += 1
    done.write_text(json.dumps({"pages": page}))
    return folder


def stage_times(work: Path) -> dict:
    """Each stage's wall and CPU seconds, from its manifest."""
    found = {}
    for manifest in sorted(work.glob("*/manifest.json")):
        record = json.loads(manifest.read_text())
        found[manifest.parent.name] = {"wall_s": record["wall_s"], "cpu_s": record["cpu_s"]}
    return found


def french_kept(output: Path, corpus: Path, french: int) -> dict:
    """How many of the crawl's distinct French lines come out whole, and how many other
    sentences are kept."""
    import gzip
    with gzip.open(corpus / "fra-eng.tsv.gz", "rt", encoding="utf-8") as f:
        gold = {line.split("\t")[0] for _, line in zip(range(french), f)}
    kept = output.read_text(encoding="utf-8").splitlines()
    return {"distinct French lines": len(gold), "kept whole": len(gold & set(kept)),
            "other sentences kept": sum(1 for sentence in kept if sentence not in gold)}


def run(name: str, source: str, crawl: dict, *options: str) -> dict:
    folder = OUT / name
    output = folder / "out.txt"
    work = folder / "work"
    lines = crawl["lines a side"]
    subprocess.run(["rm", "-rf", str(folder)], check=True)
    folder.mkdir(parents=True)
    command = [*laser_command(), "prepare", source, "--lang", "fr", "--unify", "-o",
               str(output), "--work-dir", str(work), "-q", *options]
    started = time.perf_counter()
    subprocess.run(command, check=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    wall = time.perf_counter() - started
    record = json.loads((Path(f"{output}.json")).read_text())
    stages = stage_times(work)
    cpu = sum(stage["cpu_s"] for stage in stages.values())
    return {"run": name, "input lines": lines, "command": " ".join(command[3:]),
            **french_kept(output, Path(crawl["corpus"]), crawl["french lines"]),
            "wall_s": round(wall, 1), "stages": stages, "cpu_s": round(cpu, 1),
            "lines per second per core": round(lines / cpu) if cpu else None,
            "documents": record["documents"], "sentences": record["sentences"],
            "removed": record["removed"], "kept": record["kept"]}


def table(runs: list[dict]) -> str:
    filters = list(runs[0]["removed"])
    head = ["run", "input lines", "sentences", *filters, "kept", "French lines kept whole",
            "CPU s", "lines/s/core"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        cells = [run["run"], f"{run['input lines']:,}", f"{run['sentences']:,}",
                 *(f"{run['removed'][name]:,}" for name in filters), f"{run['kept']:,}",
                 f"{run['kept whole']:,} of {run['distinct French lines']:,}",
                 f"{run['cpu_s']}", f"{run['lines per second per core']:,}"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the corpus's train/ folder (xxx-eng.tsv.gz)")
    parser.add_argument("--lines", type=int, default=200000, help="lines of the crawl")
    args = parser.parse_args()
    crawl = assemble_crawl(args.corpus, args.lines)
    wet = wet_crawl(crawl)
    runs = [run("text", crawl["src"], crawl), run("wet", str(wet), crawl)]
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "runs.jsonl", "a") as f:
        for record in runs:
            f.write(json.dumps({**record, "crawl": str(SCALE_OUT / f"crawl-{args.lines}")}) + "\n")
    print(table(runs))


if __name__ == "__main__":
    main()
