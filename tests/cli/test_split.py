"""`laser split`: each line's sentences one a line, --with-line numbers, --lang auto, blank
lines, stdin and compressed inputs, an output that appears only when complete, and bad inputs
refused with one line naming file and line."""
import gzip
import subprocess
import sys

from conftest import laser_ok, one_error_line, run_laser

LINES = [
    "Dr. Smith arrived at 5 p.m. today. He left!  Did he?",
    "",
    "我喜欢猫。你呢？",
    "A line without a full stop",
]
SENTENCES = ["Dr. Smith arrived at 5 p.m. today.", "He left!", "Did he?", "我喜欢猫。", "你呢？",
             "A line without a full stop"]


def test_each_line_becomes_its_sentences_and_with_line_numbers_them(tmp_path):
    source = tmp_path / "paragraphs.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    assert laser_ok("split", source, "--lang", "auto", "-q").stdout.splitlines() == SENTENCES
    numbered = laser_ok("split", source, "--lang", "auto", "--with-line", "-q").stdout
    assert numbered.splitlines() == [f"{number}\t{sentence}" for number, sentence in
                                     zip([1, 1, 1, 3, 3, 4], SENTENCES)]


def test_output_file_stdin_and_compressed_input(tmp_path):
    source = tmp_path / "de.txt.gz"
    with gzip.open(source, "wt", encoding="utf-8") as out:
        out.write("Am 3. Oktober kam er, z. B. mit Anna. Dann ging er.\n\n")
    target = tmp_path / "out.txt"
    result = laser_ok("split", source, "--lang", "de", "-o", target)
    assert target.read_text(encoding="utf-8").splitlines() == [
        "Am 3. Oktober kam er, z. B. mit Anna.", "Dann ging er."]
    assert result.stdout == "" and "split 2 lines into 2 sentences" in result.stderr
    piped = laser_ok("split", "-", "--lang", "fr", "-q", input="Il pleut. M. Dupont rit.\n")
    assert piped.stdout == "Il pleut.\nM. Dupont rit.\n"


def test_bad_inputs_are_one_line_errors_and_leave_no_output(tmp_path):
    source = tmp_path / "bad.txt"
    source.write_bytes(b"Fine. Good.\n\xff broken\n")
    target = tmp_path / "out.txt"
    line = one_error_line(run_laser("split", source, "--lang", "en", "-o", target))
    assert f"{source}:2: invalid UTF-8" in line and not target.exists()
    assert "xxq: unknown language" in one_error_line(run_laser("split", source, "--lang", "xxq"))
    assert "missing.txt" in one_error_line(run_laser("split", tmp_path / "missing.txt",
                                                     "--lang", "en"))


def test_the_installed_command_runs_end_to_end(tmp_path):
    source = tmp_path / "th.txt"
    source.write_text("Hello there. How are you?\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "laser", "split", str(source), "--lang", "en",
                           "--with-line"], capture_output=True, text=True, check=True)
    assert done.stdout == "1\tHello there.\n1\tHow are you?\n"


def test_bad_lines_skip_drops_and_replace_decodes_invalid_lines(tmp_path):
    source = tmp_path / "bad.txt"
    source.write_bytes(b"Fine. Good.\n\xff broken. Still.\nLast one.\n")
    skipped = laser_ok("split", source, "--lang", "en", "--bad-lines", "skip")
    assert skipped.stdout.splitlines() == ["Fine.", "Good.", "Last one."]
    assert f"{source}:2" in skipped.stderr
    replaced = laser_ok("split", source, "--lang", "en", "--bad-lines", "replace", "-q")
    assert replaced.stdout.splitlines() == ["Fine.", "Good.", "\ufffd broken.", "Still.",
                                            "Last one."]
    assert "--bad-lines replace" in one_error_line(
        run_laser("split", source, "--lang", "en", "--bad-lines", "skip", "--with-line"))
