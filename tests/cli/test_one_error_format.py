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
    for name in ("a.gz", "b.gz", "en"):
        (tmp_path / name).write_bytes(b"")
    fr = [str(tmp_path / "a.gz"), str(tmp_path / "b.gz")]  # what the shell made of fr/*.gz
    line = one_error_line(run("mine", *fr, tmp_path / "en", "-o", tmp_path / "out.tsv"))
    assert line == (f"laser: error: laser mine takes 2 arguments (SRC TRG), and got 1 more "
                    f"({tmp_path / 'en'}): did a shell expand an unquoted glob? SRC and TRG are "
                    "one argument each: quote the glob ('DIR/*.gz') for laser to expand it, or "
                    "pass a directory or @LIST")
    line = one_error_line(run("knn", "build", *fr, "-o", tmp_path / "x.index"))
    assert "laser knn build takes 1 argument (INPUT), and got 1 more" in line
    assert "each input is one argument: quote the glob" in line
    assert one_error_line(run("models", "extra")) == \
        "laser: error: laser models takes no argument, and got 1 more (extra)"


def test_a_npy_file_that_is_not_one_says_so(tmp_path):
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"not an array at all")
    line = one_error_line(run("knn", "build", junk, "-o", tmp_path / "x.index"))
    assert line.startswith(f"laser: error: {junk}: not a .npy file (it does not start with a "
                           ".npy header)")
