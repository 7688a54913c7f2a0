#!/usr/bin/env python3
"""Writing embedding rows as JSON, as `laser serve` answers /embed, /vectorize and float
/v1/embeddings: microseconds and bytes per answer of 1, 4 and 8 rows of the shipped model.

Side by side in one run, alternating, on the same rows (the shipped model's embeddings of
English dev sentences, tests/data/corpus/dev):
* `orjson` — what the server does: orjson writes the float32 array as it is, each value in the
  shortest form that reads back as the same float32;
* `json` — the standard library on the rows as Python floats (`rows.tolist()`), each value in
  the 17 digits of a float64.

Both read back to the same float32 rows, which the run checks.

    python bench/json_rows.py [--answers 300] [--rounds 3]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENGLISH = ROOT / "tests/data/corpus/dev/fra-eng.tsv.gz"

from laser import Encoder  # noqa: E402


def with_json(rows: np.ndarray) -> bytes:
    return json.dumps(rows.tolist()).encode("utf-8")


def with_orjson(rows: np.ndarray) -> bytes:
    return orjson.dumps(rows, option=orjson.OPT_SERIALIZE_NUMPY)


WRITERS = {"orjson": with_orjson, "json": with_json}


def microseconds_per_answer(write, answers: list[np.ndarray]) -> float:
    started = time.perf_counter()
    for rows in answers:
        write(rows)
    return 1e6 * (time.perf_counter() - started) / len(answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=300, help="answers per size and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with gzip.open(ENGLISH, "rt", encoding="utf-8") as lines:
        sentences = [line.split("\t")[1].strip() for line in itertools.islice(lines, 64)]
    embedded = Encoder.load("default").encode(sentences, "en")
    print("| rows per answer | writer | µs per answer | bytes per answer |")
    print("|---:|---|---:|---:|")
    for size in (1, 4, 8):
        answers = [embedded[start:start + size] for start in range(0, 64 - size + 1, size)]
        answers = list(itertools.islice(itertools.cycle(answers), args.answers))
        for write in WRITERS.values():
            for rows in answers[:8]:
                assert np.array_equal(np.array(json.loads(write(rows)), dtype=np.float32), rows)
        timings = {name: [] for name in WRITERS}
        for _ in range(args.rounds):
            for name, write in WRITERS.items():
                timings[name].append(microseconds_per_answer(write, answers))
        for name, write in WRITERS.items():
            print(f"| {size} | {name} | {statistics.median(timings[name]):,.0f} | "
                  f"{len(write(answers[0])):,} |")


if __name__ == "__main__":
    main()
