"""`laser mine --unify` on raw text embeds each distinct sentence once, however often and in
whichever files its line repeats: the embed stage holds one row per sentence, and the pairs are
those of the deduplicated text, and of the same lines embedded one row per line beforehand."""
import gzip
import json

import numpy as np
from click.testing import CliRunner

from laser.cli import main

SIDES = {
    "src": [["Hello world.", "The book is on the table.", "Hello world.", "I have 3 cats."],
            ["Where is the station?", "The book is on the table.", "I have 7 cats.",
             "It is raining today.", "Hello world."]],
    "trg": [["It is raining today.", "Where is the station?", "I have 5 cats."],
            ["It is raining today.", "Hello world.", "The book is on the table.",
             "My brother plays the piano.", "I have 2 cats.", "Hello world."]],
}


def _side(folder, side):
    """A side as a directory of two files, the first gzip-compressed."""
    directory = folder / side
    directory.mkdir()
    first, second = ("\n".join(lines) + "\n" for lines in SIDES[side])
    (directory / "a.txt.gz").write_bytes(gzip.compress(first.encode("utf-8")))
    (directory / "b.txt").write_text(second, encoding="utf-8")
    return directory


def _laser(*args):
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result


def _mine(folder, name, src, trg, *options):
    out = folder / f"{name}.tsv"
    _laser("mine", src, trg, "--shard-lines", "2", "--work-dir", folder / name, "-o", out,
           *options)
    return out.read_bytes()


def _embedded_rows(work, side):
    return sum(len(np.load(path)) for path in (work / f"{side}-embed").glob("embeddings-*.npy"))


def test_each_distinct_line_is_embedded_once_and_mines_as_the_deduplicated_text(tmp_path):
    sides = [_side(tmp_path, side) for side in SIDES]
    languages = ["--src-lang", "en", "--trg-lang", "en"]
    unified = _mine(tmp_path, "unified", *sides, "--unify", *languages)
    deduplicated = []
    for side, lines in SIDES.items():
        distinct = list(dict.fromkeys(line for part in lines for line in part))
        record = json.loads((tmp_path / "unified" / f"{side}-split" / "split.json").read_text())
        assert record["sentences"] == len(distinct) < record["lines"]
        assert _embedded_rows(tmp_path / "unified", side) == len(distinct)
        deduplicated.append(tmp_path / f"{side}.txt")
        deduplicated[-1].write_text("\n".join(distinct) + "\n", encoding="utf-8")
    assert unified.count(b"\n") > 3
    assert unified == _mine(tmp_path, "deduplicated", *deduplicated, *languages)


def test_sentences_embedded_in_shards_mine_as_lines_embedded_beforehand(tmp_path):
    """With --unify-by normalized a sentence's lines differ ("I have 3 cats." and "I have 7
    cats."); the row searched is its last line's, as with embeddings of every line."""
    sides = [_side(tmp_path, side) for side in SIDES]
    unify = ["--unify", "--unify-by", "normalized"]
    embedded = _mine(tmp_path, "embedded", *sides, *unify, "--src-lang", "en", "--trg-lang", "en")
    for side, folder in zip(SIDES, sides):
        _laser("embed", folder, "--lang", "en", "-o", tmp_path / f"{side}.npy")
    given = _mine(tmp_path, "given", *sides, *unify, "--src-embeddings", tmp_path / "src.npy",
                  "--trg-embeddings", tmp_path / "trg.npy")
    assert _embedded_rows(tmp_path / "embedded", "src") == 5
    assert embedded == given and b"I have 3 cats." in embedded
