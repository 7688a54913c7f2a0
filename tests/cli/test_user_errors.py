"""What a new user hits: unwritable outputs, signals, bad API arguments, help pages, defaults,
raw dimensions, text columns, pipes, unknown languages and the end-of-run summary."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import numpy as np
import pytest

from laser import Encoder, LaserError
from laser.cli import main

from conftest import PARITY, PARITY_MODEL, run_laser as run, one_error_line

MODEL = ["--model", str(PARITY_MODEL)]
FRENCH = PARITY / "inputs" / "batching_fr.txt"


@pytest.fixture
def unwritable(tmp_path) -> Path:
    """A directory no file can be created in: permission bits stop users; root is stopped only
    by a file system that refuses new files, such as sysfs."""
    if os.geteuid() == 0:
        return Path("/sys")
    directory = tmp_path / "read-only"
    directory.mkdir()
    directory.chmod(0o555)
    return directory


@pytest.mark.parametrize("command", [
    ["embed", FRENCH, "-l", "fr", "-o", "{out}"],
    ["preprocess", FRENCH, "-l", "fr", "-o", "{out}"],
    ["knn", "build", FRENCH, "--lang", "fr", "-o", "{out}"],
    ["mine", FRENCH, FRENCH, "--src-lang", "fr", "--trg-lang", "fr", "-o", "{out}"],
    ["score", FRENCH, FRENCH, "--src-lang", "fr", "--trg-lang", "fr", "-o", "{out}"],
])
def test_unwritable_output_is_refused_before_any_work(unwritable, command):
    out = unwritable / "out.file"
    # A model that does not exist: the output must be refused before it is even looked for.
    args = [str(a).replace("{out}", str(out)) for a in command] + ["--model", "/no/such/model"]
    line = one_error_line(run(*args))
    assert line.startswith(f"laser: error: {out}: cannot write in {unwritable} (")
    assert not out.exists()


def _start_embedding(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """`laser embed` of a long file in a child process, returned once its temp output exists."""
    source = tmp_path / "long.txt"
    source.write_text(FRENCH.read_text(encoding="utf-8") * 60, encoding="utf-8")
    out = tmp_path / "out.npy"
    # A child of a background job inherits an ignored SIGINT; a user's terminal gives the default.
    child = subprocess.Popen([sys.executable, "-m", "laser", "embed", str(source), "-o", str(out),
                              "-l", "fr", "-q", *MODEL], stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".out.npy.*.tmp")):
        assert child.poll() is None, child.stderr.read()
        assert time.monotonic() < deadline, "no temp output appeared"
        time.sleep(0.05)
    return child, out


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signals_leave_no_temp_file_and_no_output(tmp_path, signum, code):
    child, out = _start_embedding(tmp_path)
    child.send_signal(signum)
    assert child.wait(timeout=180) == code
    assert not out.exists() and not out.with_name("out.npy.json").exists()
    assert [path.name for path in tmp_path.iterdir()] == ["long.txt"]


@pytest.fixture(scope="module")
def encoder():
    return Encoder.load(str(PARITY_MODEL))


@pytest.mark.parametrize("sentences, lang, message", [
    (["Bonjour."], None, "lang must be a language code such as 'en' or 'deu', not None"),
    (["Bonjour."], "", "lang must be a language code"),
    ([1, 2], "fr", "sentence 0 is a int, not a string"),
    (["ok", b"bytes"], "fr", "sentence 1 is a bytes, not a string"),
    (42, "fr", "sentences must be a string or a list of strings, not int"),
    (["two\nlines"], "fr", "sentence 0 contains a line break"),
])
def test_encode_refuses_bad_arguments_clearly(encoder, sentences, lang, message):
    with pytest.raises(LaserError, match=re.escape(message)):
        encoder.encode(sentences, lang=lang)


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    """Every command and group under `group`, with its path of names."""
    for name in group.list_commands(None):
        command = group.get_command(None, name)
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))


def _options(command: click.Command) -> set[str]:
    return {"--help", "-h"} | {name for param in command.params if isinstance(param, click.Option)
                               for name in param.opts + param.secondary_opts}


@pytest.mark.parametrize("path, command", list(_commands(main)), ids=lambda p: " ".join(p)
                         if isinstance(p, tuple) else "")
def test_every_command_help_shows_working_examples(path, command):
    """Commands and groups show examples that name them (a group's, one of its commands), with
    options the command has."""
    result = run(*path, "--help")
    assert result.exit_code == 0
    examples = result.output.split("Examples:\n", 1)[1].splitlines()
    assert 1 <= len(examples) <= 3
    for example in examples:
        words = example.split()
        words = words[words.index("laser") + 1:]
        words = words[:words.index("|")] if "|" in words else words
        assert tuple(words[:len(path)]) == path, example
        target, rest = command, words[len(path):]
        if isinstance(command, click.Group):
            target, rest = command.get_command(None, rest[0]), rest[1:]
            assert target is not None and not isinstance(target, click.Group), example
        unknown = [word for word in rest if re.match(r"-+[a-z]", word)
                   and word.split("=")[0] not in _options(target)]
        assert not unknown, example


@pytest.mark.parametrize("args", [["embd"], ["mien"], ["clasify"], ["knn", "serch"]])
def test_a_mistyped_command_gets_a_suggestion(args):
    """In a fresh interpreter, where no command's module is loaded yet."""
    done = subprocess.run([sys.executable, "-m", "laser", *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    close = {"embd": "embed", "mien": "mine", "clasify": "classify", "serch": "search"}[args[-1]]
    assert done.stderr.splitlines()[-1] == (f"Error: No such command {args[-1]!r}. "
                                            f"Did you mean {close!r}?")


def test_mine_mines_by_default(tmp_path):
    source = PARITY / "inputs" / "en.txt"
    embeddings = PARITY / "expected" / "en.npy"
    common = [source, source, "--src-embeddings", embeddings, "--trg-embeddings", embeddings]
    assert run("mine", *common, "-o", tmp_path / "default.tsv").exit_code == 0
    assert run("mine", *common, "--mode", "mine", "-o", tmp_path / "mine.tsv").exit_code == 0
    mined = (tmp_path / "default.tsv").read_text(encoding="utf-8")
    assert mined == (tmp_path / "mine.tsv").read_text(encoding="utf-8") and mined


def test_raw_dimension_comes_from_the_sidecar(tmp_path):
    raw = tmp_path / "fr.raw"
    assert run("embed", FRENCH, "-o", raw, "-l", "fr", "--format", "raw", "--fp16", *MODEL,
               "-q").exit_code == 0
    result = run("knn", "build", raw, "-o", tmp_path / "fr.index")
    assert result.exit_code == 0, result.output
    assert "indexed 400 x 80 vectors" in result.stderr
    (tmp_path / "fr.raw.json").unlink()
    line = one_error_line(run("knn", "build", raw, "-o", tmp_path / "again.index"))
    assert "fr.raw: raw embeddings without a sidecar (fr.raw.json): pass their dimension with --dim" \
        in line


def test_knn_search_of_sentences_needs_no_text_options(tmp_path):
    targets, queries = PARITY / "inputs" / "en.txt", PARITY / "inputs" / "fr.txt"
    for built_from in ("embeddings", "text"):
        index = tmp_path / f"{built_from}.index"
        source = ([PARITY / "expected" / "en.npy"] if built_from == "embeddings"
                  else [targets, "--lang", "en"])
        assert run("knn", "build", *source, "-o", index, *MODEL, "-q").exit_code == 0
        out = tmp_path / f"{built_from}.tsv"
        result = run("knn", "search", index, queries, "--lang", "fr", "-k", "1", "-o", out,
                     *MODEL, "-q")
        assert result.exit_code == 0, result.output
        rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
        assert len(rows) == len(queries.read_text(encoding="utf-8").splitlines())
        assert {len(row) for row in rows} == ({4} if built_from == "embeddings" else {6})
    english = targets.read_text(encoding="utf-8").splitlines()
    assert all(row[5] == english[int(row[2])] for row in rows)
    line = one_error_line(run("knn", "search", tmp_path / "embeddings.index", queries, "--lang",
                              "fr", "--query-text", queries, *MODEL))
    assert "--query-text needs --target-text: the index was built from embeddings" in line


def test_embed_reads_pipes(tmp_path):
    out = tmp_path / "piped.npy"
    command = (f"{sys.executable} -m laser embed <(cat {FRENCH}) -o {out} -l fr -q "
               f"--model {PARITY_MODEL}")
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(out), np.load(PARITY / "expected" / "batching_fr.npy"),
                               rtol=0, atol=1e-5)


@pytest.mark.parametrize("command", [
    ["embed", "{source}", "-o", "{out}", "-q", *MODEL],
    ["embed", "{source}", "-o", "{out}", "-q"],  # the language would choose the model
    ["preprocess", "{source}", "-o", "{out}", *MODEL],
])
def test_unknown_language_is_an_error_suggesting_close_ones_as_in_python(tmp_path, command):
    source = tmp_path / "in.txt"
    source.write_text("Bonjour.\n", encoding="utf-8")
    out = tmp_path / "out.file"
    args = [str(a).replace("{source}", str(source)).replace("{out}", str(out)) for a in command]
    line = one_error_line(run(*args, "-l", "frnch"))
    message = ("frnch: unknown language (did you mean fra (French)?); `laser models --languages` "
               "lists the supported languages")
    assert line == f"laser: error: {message}"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in.txt"]
    with pytest.raises(LaserError) as from_load:
        Encoder.load(lang="frnch")
    with pytest.raises(LaserError) as from_encode:
        Encoder.load(str(PARITY_MODEL)).encode(["Bonjour."], lang="frnch")
    assert str(from_load.value) == str(from_encode.value) == message


def test_embed_ends_with_a_summary_unless_quiet(tmp_path):
    result = run("embed", FRENCH, "-o", tmp_path / "fr.npy", "-l", "fr", *MODEL)
    summary = result.stderr.splitlines()[-1]
    match = re.fullmatch(rf"wrote 400 x 80 float32 embeddings to {re.escape(str(tmp_path))}"
                         r"/fr.npy in (\d+\.\d s|[\d.]+ ms) \(([\d,]+) sentences/s\) with the "
                         r"model in " + re.escape(str(PARITY_MODEL)), summary)
    assert match and match.group(1) != "0.0 s", summary
    quiet = run("embed", FRENCH, "-o", tmp_path / "q.npy", "-l", "fr", "-q", *MODEL)
    assert quiet.exit_code == 0 and quiet.stderr == ""


@pytest.mark.parametrize("seconds, text", [
    (0.0, "0 ms"), (0.0004123, "0.412 ms"), (0.03, "30 ms"), (0.9994, "999 ms"),
    (1.0, "1.0 s"), (12.34, "12.3 s"), (3600.0, "3600.0 s"),
])
def test_durations_keep_their_precision_under_a_second(seconds, text):
    from laser.pipeline import duration_text
    assert duration_text(seconds) == text
