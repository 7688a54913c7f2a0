"""`laser align` over many document pairs: a --pairs list and two folders give, pair for pair,
the bytes of `laser align SRC TRG` run on each pair alone; an interrupted run resumes from its
work directory, aligning only the pairs it lacks; bad lists are one-line errors."""
from __future__ import annotations

import gzip
import os

import pytest

from conftest import CORPUS_SAMPLE, laser_ok, one_error_line, run_laser

LANGS = ("--src-lang", "de", "--trg-lang", "en")


def corpus_documents(count: int, size: int = 6) -> list[tuple[list[str], list[str]]]:
    """`count` German-English document pairs of `size` consecutive dev pairs each, the second
    sentence of each German document merged into the first and the last English one dropped."""
    with gzip.open(CORPUS_SAMPLE / "dev" / "deu-eng.tsv.gz", "rt", encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t") for _, line in zip(range(count * size), f)]
    documents = []
    for start in range(0, count * size, size):
        german = [de for de, _ in pairs[start:start + size]]
        english = [en for _, en in pairs[start:start + size]]
        documents.append(([f"{german[0]} {german[1]}", *german[2:]], english[:-1]))
    return documents


def write_lines(path, lines) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def folders(tmp_path):
    """de/ and en/ with three same-named documents each, and one more German one alone."""
    for side in ("de", "en"):
        (tmp_path / side / "news").mkdir(parents=True)
    names = ["a.txt", "b.txt", "news/c.txt"]
    for name, (german, english) in zip(names, corpus_documents(3)):
        write_lines(tmp_path / "de" / name, german)
        write_lines(tmp_path / "en" / name, english)
    write_lines(tmp_path / "de" / "alone.txt", ["Nur auf Deutsch."])
    return tmp_path, names


def alone(tmp_path, src: str, trg: str, name: str, *options: str) -> bytes:
    out = tmp_path / f"alone-{name.replace('/', '-')}"
    laser_ok("align", src, trg, *LANGS, "-o", str(out), *options)
    return out.read_bytes()


@pytest.mark.parametrize("fmt", ["tsv", "vecalign"])
def test_a_pairs_list_gives_each_pair_as_alone(folders, fmt):
    tmp_path, names = folders
    (tmp_path / "out").mkdir()
    listed = [(str(tmp_path / "de" / name), str(tmp_path / "en" / name),
               str(tmp_path / "out" / f"{index}.{fmt}")) for index, name in enumerate(names)]
    pairs = write_lines(tmp_path / "pairs.tsv", ["\t".join(row) for row in listed])
    result = laser_ok("align", "--pairs", pairs, *LANGS, "--format", fmt)
    assert "aligned 3 document pairs (3 now, 0 reused from an earlier run)" in result.stderr
    for (src, trg, out), name in zip(listed, names):
        assert open(out, "rb").read() == alone(tmp_path, src, trg, name, "--format", fmt)
    assert not (tmp_path / ".pairs.tsv.work").exists()  # the default work directory is gone


def test_two_folders_give_each_same_named_pair_as_alone(folders):
    tmp_path, names = folders
    result = laser_ok("align", str(tmp_path / "de"), str(tmp_path / "en"), *LANGS,
                      "-o", str(tmp_path / "out"))
    assert f" - 1 file of {tmp_path / 'de'} has no same-named file on the other side " \
        "(skipped): alone.txt" in result.stderr
    assert sorted(path.relative_to(tmp_path / "out").as_posix()
                  for path in (tmp_path / "out").rglob("*") if path.is_file()) == sorted(names)
    for name in names:
        assert (tmp_path / "out" / name).read_bytes() == alone(
            tmp_path, str(tmp_path / "de" / name), str(tmp_path / "en" / name), name)


def test_an_interrupted_run_resumes_with_the_pairs_it_lacks(folders):
    tmp_path, names = folders
    broken = tmp_path / "de" / "b.txt"
    good = broken.read_bytes()
    broken.write_bytes(good + b"caf\xe9\n")  # invalid UTF-8: the run stops at this pair
    work, out = str(tmp_path / "work"), tmp_path / "out"
    command = ("align", str(tmp_path / "de"), str(tmp_path / "en"), *LANGS, "-o", str(out),
               "--work-dir", work)
    failed = run_laser(*command)
    assert failed.exit_code == 1 and "Traceback" not in failed.output
    skipped, error = failed.stderr.splitlines()  # alone.txt skipped, then the one error line
    assert "alone.txt" in skipped
    assert error.startswith(f"laser: error: {broken}:{len(good.splitlines()) + 1}: invalid UTF-8")
    assert (out / "a.txt").exists() and not (out / "b.txt").exists()
    first = os.stat(out / "a.txt").st_mtime_ns
    broken.write_bytes(good)
    resumed = laser_ok(*command)
    assert "aligned 3 document pairs (2 now, 1 reused from an earlier run)" in resumed.stderr
    assert os.stat(out / "a.txt").st_mtime_ns == first  # not aligned again
    for name in names:
        assert (out / name).read_bytes() == alone(
            tmp_path, str(tmp_path / "de" / name), str(tmp_path / "en" / name), name)
    again = laser_ok(*command)
    assert "(0 now, 3 reused from an earlier run)" in again.stderr


def test_a_changed_option_aligns_every_pair_again(folders):
    tmp_path, _ = folders
    command = ("align", str(tmp_path / "de"), str(tmp_path / "en"), *LANGS,
               "-o", str(tmp_path / "out"), "--work-dir", str(tmp_path / "work"))
    laser_ok(*command)
    changed = laser_ok(*command, "--format", "jsonl")
    assert "(3 now, 0 reused from an earlier run)" in changed.stderr


BAD_LISTS = [
    ("two columns", "a.txt\tb.txt\n", "pairs.tsv:1: 2 column(s); expected SRC<TAB>TRG<TAB>OUT"),
    ("one output twice", "de/a.txt\ten/a.txt\to.tsv\nde/b.txt\ten/b.txt\to.tsv\n",
     "pairs.tsv:2: output o.tsv is also the output of line 1"),
    ("output an input", "de/a.txt\ten/a.txt\ten/a.txt\n",
     "pairs.tsv:1: output en/a.txt is one of the pair's inputs"),
    ("no output folder", "de/a.txt\ten/a.txt\tnowhere/o.tsv\n",
     "pairs.tsv:1: nowhere/o.tsv: output directory does not exist"),
    ("empty", "\n", "pairs.tsv: no document pairs"),
]


@pytest.mark.parametrize("name, text, message", BAD_LISTS, ids=[case[0] for case in BAD_LISTS])
def test_a_bad_pairs_list_is_one_line_naming_its_line(folders, monkeypatch, name, text, message):
    tmp_path, _ = folders
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pairs.tsv").write_text(text, encoding="utf-8")
    result = run_laser("align", "--pairs", "pairs.tsv", *LANGS)
    assert result.exit_code == 1
    assert one_error_line(result) == f"laser: error: {message}"


def test_many_documents_options_are_checked(folders):
    tmp_path, _ = folders
    de, en = str(tmp_path / "de" / "a.txt"), str(tmp_path / "en" / "a.txt")
    for args, message in [
            ((de, en, "-o", str(tmp_path / "x.tsv"), "--work-dir", str(tmp_path / "w")),
             "--ray and --work-dir go with --pairs or two folders"),
            ((de, en, "-o", str(tmp_path / "x.tsv"), "--pairs-out", str(tmp_path / "p.tsv")),
             "--pairs-out, --pair-threshold and --pair-cache-mb go with --pair-documents"),
            ((de, "--pair-documents"), "--pair-documents needs SRC and TRG, two collections "
                                       "(folders or files)"),
            ((str(tmp_path / "de"), str(tmp_path / "en"), "-o", str(tmp_path / "o"),
              "--split-sentences"), "--split-sentences goes with one document pair (SRC and "
                                    "TRG files) or --pair-documents"),
            ((str(tmp_path / "de"), str(tmp_path / "en")), "two folders need -o OUT_DIR, the folder of the aligned pairs")]:
        result = run_laser("align", *args, *LANGS)
        assert result.exit_code == 1 and one_error_line(result) == f"laser: error: {message}"


def test_quiet_says_nothing(folders):
    tmp_path, names = folders
    result = laser_ok("align", str(tmp_path / "de"), str(tmp_path / "en"), *LANGS,
                      "-o", str(tmp_path / "out"), "-q")
    assert result.stderr == "" and result.stdout == ""
    assert all((tmp_path / "out" / name).is_file() for name in names)
