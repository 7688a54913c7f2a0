"""`laser align SRC_DIR TRG_DIR --pair-documents` on a small collection built from the vendored
corpus sample (German-English dev pairs): documents of consecutive sentences under shuffled
names, sentences dropped and merged, a document on each side without a translation. Every
translated pair is found, no lonely document is paired, and the beads carry their documents and
sentence indices."""
from __future__ import annotations

import gzip
import json
import random

import pytest

from conftest import CORPUS_SAMPLE, laser_ok, one_error_line, run_laser

LANGS = ("--src-lang", "de", "--trg-lang", "en")
SIZES = [5, 9, 14, 7, 11, 6, 8]  # the last two: one lonely document on each side


def dev_pairs() -> list[tuple[str, str]]:
    with gzip.open(CORPUS_SAMPLE / "dev" / "deu-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t")) for line in f][:sum(SIZES)]


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    """de/ and en/ folders and the true pairs {(de name, en name)}."""
    root = tmp_path_factory.mktemp("collections")
    rng = random.Random(7)
    pairs, documents, start = dev_pairs(), [], 0
    for size in SIZES:
        documents.append(pairs[start:start + size])
        start += size
    (root / "de").mkdir()
    (root / "en").mkdir()
    en_names = [f"page-{n}.txt" for n in rng.sample(range(100), len(SIZES) - 1)]
    truth = set()
    for number, document in enumerate(documents[:-2]):
        german = [de for de, _ in document]
        english = [en for _, en in document]
        german[1:3] = [f"{german[1]} {german[2]}"]  # merged on one side
        del english[-1]  # dropped from the other
        write(root / "de" / f"doc-{number}.txt", german)
        write(root / "en" / en_names[number], english)
        truth.add((f"doc-{number}.txt", en_names[number]))
    write(root / "de" / "doc-lonely.txt", [de for de, _ in documents[-2]])
    write(root / "en" / en_names[-1], [en for _, en in documents[-1]])
    return root, truth


def write(path, lines) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_pairs_are_found_one_to_one_and_their_beads_carry_provenance(collections, tmp_path):
    root, truth = collections
    result = laser_ok("align", str(root / "de"), str(root / "en"), "--pair-documents", *LANGS,
                      "--pairs-out", str(tmp_path / "pairs.tsv"), "-o",
                      str(tmp_path / "beads.jsonl"), "--format", "jsonl")
    found = [line.split("\t") for line in
             (tmp_path / "pairs.tsv").read_text(encoding="utf-8").splitlines()]
    assert {(src, trg) for src, trg, _ in found} == truth
    assert all(0.0 <= float(score) <= 1.0 for _, _, score in found)
    assert f"6 documents in {root / 'de'}, 6 in {root / 'en'}: 5 pairs found" in result.stderr
    beads = [json.loads(line) for line in
             (tmp_path / "beads.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {(b["src_document"], b["trg_document"]) for b in beads} == truth
    for bead in beads:
        german = (root / "de" / bead["src_document"]).read_text(encoding="utf-8").splitlines()
        english = (root / "en" / bead["trg_document"]).read_text(encoding="utf-8").splitlines()
        assert bead["src_text"] == " ".join(german[i] for i in bead["src"])
        assert bead["trg_text"] == " ".join(english[i] for i in bead["trg"])
    # the merged sentence of doc-0 faces the two English sentences it holds
    first = [b for b in beads if b["src_document"] == "doc-0.txt"]
    assert {"src": [1], "trg": [1, 2]}.items() <= next(b for b in first if 1 in b["src"]).items()


def test_the_pairs_beads_in_tsv_equal_aligning_each_found_pair(collections, tmp_path):
    root, truth = collections
    laser_ok("align", str(root / "de"), str(root / "en"), "--pair-documents", *LANGS,
             "-o", str(tmp_path / "beads.tsv"))
    rows = [line.split("\t") for line in
            (tmp_path / "beads.tsv").read_text(encoding="utf-8").splitlines()]
    assert {(row[0], row[2]) for row in rows} == truth
    for src, trg in sorted(truth):
        alone = tmp_path / f"{src}.tsv"
        laser_ok("align", str(root / "de" / src), str(root / "en" / trg), *LANGS, "-o",
                 str(alone))
        texts = [line.split("\t") for line in alone.read_text(encoding="utf-8").splitlines()]
        ours = [row[4:] for row in rows if row[0] == src]
        assert [row[:2] for row in ours] == [row[:2] for row in texts]


def test_a_high_threshold_pairs_nothing(collections, tmp_path):
    root, _ = collections
    result = laser_ok("align", str(root / "de"), str(root / "en"), "--pair-documents", *LANGS,
                      "--pair-threshold", "1.0", "--pairs-out", str(tmp_path / "pairs.tsv"),
                      "-o", str(tmp_path / "beads.tsv"))
    assert (tmp_path / "pairs.tsv").read_text() == "" and "0 pairs found" in result.stderr


def test_pairing_refuses_files_and_a_bad_threshold(collections, tmp_path):
    root, _ = collections
    result = run_laser("align", str(root / "de"), str(root / "en"), "--pair-documents", *LANGS,
                       "--pair-threshold", "2", "-o", str(tmp_path / "beads.tsv"))
    assert one_error_line(result) == "laser: error: --pair-threshold 2.0: give a share from 0 to 1"
    assert not (tmp_path / "beads.tsv").exists()


def test_no_cache_gives_the_same_pairs_and_beads(collections, tmp_path):
    root, _ = collections
    outputs = {}
    for cache in ("1024", "0"):
        laser_ok("align", str(root / "de"), str(root / "en"), "--pair-documents", *LANGS,
                 "--pair-cache-mb", cache, "--pairs-out", str(tmp_path / f"pairs-{cache}.tsv"),
                 "-o", str(tmp_path / f"beads-{cache}.tsv"))
        outputs[cache] = [(tmp_path / f"{name}-{cache}.tsv").read_bytes()
                          for name in ("pairs", "beads")]
    assert outputs["0"] == outputs["1024"] and outputs["0"][1]
