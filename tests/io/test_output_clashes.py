"""Two outputs of one command that would write the same file or stream (the same option twice
as '-', a link, a relative path, standard output redirected into the other file, an output and
the sidecar of another) are refused before any work, in one line naming both options."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import PARITY, PARITY_MODEL, ROOT, laser_ok, one_error_line, run_laser

ENGLISH = PARITY / "inputs" / "en.txt"
ENGLISH_NPY = PARITY / "expected" / "en.npy"
MODEL = ("--model", PARITY_MODEL)


def embed_auto(output, lang_out):
    return run_laser("embed", ENGLISH, "--lang", "auto", "-q", *MODEL, "-o", output,
                     "--lang-out", lang_out)


def test_both_outputs_to_standard_output_are_refused():
    line = one_error_line(embed_auto("-", "-"))
    assert line == ("laser: error: --output - (standard output) and --lang-out - (standard "
                    "output) would write the same stream; give each output its own path")


def test_standard_output_redirected_into_the_other_output_is_refused(tmp_path):
    """The issue's `laser embed mixed.txt --lang auto -o - --lang-out - > both.out`, with the
    second output named as the file standard output goes to: a real process, a real redirect."""
    both = tmp_path / "both.out"
    with open(both, "wb") as stdout:
        result = subprocess.run([sys.executable, "-m", "laser", "embed", str(ENGLISH), "--lang",
                                 "auto", "-q", *map(str, MODEL), "-o", "-", "--lang-out",
                                 str(both)], stdout=stdout, stderr=subprocess.PIPE, text=True,
                                cwd=ROOT, timeout=300)
    assert result.returncode == 1
    assert result.stderr == (f"laser: error: --output - (standard output) and --lang-out {both} "
                             "would write the same file; give each output its own path\n")
    assert both.read_bytes() == b""


@pytest.mark.parametrize("name", ["symlink", "relative", "hard-link"])
def test_two_names_of_one_file_are_refused(tmp_path, name):
    output = tmp_path / "out.npy"
    (tmp_path / "sub").mkdir()
    if name == "symlink":
        output.write_bytes(b"old")
        other = tmp_path / "link.txt"
        other.symlink_to(output)
    elif name == "relative":
        other = tmp_path / "sub" / ".." / "out.npy"
    else:
        output.write_bytes(b"old")
        other = tmp_path / "sub" / "hard.npy"
        os.link(output, other)
    line = one_error_line(embed_auto(output, other))
    assert line == (f"laser: error: --output {output} and --lang-out {other} would write the "
                    "same file; give each output its own path")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["sub"] + ["link.txt"] * (name == "symlink") + ["out.npy"] * (name != "relative"))


def test_an_output_on_another_outputs_sidecar_is_refused(tmp_path):
    output = tmp_path / "out.npy"
    line = one_error_line(embed_auto(output, f"{output}.json"))
    assert line == (f"laser: error: --output's sidecar {output}.json and --lang-out "
                    f"{output}.json would write the same file; give each output its own path")
    laser_ok("embed", ENGLISH, "--lang", "auto", "-q", *MODEL, "-o", output, "--lang-out",
             f"{output}.json", "--no-provenance")


def test_dev_null_takes_several_outputs(tmp_path):
    laser_ok("embed", ENGLISH, "--lang", "auto", "-q", *MODEL, "-o", os.devnull, "--lang-out",
             os.devnull)


@pytest.mark.parametrize("command, first, second", [
    (lambda out, other: ("dedup", ENGLISH, "--embeddings", ENGLISH_NPY, "-o", out,
                         "--kept-ids", other), "--output", "--kept-ids"),
    (lambda out, other: ("dedup", ENGLISH, "--embeddings", ENGLISH_NPY, "-o", out,
                         "--report", other), "--output", "--report"),
    (lambda out, other: ("score", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY,
                         "--trg-embeddings", ENGLISH_NPY, "-o", out, "--histogram", other),
     "--output", "--histogram"),
    (lambda out, other: ("score", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY,
                         "--trg-embeddings", ENGLISH_NPY, "-o", "-", "--histogram", out,
                         "--png", other), "--histogram", "--png"),
    (lambda out, other: ("embed", ENGLISH, "--lang", "en", *MODEL, "--split-sentences", "-o",
                         out, "--sentences-out", other), "--output", "--sentences-out"),
    (lambda out, other: ("knn", "build", ENGLISH, "--lang", "en", *MODEL, "--split-sentences",
                         "-o", out, "--sentences-out", other), "--output", "--sentences-out"),
], ids=["dedup-kept-ids", "dedup-report", "score-histogram", "score-png", "embed-sentences-out",
        "knn-build-sentences-out"])
def test_every_command_of_several_outputs_refuses_two_in_one_file(tmp_path, command, first,
                                                                  second):
    output = tmp_path / "out.txt"
    line = one_error_line(run_laser(*command(output, f"{tmp_path}/./out.txt")))
    assert line == (f"laser: error: {first} {output} and {second} {tmp_path}/./out.txt would "
                    "write the same file; give each output its own path")
    assert list(tmp_path.iterdir()) == []


def test_bucc_pairs_on_standard_output_would_mix_with_the_scores(tmp_path):
    line = one_error_line(run_laser("eval", "bucc", tmp_path, "--pair", "de-en", "--extracted",
                                    "-"))
    assert line == ("laser: error: the scores - (standard output) and --extracted - (standard "
                    "output) would write the same stream; give each output its own path")
