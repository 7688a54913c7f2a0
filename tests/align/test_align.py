"""laser align on small documents whose alignment is known, with the shipped default model:
merged sentences each way, deletions each side, identical documents, an empty side, very
unequal lengths; the three formats (the ladder read back), --min-score, bad input; the
coarse-to-fine program against the full one; the scorer."""
from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

import laser
from conftest import laser_ok, one_error_line, run_laser
from laser.align import AlignOptions, Bead, align_sentences
from laser.align.formats import read_ladder
from laser.align.scoring import score_alignments

ENGLISH = [
    "The old lighthouse keeper climbed the stairs every evening.",
    "He lit the lamp before the sun went down.",
    "Ships passing in the night trusted its light.",
    "One winter, a terrible storm hit the coast.",
    "The waves were higher than the houses of the village.",
    "A small fishing boat was lost in the dark.",
    "The keeper saw it from the top of the tower.",
    "He ran down to the beach with a lantern.",
    "The fishermen followed his signal to the harbour.",
    "In the morning the whole village thanked him.",
    "The mayor gave him a medal in the town square.",
    "He still climbs the stairs every evening.",
]
FRENCH = [
    "Le vieux gardien du phare montait l'escalier chaque soir.",
    "Il allumait la lampe avant le coucher du soleil.",
    "Les navires qui passaient dans la nuit se fiaient à sa lumière.",
    "Un hiver, une terrible tempête frappa la côte.",
    "Les vagues étaient plus hautes que les maisons du village.",
    "Un petit bateau de pêche s'était perdu dans l'obscurité.",
    "Le gardien le vit du haut de la tour.",
    "Il descendit en courant sur la plage avec une lanterne.",
    "Les pêcheurs suivirent son signal jusqu'au port.",
    "Le matin, tout le village le remercia.",
    "Le maire lui remit une médaille sur la place de la ville.",
    "Il monte toujours l'escalier chaque soir.",
]
UNRELATED = "Quarterly revenue of the software division rose by eleven percent."


def pairs(beads: list[Bead]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(bead.src, bead.trg) for bead in beads]


def one_to_one(count: int, src_from: int = 0, trg_from: int = 0) -> list:
    return [((src_from + i,), (trg_from + i,)) for i in range(count)]


def merged(sentences: list[str], first: int) -> list[str]:
    """The sentences with `first` and the next joined into one."""
    return sentences[:first] + [f"{sentences[first]} {sentences[first + 1]}"] + \
        sentences[first + 2:]


def test_a_translation_aligns_one_to_one():
    beads = laser.align(ENGLISH, FRENCH, src_lang="en", trg_lang="fr")
    assert pairs(beads) == one_to_one(12)
    assert all(0.4 < bead.score <= 1 for bead in beads)


def test_identical_documents_align_on_the_diagonal_with_cosine_one():
    beads = laser.align(ENGLISH, ENGLISH, src_lang="en", trg_lang="en")
    assert pairs(beads) == one_to_one(12)
    assert all(bead.score == pytest.approx(1, abs=1e-5) for bead in beads)


def test_a_sentence_merged_on_the_target_side_is_a_2_1_bead():
    beads = laser.align(ENGLISH, merged(FRENCH, 4), src_lang="en", trg_lang="fr")
    assert pairs(beads) == one_to_one(4) + [((4, 5), (4,))] + one_to_one(6, 6, 5)


def test_a_sentence_merged_on_the_source_side_is_a_1_2_bead():
    beads = laser.align(merged(ENGLISH, 7), FRENCH, src_lang="en", trg_lang="fr")
    assert pairs(beads) == one_to_one(7) + [((7,), (7, 8))] + one_to_one(3, 8, 9)


def test_a_sentence_only_the_source_has_is_a_deletion():
    src = ENGLISH[:6] + [UNRELATED] + ENGLISH[6:]
    beads = laser.align(src, FRENCH, src_lang="en", trg_lang="fr")
    assert pairs(beads) == one_to_one(6) + [((6,), ())] + one_to_one(6, 7, 6)
    assert beads[6].score == 0.0 and beads[6].kind == "1-0"


def test_a_sentence_only_the_target_has_is_an_insertion():
    beads = laser.align(ENGLISH, FRENCH[:3] + [UNRELATED] + FRENCH[3:], src_lang="en",
                        trg_lang="fr")
    assert pairs(beads) == one_to_one(3) + [((), (3,))] + one_to_one(9, 3, 4)


def test_an_empty_side_makes_every_sentence_of_the_other_a_deletion_or_insertion():
    assert pairs(laser.align(ENGLISH[:3], [], src_lang="en", trg_lang="fr")) == \
        [((0,), ()), ((1,), ()), ((2,), ())]
    assert pairs(laser.align([], FRENCH[:2], src_lang="en", trg_lang="fr")) == \
        [((), (0,)), ((), (1,))]
    assert laser.align([], [], src_lang="en", trg_lang="fr") == []


def test_one_sentence_against_a_long_document_finds_its_translation():
    beads = laser.align([ENGLISH[8]], FRENCH, src_lang="en", trg_lang="fr")
    assert ((0,), (8,)) in pairs(beads)
    assert [bead.src for bead in beads].count(()) == 11


