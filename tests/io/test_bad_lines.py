"""--bad-lines: a line that is not UTF-8 text (invalid UTF-8, a NUL byte) stops the command by
default with an error naming the option; `skip` drops it from mining, language ID and dedup,
`replace` decodes it with U+FFFD (the only choice of `laser embed`, one row a line); both are
counted, the first few named by file and line, on stderr and in embed's sidecar."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from laser.errors import LaserError
from laser.io.bad_lines import NAMED_LINES, BadLines
from laser.io.sources import file_line_blocks, located_lines, read_line_blocks, read_lines

from conftest import laser_ok as ok, one_error_line, run_laser as run

RAW = b"one\ncaf\xe9\nthree\nnul \x00 byte\nfive"
WARNING = ("laser: warning: {done} 2 lines that are not UTF-8 text (--bad-lines {policy}): "
           "{path}:2 (invalid UTF-8 at byte 4), {path}:4 (contains a NUL byte; is this a text "
           "file?)")


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "web.txt"
    path.write_bytes(RAW)
    return path


def test_fail_is_the_default_and_names_the_option_where_there_is_one(text):
    with pytest.raises(LaserError, match=rf"^{text}:2: invalid UTF-8 at byte 4$"):
        list(read_lines(str(text)))
    with pytest.raises(LaserError, match=r":2: invalid UTF-8 at byte 4 \(--bad-lines skip drops "
                                         r"such lines or replace decodes them with U\+FFFD\)$"):
        list(read_lines(str(text), BadLines("fail", "--bad-lines")))
    with pytest.raises(LaserError, match=r"\(--bad-lines replace decodes them with U\+FFFD\)$"):
        list(read_lines(str(text), BadLines("fail", "--bad-lines", ("fail", "replace"))))
    with pytest.raises(LaserError, match="unknown bad-line policy 'drop'"):
        BadLines("drop")


def test_skip_drops_and_counts_replace_decodes(text):
    skipped = BadLines("skip")
    assert list(read_lines(str(text), skipped)) == ["one", "three", "five"]
    assert (skipped.count, skipped.named) == (2, [f"{text}:2 (invalid UTF-8 at byte 4)",
                                                  f"{text}:4 (contains a NUL byte; is this a "
                                                  "text file?)"])
    replaced = BadLines("replace")
    assert list(read_lines(str(text), replaced)) == ["one", "caf\ufffd", "three",
                                                     "nul \ufffd byte", "five"]
    assert replaced.count == 2
    # a file's own line numbers, among the lines kept
    assert [(number, line) for _, number, line in located_lines(str(text), BadLines("skip"))] \
        == [(1, "one"), (2, "three"), (3, "five")]


@pytest.mark.parametrize("block_bytes", [4, 1 << 20])
def test_blocks_skip_and_replace_as_lines_do(tmp_path, text, block_bytes):
    packed = tmp_path / "web.txt.gz"
    packed.write_bytes(gzip.compress(RAW))
    for path in (text, packed):
        for policy in ("skip", "replace"):
            blocks = list(file_line_blocks(str(path), block_bytes, BadLines(policy)))
            lines = b"\n".join(block for block, _ in blocks).decode("utf-8").split("\n")
            assert lines == list(read_lines(str(path), BadLines(policy)))
            assert sum(count for _, count in blocks) == len(lines)
    with pytest.raises(LaserError, match=":2: invalid UTF-8 at byte 4$"):
        list(read_line_blocks(str(text), BadLines("fail")))


def test_the_first_few_are_named_and_the_rest_counted(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"\xff\n" * (NAMED_LINES + 3))
    skipped = BadLines("skip", "--bad-lines")
    assert list(read_lines(str(path), skipped)) == []
    assert skipped.summary() == (
        f"skipped {NAMED_LINES + 3} lines that are not UTF-8 text (--bad-lines skip): "
        + ", ".join(f"{path}:{n} (invalid UTF-8 at byte 1)" for n in range(1, NAMED_LINES + 1))
        + ", and 3 more")
    assert BadLines("skip").summary() is None


def test_lid_skips_or_replaces(text):
    failed = one_error_line(run("lid", text))
    assert failed.endswith("(--bad-lines skip drops such lines or replace decodes them with "
                           "U+FFFD)")
    skipped = run("lid", text, "--bad-lines", "skip")
    assert skipped.exit_code == 0 and len(skipped.stdout.splitlines()) == 3
    assert WARNING.format(done="skipped", policy="skip", path=text) in skipped.stderr
    replaced = run("lid", text, "--bad-lines", "replace")
    assert len(replaced.stdout.splitlines()) == 5
    assert WARNING.format(done="replaced bad bytes with U+FFFD in", policy="replace",
                          path=text) in replaced.stderr


def test_embed_replaces_only_and_records_it_in_the_sidecar(tmp_path, text):
    out = tmp_path / "web.npy"
    assert one_error_line(run("embed", text, "-l", "en", "-o", out, "--bad-lines", "skip")) == (
        "laser: error: --bad-lines skip: not here, where every line keeps its place (one row a "
        "line); choose fail or replace")
    assert "(--bad-lines replace decodes them with U+FFFD)" in \
        one_error_line(run("embed", text, "-l", "en", "-o", out, "-q"))
    done = ok("embed", text, "-l", "en", "-o", out, "--bad-lines", "replace", "-q")
    assert WARNING.format(done="replaced bad bytes with U+FFFD in", policy="replace",
                          path=text) in done.stderr
    assert np.load(out).shape[0] == 5
    record = json.loads((tmp_path / "web.npy.json").read_text())["bad_lines"]
    assert record == {"policy": "replace", "count": 2,
                      "named": [f"{text}:2 (invalid UTF-8 at byte 4)",
                                f"{text}:4 (contains a NUL byte; is this a text file?)"]}
    clean = tmp_path / "clean.txt"
    clean.write_text("one\n", encoding="utf-8")
    ok("embed", clean, "-l", "en", "-o", out, "-q")
    assert json.loads((tmp_path / "web.npy.json").read_text())["bad_lines"] is None


def test_mine_skips_bad_lines_of_a_side_or_replaces_them(tmp_path):
    src, trg = tmp_path / "fr.txt", tmp_path / "en.txt"
    src.write_bytes(b"Le livre est sur la table.\nO\xf9 est la gare ?\nJ'aime le th\xc3\xa9.\n")
    trg.write_text("The book is on the table.\nI like tea.\n", encoding="utf-8")
    out = tmp_path / "mined.tsv"
    sides = [src, trg, "--src-lang", "fr", "--trg-lang", "en", "-o", out]
    assert "(--bad-lines skip drops such lines" in one_error_line(run("mine", *sides, "-q"))
    skipped = ok("mine", *sides, "--bad-lines", "skip", "--output-format", "ids", "-q")
    assert f"skipped 1 line that is not UTF-8 text (--bad-lines skip): {src}:2 (invalid UTF-8 " \
           "at byte 2)" in skipped.stderr
    # lines keep their numbers in the input: the tea line is line 2 (0-based), after the
    # skipped line 1
    assert {tuple(row.split("\t")[1:]) for row in out.read_text().splitlines()} == \
        {("0", "0"), ("2", "1")}
    ok("mine", *sides, "--bad-lines", "replace", "--output-format", "jsonl", "-q",
       "--retrieval", "fwd")
    assert "O\ufffd est la gare ?" in [json.loads(row)["src"]
                                      for row in out.read_text().splitlines()]


@pytest.fixture
def bitext(tmp_path):
    """A source side of two files (lines 0-2 and 3-7 of the side; lines 4 and 6 are not UTF-8)
    and a target of 8 lines, with embeddings where line i of each side has row i, the same
    random row on both sides: line i pairs with line i."""
    folder = tmp_path / "fr"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"un\ndeux\ntrois\n")
    (folder / "b.txt").write_bytes(b"quatre\ncinq \xff\nsix\n\xfesept\nhuit\n")
    trg = tmp_path / "en.txt"
    trg.write_text("".join(f"line {i}\n" for i in range(8)), encoding="utf-8")
    rows = np.random.default_rng(7).standard_normal((8, 16)).astype(np.float32)
    for side in ("fr", "en"):
        np.save(tmp_path / f"{side}.npy", rows)
    return folder, trg, tmp_path


KEPT = [0, 1, 2, 3, 5, 7]  # the source's lines kept, by their number in the input


def _mined(bitext, *options, embeddings=("fr.npy", "en.npy")):
    folder, trg, tmp_path = bitext
    out = tmp_path / "out"
    done = ok("mine", folder, trg, "--src-embeddings", tmp_path / embeddings[0],
              "--trg-embeddings", tmp_path / embeddings[1], "--bad-lines", "skip", "-q",
              "-o", out, *options)
    assert f"skipped 2 lines that are not UTF-8 text (--bad-lines skip): {folder / 'b.txt'}:2 " \
           f"(invalid UTF-8 at byte 6), {folder / 'b.txt'}:4 (invalid UTF-8 at byte 1)" \
        in done.stderr
    return [row.split("\t") for row in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("split", [[], ["--shard-lines", "3", "--unify"]])
def test_mine_skip_keeps_each_line_s_number_row_and_provenance(bitext, split):
    folder = bitext[0]
    # precomputed rows: a skipped line's row is left out with it, so line i still pairs with i
    found = _mined(bitext, "--output-format", "ids", "--provenance", "--retrieval", "fwd", *split)
    places = [(folder / "a.txt", n + 1) for n in range(3)] + \
        [(folder / "b.txt", n - 2) for n in range(3, 8)]
    assert sorted((int(s), int(t), file, int(line)) for _, s, t, file, line, *_ in found) == \
        [(i, i, str(places[i][0]), places[i][1]) for i in KEPT]
    assert {(file, line) for *_, file, line in found} == {(str(bitext[1]), str(i + 1))
                                                          for i in KEPT}
    records = [json.loads(row[0]) for row in _mined(bitext, "--output-format", "jsonl",
                                                    "--retrieval", "fwd")]
    assert sorted((r["src_line"], r["trg_line"], r["trg"]) for r in records) == \
        [(i, i, f"line {i}") for i in KEPT]


def test_mine_skip_scores_line_i_with_line_i_of_the_input(bitext):
    # line i against line i for the lines kept on both sides; the skipped ones are absent
    found = _mined(bitext, "--mode", "score", "--output-format", "ids")
    assert [(int(s), int(t)) for _, s, t in found] == [(i, i) for i in KEPT]
    # every source line kept, with its best target
    assert [row[0] for row in _mined(bitext, "--mode", "search")] == [f"line {i}" for i in KEPT]


def test_mine_skip_needs_a_row_for_every_line_of_the_input(bitext):
    folder, trg, tmp_path = bitext
    np.save(tmp_path / "kept.npy", np.load(tmp_path / "fr.npy")[KEPT])  # rows of the kept only
    failed = run("mine", folder, trg, "--src-embeddings", tmp_path / "kept.npy",
                 "--trg-embeddings", tmp_path / "en.npy", "--bad-lines", "skip", "-q",
                 "-o", tmp_path / "out")
    assert failed.exit_code == 1  # after the split, kept for a re-run
    assert failed.stderr.splitlines()[-1] == \
        f"laser: error: {folder} has 8 lines but {tmp_path / 'kept.npy'} holds 6 embeddings"


def test_dedup_skips_bad_lines(tmp_path):
    path = tmp_path / "dups.txt"
    path.write_bytes(b"The book is on the table.\nThe book is on the table.\nbad \xff\n"
                     b"I like tea.\n")
    out = tmp_path / "kept.txt"
    done = ok("dedup", path, "-l", "en", "-o", out, "--bad-lines", "skip")
    assert out.read_text(encoding="utf-8") == "The book is on the table.\nI like tea.\n"
    assert f"skipped 1 line that is not UTF-8 text (--bad-lines skip): {path}:3" in done.stderr
    ok("dedup", path, "-l", "en", "-o", out, "--bad-lines", "replace", "-q")
    assert out.read_text(encoding="utf-8").splitlines()[1] == "bad \ufffd"


def test_dedup_skip_keeps_the_line_numbers_and_the_rows_of_the_input(tmp_path):
    path = tmp_path / "dups.txt"
    path.write_bytes(b"alpha\nbad \xff\nbeta\nalpha again\ngamma\n")
    # rows: line 3 duplicates line 0; the bad line 1's row would duplicate line 2 (beta)
    rows = np.random.default_rng(3).standard_normal((5, 8)).astype(np.float32)
    rows[3], rows[1] = rows[0], rows[2]
    np.save(tmp_path / "rows.npy", rows)
    outputs = ["-o", tmp_path / "kept.txt", "--kept-ids", tmp_path / "ids",
               "--report", tmp_path / "report.tsv"]
    done = ok("dedup", path, "--embeddings", tmp_path / "rows.npy", "--bad-lines", "skip",
              *outputs)
    assert f"skipped 1 line that is not UTF-8 text (--bad-lines skip): {path}:2" in done.stderr
    assert "kept 3 of 4 lines (1 near-duplicates dropped" in done.stderr
    assert (tmp_path / "kept.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert (tmp_path / "ids").read_text() == "0\n2\n4\n"  # the file's own line numbers
    assert (tmp_path / "report.tsv").read_text() == "3\t0\t1.000000\talpha again\talpha\n"
    np.save(tmp_path / "short.npy", rows[[0, 2, 3, 4]])  # a row a line kept: not one a line
    assert one_error_line(run("dedup", path, "--embeddings", tmp_path / "short.npy",
                              "--bad-lines", "skip", *outputs)) == \
        f"laser: error: {path} has 5 lines but there are 4 embeddings"
    # embedded now: the same ids and report
    ok("dedup", path, "-l", "en", "--bad-lines", "skip", "--threshold", "0.99", *outputs)
    assert (tmp_path / "ids").read_text().splitlines()[:2] == ["0", "2"]


def test_lid_split_and_embed_read_documents_as_the_option_says(tmp_path):
    """A JSON-lines input (documents) is read as the option says too: its record of bad
    bytes skipped or replaced, and named."""
    records = tmp_path / "docs.jsonl"
    records.write_bytes(b'{"text": "Le livre est sur la table."}\n{"text": "Caf\xe9 noir."}\n'
                        b'{"text": "Merci beaucoup."}\n')
    named = f"{records}:2 (invalid UTF-8 at byte 14)"
    assert one_error_line(run("lid", records)).endswith(
        f"{records}:2: invalid UTF-8 at byte 14 (--bad-lines skip drops such lines or replace "
        "decodes them with U+FFFD)")
    skipped = ok("lid", records, "--bad-lines", "skip", "-q")
    assert len(skipped.stdout.splitlines()) == 2 and named in skipped.stderr
    split = ok("split", records, "-l", "fr", "--bad-lines", "skip", "-q")
    assert split.stdout == "Le livre est sur la table.\nMerci beaucoup.\n" and named in split.stderr
    out = tmp_path / "docs.npy"
    ok("embed", records, "-l", "fr", "-o", out, "--bad-lines", "replace", "-q")
    assert np.load(out).shape[0] == 3
    assert json.loads((tmp_path / "docs.npy.json").read_text())["bad_lines"] == \
        {"policy": "replace", "count": 1, "named": [named]}
