"""The aligner's exact small cases on designed embeddings (a run of sentences embeds as the
normalised sum of its sentences' vectors, so the true beads have cosine 1): merged sentences
each way, deletions each side, identical documents, an empty side, very unequal lengths, the
coarse-to-fine path equal to the full program; the ladder read back; `laser align` end to end
with bad input refused in one line."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import laser_ok, one_error_line, run_laser
from laser.align import AlignOptions, Overlaps, align_embeddings
from laser.align.formats import Document, read_ladder, write_beads

DIM = 64


def sentence_vectors(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)


def overlaps(vectors: np.ndarray, longest: int = 3) -> Overlaps:
    """Overlaps whose run i..i+l-1 is the sum of its sentences' vectors (scaled by Overlaps)."""
    n = len(vectors)
    runs = np.zeros((longest, n, DIM), dtype=np.float32)
    for length in range(1, longest + 1):
        for start in range(n - length + 1):
            runs[length - 1, start] = vectors[start:start + length].sum(axis=0)
    return Overlaps.of(runs, np.full(n, 40))


def kinds_and_indices(beads) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(bead.src, bead.trg) for bead in beads]


def test_identical_documents_align_one_to_one():
    vectors = sentence_vectors(30, seed=1)
    beads = align_embeddings(overlaps(vectors), overlaps(vectors))
    assert kinds_and_indices(beads) == [((i,), (i,)) for i in range(30)]
    assert all(bead.score == pytest.approx(1.0, abs=1e-5) for bead in beads)


def test_a_merged_sentence_each_way():
    src = sentence_vectors(20, seed=2)
    # target sentence 5 translates source 5 and 6; source 12 translates target 11 and 12
    trg = np.concatenate([src[:5], [src[5] + src[6]], src[7:12],
                          [src[12] * 0.5 + 0.1 * sentence_vectors(1, 9)[0]],
                          [src[12] * 0.5 - 0.1 * sentence_vectors(1, 9)[0]], src[13:]])
    beads = kinds_and_indices(align_embeddings(overlaps(src), overlaps(trg)))
    assert ((5, 6), (5,)) in beads and ((12,), (11, 12)) in beads
    assert [pair for pair in beads if len(pair[0]) == len(pair[1]) == 1] == (
        [((i,), (i,)) for i in range(5)] + [((i,), (i - 1,)) for i in range(7, 12)]
        + [((i,), (i,)) for i in range(13, 20)])


def test_deletions_on_each_side():
    src = sentence_vectors(24, seed=3)
    extra = sentence_vectors(2, seed=4)
    trg = np.concatenate([src[:8], [extra[0]], src[8:15], src[16:]])  # 0-1 at 8, 1-0 at 15
    beads = kinds_and_indices(align_embeddings(overlaps(src), overlaps(trg)))
    assert ((), (8,)) in beads
    # the deleted source sentence is left out, or joined to a neighbour's true bead (as in
    # Vecalign, a 2-1 bead can cost less than a deletion); every other pair is found 1-1
    true = {**{i: i for i in range(8)}, **{i: i + 1 for i in range(8, 15)},
            **{i: i for i in range(16, 24)}}
    assert all(true.get(i) in trg_side for src_side, trg_side in beads for i in src_side
               if i != 15)
    assert len([pair for pair in beads if len(pair[0]) == len(pair[1]) == 1]) >= 22


def test_one_side_empty_is_all_insertions_or_deletions():
    vectors = sentence_vectors(5, seed=5)
    empty = Overlaps(np.zeros((1, 0, DIM), dtype=np.float32), np.zeros(0, dtype=np.int64))
    assert kinds_and_indices(align_embeddings(overlaps(vectors), empty)) == [
        ((i,), ()) for i in range(5)]
    assert kinds_and_indices(align_embeddings(empty, overlaps(vectors))) == [
        ((), (i,)) for i in range(5)]
    assert align_embeddings(empty, empty) == []