def embedding_of_words(texts: list[str]) -> np.ndarray:
    """A bag of words: the sum of a fixed random vector per word (runs of sentences are the
    sums of their sentences')."""
    rows = np.zeros((len(texts), 32), dtype=np.float32)
    for row, text in zip(rows, texts):
        for word in text.split():
            row += np.random.default_rng(zlib.crc32(word.encode())).standard_normal(32)
    return rows


def test_the_coarse_to_fine_program_finds_the_full_programs_path():
    rng = np.random.default_rng(3)
    src = [" ".join(f"w{rng.integers(10**6)}" for _ in range(rng.integers(2, 9)))
           for _ in range(300)]
    extra = " ".join(f"x{rng.integers(10**6)}" for _ in range(8))
    trg = src[:40] + [f"{src[40]} {src[41]}"] + src[42:100] + src[101:200] + [extra] + src[200:]
    full = align_sentences(src, trg, embedding_of_words, embedding_of_words,
                           AlignOptions(full_cells=10**9))
    halved = align_sentences(src, trg, embedding_of_words, embedding_of_words,
                             AlignOptions(full_cells=500))
    assert pairs(halved) == pairs(full)
    assert ((40, 41), (40,)) in pairs(full) and ((100,), ()) in pairs(full)
    assert ((), (198,)) in pairs(full)


@pytest.fixture
def documents(tmp_path):
    src, trg = tmp_path / "doc.en", tmp_path / "doc.fr"
    src.write_text("\n".join(ENGLISH[:6] + [UNRELATED] + ENGLISH[6:]) + "\n", encoding="utf-8")
    trg.write_text("\n".join(merged(FRENCH, 2)) + "\n", encoding="utf-8")
    return src, trg


def test_the_ladder_reads_back_as_the_beads_of_the_api(documents, tmp_path):
    src, trg = documents
    out = tmp_path / "out.ladder"
    laser_ok("align", src, trg, "--src-lang", "en", "--trg-lang", "fr", "--format", "vecalign",
             "-o", out, "-q")
    expected = laser.align(src.read_text().splitlines(), trg.read_text().splitlines(),
                           src_lang="en", trg_lang="fr")
    lines = out.read_text().splitlines()
    assert lines[2] == "[2, 3]:[2]:" + lines[2].rsplit(":", 1)[1]
    assert lines[5] == "[6]:[]:" + lines[5].rsplit(":", 1)[1]
    read = read_ladder(lines)
    assert pairs(read) == pairs(expected)
    assert [bead.cost for bead in read] == pytest.approx([bead.cost for bead in expected],
                                                         abs=1e-5)


def test_tsv_and_jsonl_carry_texts_and_scores_and_min_score_drops_weak_beads(documents,
                                                                             tmp_path):
    src, trg = documents
    result = laser_ok("align", src, trg, "--src-lang", "en", "--trg-lang", "fr")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(rows) == 12 and all(len(row) == 3 for row in rows)
    assert rows[2][:2] == [f"{ENGLISH[2]} {ENGLISH[3]}", f"{FRENCH[2]} {FRENCH[3]}"]
    assert rows[5][:2] == [UNRELATED, ""] and float(rows[5][2]) == 0
    assert "aligned 13 and 11 sentences in 12 beads" in result.stderr
    out = tmp_path / "beads.jsonl"
    result = laser_ok("align", src, trg, "--src-lang", "en", "--trg-lang", "fr", "--format",
                      "jsonl", "--min-score", "0.3", "-o", out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 11 and "1 under --min-score left out" in result.stderr
    assert records[2]["src"] == [2, 3] and records[2]["trg"] == [2]
    assert records[2]["trg_text"] == f"{FRENCH[2]} {FRENCH[3]}"
    assert all(record["score"] >= 0.3 for record in records)


@pytest.mark.parametrize("content, message", [
    (b"one\ntwo\x00\n", "contains a NUL byte"), (b"one\n\xff\xfe\n", "invalid UTF-8")])
def test_bad_input_is_one_line_naming_file_and_line(tmp_path, content, message):
    bad, good = tmp_path / "bad.txt", tmp_path / "good.txt"
    bad.write_bytes(content)
    good.write_text("one\ntwo\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    line = one_error_line(run_laser("align", good, bad, "--src-lang", "en", "--trg-lang", "fr",
                                    "-o", out))
    assert f"{bad}:2: {message}" in line
    assert not out.exists()


def test_the_scorer_counts_strict_and_lax_hits_as_vecalign_defines_them():
    gold = [((0,), (0,)), ((1, 2), (1,)), ((3,), ()), ((4,), (2,))]
    test = [((0,), (0,)), ((1,), (1,)), ((2,), ()), ((3,), (2,)), ((4,), ())]
    scores = score_alignments([gold], [test])
    # precision: 5 test beads, 1 exact; lax: (1)-(1) overlaps gold (1,2)-(1); the rest miss
    assert scores.precision_strict == pytest.approx(1 / 5)
    assert scores.precision_lax == pytest.approx(2 / 5)
    # recall: the 3 gold beads of both sides against the 3 test beads of both sides
    assert scores.recall_strict == pytest.approx(1 / 3)
    assert scores.recall_lax == pytest.approx(2 / 3)
    assert scores.f1_strict == pytest.approx(2 * (1 / 5) * (1 / 3) / (1 / 5 + 1 / 3))
