"""Every refusal in laser's one line (exit 1), never click's usage error (exit 2): an output that
is a directory, a shell-expanded glob where one input was meant, a `.npy` that is not one."""
from __future__ import annotations

import pytest

from conftest import run_laser as run, one_error_line


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("Bonjour.\nMerci.\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [
    ["embed", "{text}", "-l", "fr", "-o", "{dir}"],
    ["embed", "{text}", "-l", "auto", "-o", "{dir}/x.npy", "--lang-out", "{dir}"],
    ["lid", "{text}", "-o", "{dir}"],
    ["knn", "build", "{text}", "-l", "fr", "-o", "{dir}"],
    ["mine", "{text}", "{text}", "--src-lang", "fr", "--trg-lang", "fr", "-o", "{dir}"],
])
def test_an_output_naming_a_directory_is_laser_s_one_line(tmp_path, text, command):
    args = [arg.format(text=text, dir=tmp_path) for arg in command]
    assert one_error_line(run(*args)) == f"laser: error: {tmp_path}: is a directory; give an " \
                                         "output file name"


def test_an_unquoted_glob_is_told_to_be_quoted(tmp_path):
    fr_dir = tmp_path / "fr_dir"
    fr_dir.mkdir()
    for path in (fr_dir / "a.gz", fr_dir / "b.gz", fr_dir / "c.gz", tmp_path / "en"):
        path.write_bytes(b"")
    fr = [str(fr_dir / name) for name in ("a.gz", "b.gz", "c.gz")]  # the shell's fr_dir/*.gz
    line = one_error_line(run("mine", *fr, tmp_path / "en", "-o", tmp_path / "out.tsv"))
    assert line == (f"laser: error: laser mine takes 2 arguments (SRC TRG), and got 2 more "
                    f"({fr[2]} {tmp_path / 'en'}): did a shell expand an unquoted glob? SRC and "
                    f"TRG are one argument each: quote the glob ('{fr_dir}/*.gz') for laser to "
                    "expand it, or pass a directory or @LIST")
    # said before any option is checked (here the missing --lang), but not over --help
    line = one_error_line(run("embed", *fr, "-o", tmp_path / "x.npy"))
    assert line.startswith("laser: error: laser embed takes 1 argument (INPUT), and got 2 more")
    assert run("mine", *fr, "--help").exit_code == 0
    # no glob in sight: just what it takes
    assert one_error_line(run("models", "extra")) == \
        "laser: error: laser models takes no argument, and got 1 more (extra)"
    assert one_error_line(run("lid", tmp_path / "en", "extra")) == \
        "laser: error: laser lid takes 1 argument (INPUT), and got 1 more (extra)"


@pytest.mark.parametrize("command", [
    ["embed", "-l", "fr", "-o", "x.npy"], ["lid"], ["split", "-l", "fr"], ["prepare", "-l", "fr"],
    ["dedup", "-l", "fr", "-o", "x.txt"], ["knn", "build", "-o", "x.index"], ["preprocess", "-l", "fr"],
    ["mine", "en.txt", "-o", "x.tsv"], ["score", "en.txt", "-o", "x.tsv"],
    ["align", "en.txt", "--src-lang", "fr", "--trg-lang", "en"],
])
def test_every_command_taking_inputs_tells_a_glob_to_be_quoted(tmp_path, command):
    for name in ("p1.txt", "p2.txt", "en.txt"):
        (tmp_path / name).write_text("x\n", encoding="utf-8")
    name, *rest = command
    subcommand = [rest.pop(0)] if name == "knn" else []
    expanded = [str(tmp_path / "p1.txt"), str(tmp_path / "p2.txt")]
    args = [arg if not arg.endswith(("txt", "npy", "index", "tsv")) else str(tmp_path / arg)
            for arg in rest]
    line = one_error_line(run(name, *subcommand, *expanded, *args))
    assert f"quote the glob ('{tmp_path}/*.txt') for laser to expand it" in line, line


def test_a_npy_file_that_is_not_one_says_so(tmp_path):
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"not an array at all")
    line = one_error_line(run("knn", "build", junk, "-o", tmp_path / "x.index"))
    assert line.startswith(f"laser: error: {junk}: not a .npy file (it does not start with a "
                           ".npy header)")