def test_very_unequal_lengths_keep_every_sentence_once():
    src = sentence_vectors(200, seed=6)
    trg = src[90:100]  # ten sentences of the middle of the source
    beads = align_embeddings(overlaps(src), overlaps(trg))
    assert [i for bead in beads for i in bead.src] == list(range(200))
    assert [j for bead in beads for j in bead.trg] == list(range(10))
    for bead in beads:
        if bead.trg:  # each target sentence is in the bead of its own source sentence
            assert [j + 90 for j in bead.trg] == [i for i in bead.src if 90 <= i < 100]
    assert len([bead for bead in beads if bead.trg]) >= 8


def test_the_coarse_to_fine_path_equals_the_full_program():
    src = sentence_vectors(400, seed=7)
    trg = np.concatenate([src[:100], [src[100] + src[101]], src[102:300], sentence_vectors(3, 8),
                          src[300:]])
    full = align_embeddings(overlaps(src), overlaps(trg), AlignOptions(full_cells=10**9))
    banded = align_embeddings(overlaps(src), overlaps(trg), AlignOptions(full_cells=5_000))
    assert kinds_and_indices(banded) == kinds_and_indices(full)


def test_the_ladder_reads_back_as_written():
    src = sentence_vectors(12, seed=10)
    trg = np.concatenate([src[:4], [src[4] + src[5]], src[6:9], src[10:]])
    beads = align_embeddings(overlaps(src), overlaps(trg))
    lines = []

    class Lines:
        def write(self, text: str) -> None:
            lines.extend(text.splitlines())

    texts = [f"s{i}" for i in range(12)], [f"t{j}" for j in range(len(trg))]
    write_beads(Lines(), beads, Document(texts[0]), Document(texts[1]), "vecalign", None)
    back = read_ladder(lines)
    assert kinds_and_indices(back) == kinds_and_indices(beads)
    assert [bead.cost for bead in back] == pytest.approx([bead.cost for bead in beads], abs=1e-4)
    assert lines[4].startswith("[4, 5]:[4]:") and lines[:4] == [
        line for line in lines[:4] if line.split(":")[0] == line.split(":")[1]]


def test_laser_align_end_to_end_and_bad_input(tmp_path):
    src, trg = tmp_path / "de.txt", tmp_path / "en.txt"
    src.write_text("Das Haus ist rot.\nIch trinke gern Kaffee.\nWo ist der Bahnhof?\n",
                   encoding="utf-8")
    trg.write_text("The house is red.\nI like drinking coffee.\nWhere is the station?\n",
                   encoding="utf-8")
    ladder = laser_ok("align", src, trg, "--src-lang", "de", "--trg-lang", "en", "--format",
                      "vecalign", "-q").stdout.splitlines()
    assert [line.rsplit(":", 1)[0] for line in ladder] == ["[0]:[0]", "[1]:[1]", "[2]:[2]"]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Fine.\nbro\xffken\n")
    out = tmp_path / "out.tsv"
    line = one_error_line(run_laser("align", bad, trg, "--src-lang", "de", "--trg-lang", "en",
                                    "-o", out))
    assert f"{bad}:2" in line and not out.exists()
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"Fine.\nNUL\x00here\n")
    assert f"{nul}:2" in one_error_line(run_laser("align", src, nul, "--src-lang", "de",
                                                  "--trg-lang", "en"))


def test_split_sentences_aligns_paragraph_files(tmp_path):
    src, trg = tmp_path / "de.txt", tmp_path / "en.txt"
    src.write_text("Das Haus ist rot. Ich trinke gern Kaffee.\nWo ist der Bahnhof?\n",
                   encoding="utf-8")
    trg.write_text("The house is red.\nI like drinking coffee. Where is the station?\n",
                   encoding="utf-8")
    rows = laser_ok("align", src, trg, "--src-lang", "de", "--trg-lang", "en",
                    "--split-sentences", "-q").stdout.splitlines()
    assert [row.split("\t")[:2] for row in rows] == [
        ["Das Haus ist rot.", "The house is red."],
        ["Ich trinke gern Kaffee.", "I like drinking coffee."],
        ["Wo ist der Bahnhof?", "Where is the station?"]]
    assert "one document pair" in one_error_line(run_laser(
        "align", "--pairs", src, "--src-lang", "de", "--trg-lang", "en", "--split-sentences"))
