"""--unify's grouping: the same sentences however little memory it may hold, whether the lines
are grouped in one pass or by parts (a side's files, as `laser mine`'s split tasks do), and memory
that does not grow with the lines."""
import gzip
import os
import random
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from laser.errors import LaserError
from laser.mining.corpus import scan_corpus
from laser.mining.unify import (FANOUT_BITS, UnifyOptions, number_lines, partition_lines,
                                resolve_partition, unify_lines)
from laser.text.dedup import normalize_for_dedup

from conftest import ROOT


def reference(lines, key="line"):
    """Sentences numbered by first appearance, with a dict: (sentence of each line, first line,
    last line of each sentence)."""
    number, line_sentence, first, last = {}, [], [], []
    for index, text in enumerate(lines):
        sentence = number.setdefault(normalize_for_dedup(text) if key == "normalized" else text,
                                     len(number))
        if sentence == len(first):
            first.append(index)
            last.append(index)
        last[sentence] = index
        line_sentence.append(sentence)
    return line_sentence, first, last


def assert_unified(lines, options, spilled):
    unified = unify_lines(lines, options)
    assert unified.spilled == spilled
    expected = reference(lines, options.key)
    for got, want in zip((unified.line_sentence, unified.first_line, unified.last_line), expected):
        assert np.array_equal(got, want)


def random_lines(count, distinct, seed=1):
    rng = random.Random(seed)
    return [f"Sentence {rng.randrange(distinct)}." if rng.random() < 0.8 else ""
            for _ in range(count)]


@pytest.mark.parametrize("memory, spilled", [(2048, True), (16 << 10, True), (64 << 20, False)])
def test_small_budgets_spill_and_give_the_same_sentences(memory, spilled):
    assert_unified(random_lines(8000, 1500), UnifyOptions(memory=memory), spilled)


def test_partitions_too_big_for_the_budget_are_split_again():
    lines = [f"distinct {i}" for i in range(5000)] + [f"distinct {i}" for i in range(0, 5000, 7)]
    assert_unified(lines, UnifyOptions(memory=2048), True)


@pytest.mark.parametrize("memory", [2048, 64 << 20])
@pytest.mark.parametrize("key", ["line", "normalized"])
def test_a_side_grouped_by_parts_gives_the_sentences_of_one_pass(tmp_path, memory, key):
    lines = random_lines(6000, 900) + [f"Sentence {i}." for i in range(0, 3000, 3)]
    lines += [line.upper() for line in lines[:500]]
    cuts = [0, 1000, 1000, 2500, 6999, 7000, len(lines)]  # an empty part, a part of one line
    options = UnifyOptions(key, memory)
    prefixes = [str(tmp_path / f"part{index}.") for index in range(len(cuts) - 1)]
    counts = [partition_lines(lines[start:stop], options, prefix)
              for prefix, start, stop in zip(prefixes, cuts, cuts[1:])]
    assert counts == [stop - start for start, stop in zip(cuts, cuts[1:])]
    resolved = [str(tmp_path / f"resolved-{part:x}") for part in range(1 << FANOUT_BITS)]
    for part, output in enumerate(resolved):
        resolve_partition([(f"{prefix}part-{part:x}", start)
                           for prefix, start in zip(prefixes, cuts)], output, options)
    chunk_firsts = [(f"{prefix}chunk-first", start) for prefix, start in zip(prefixes, cuts)]
    unified = number_lines(chunk_firsts, resolved, len(lines), options, str(tmp_path))
    for got, want in zip((unified.line_sentence, unified.first_line, unified.last_line),
                         reference(lines, key)):
        assert np.array_equal(got, want)


def test_normalized_text_unifies_case_digits_and_typographic_punctuation():
    lines = ["Hello, World 42!", "hello, world 17!", "  HELLO, WORLD 99!\t", "Hello, World!",
             "「Hello」", "hello", "Ünïcode ٣", "ünïcode 0"]
    assert [normalize_for_dedup(line) for line in lines[:3]] == ["hello, world 00!"] * 3
    assert normalize_for_dedup("「Hello」") == "hello"
    for memory in (2048, 64 << 20):
        unified = unify_lines(lines, UnifyOptions("normalized", memory))
        assert unified.line_sentence.tolist() == [0, 0, 0, 1, 2, 2, 3, 3]
        assert unified.first_line.tolist() == [0, 3, 4, 6]
        assert unified.last_line.tolist() == [2, 3, 5, 7]
    assert unify_lines(lines).line_sentence.tolist() == list(range(8))


def peak_memory(count, memory):
    lines = (f"Sentence {i % (count // 2)} of many." for i in range(count))
    tracemalloc.start()
    try:
        unified = unify_lines(lines, UnifyOptions(memory=memory))
        return tracemalloc.get_traced_memory()[1], unified
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_lines():
    small, _ = peak_memory(10000, 32 << 10)
    large, unified = peak_memory(40000, 32 << 10)
    assert unified.spilled and len(unified.first_line) == 20000
    assert unified.line_sentence[20000:25000].tolist() == list(range(5000))
    # a chunk's work is about 32 KiB: the side's keys alone would take 40,000 x 16 bytes, its
    # line arrays 320,000 bytes each
    assert small < 250_000 and large < 250_000, (small, large)


def test_a_side_of_many_files_is_the_side_of_their_lines_in_one(tmp_path):
    lines = random_lines(5000, 800)
    (tmp_path / "all.txt").write_text("".join(line + "\n" for line in lines))
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "1.gz").write_bytes(gzip.compress(
        "".join(line + "\n" for line in lines[:1234]).encode()))
    (tmp_path / "parts" / "2.txt").write_text("".join(line + "\n" for line in lines[1234:]))
    for unify in (False, True):
        one = scan_corpus(str(tmp_path / "all.txt"), unify)
        many = scan_corpus(str(tmp_path / "parts"), unify, unify_options=UnifyOptions(memory=4096),
                           workdir=str(tmp_path))
        for field in ("line_sentence", "first_line", "embedding_row"):
            assert np.array_equal(getattr(one, field), getattr(many, field))
    files, numbers = many.locate(np.array([0, 1233, 1234, 4999]))
    assert files == [str(tmp_path / "parts" / name) for name in ("1.gz", "1.gz", "2.txt", "2.txt")]
    assert numbers.tolist() == [1, 1234, 1, 3766]
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".laser-unify")]


def test_an_unknown_key_or_a_tiny_budget_is_refused():
    with pytest.raises(LaserError, match="unknown unify key 'case'"):
        UnifyOptions("case")
    with pytest.raises(LaserError, match="at least 2048 bytes"):
        UnifyOptions(memory=100)


def test_a_full_disk_under_the_work_files_is_one_line_and_leaves_none(tmp_path):
    script = (
        "import resource, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))\n"
        "from laser.errors import LaserError\n"
        "from laser.mining.unify import UnifyOptions, unify_lines\n"
        "try:\n"
        f"    unify_lines((f'line {{i}}' for i in range(100_000)), UnifyOptions(memory=4096),"
        f" {str(tmp_path)!r})\n"
        "except LaserError as error:\n"
        "    print(error)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(": cannot write (file too large)\n"), done.stdout
    assert list(tmp_path.iterdir()) == []
