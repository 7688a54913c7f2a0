"""What `laser mine` says on stderr: progress by default (plain lines off a terminal, a bar on
one), a summary, one line on a resumed run of what was already done, nothing with -q; and after
an error or Ctrl-C, one line saying where the finished work was kept and how big it is."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.progress import PlainProgress, clock

from test_progress import run_with_stderr_on_a_terminal
from test_same_results import CORPUS, embeddings  # noqa: F401


def _mine(folder, *options, src=CORPUS / "src.txt"):
    """`laser mine` of the corpus with its embeddings (which have no sidecars: the warning that
    nothing checks their space is left out of `stderr`)."""
    result = CliRunner().invoke(main, [
        "mine", str(src), str(CORPUS / "trg.txt"), "--src-embeddings", str(folder / "src.npy"),
        "--trg-embeddings", str(folder / "trg.npy"), "--shard-lines", "256",
        "-o", str(folder / "out.tsv"), *options])
    result.said = [line for line in result.stderr.splitlines()
                   if not line.startswith("laser: warning: no sidecar records")]
    return result


@pytest.fixture
def folder(tmp_path, embeddings):  # noqa: F811
    for side in ("src", "trg"):
        (tmp_path / f"{side}.npy").write_bytes((embeddings / f"{side}.npy").read_bytes())
    return tmp_path


def test_progress_and_a_summary_by_default_nothing_with_quiet(folder):
    result = _mine(folder)
    assert result.exit_code == 0, result.output
    lines = result.said
    # 600 and 700 lines in shards of 256: 3 + 3 query shards, both directions
    assert "laser: mine knn: 3/3 shards, " in "\n".join(lines)
    assert any(re.fullmatch(r"laser: mine margins: 6/6 shards, [0-9.e+]+ shards/s, done in "
                            r"\d+:\d\d", line) for line in lines), lines
    assert lines[-2:-1] == [f"{CORPUS / 'src.txt'}: 600 lines, 600 sentences searched; "
                            f"{CORPUS / 'trg.txt'}: 700 lines, 700 sentences searched"]
    assert re.fullmatch(rf"wrote \d+ lines to {re.escape(str(folder / 'out.tsv'))} in .*",
                        lines[-1])
    quiet = _mine(folder, "-q")
    assert quiet.exit_code == 0 and quiet.said == []


def test_a_terminal_sees_a_bar_and_the_summary(folder):
    args = ["mine", str(CORPUS / "src.txt"), str(CORPUS / "trg.txt"), "--src-embeddings",
            str(folder / "src.npy"), "--trg-embeddings", str(folder / "trg.npy"),
            "--shard-lines", "256", "-o", str(folder / "out.tsv")]
    _, terminal = run_with_stderr_on_a_terminal(*args)
    assert "mine margins:" in terminal and "/6 [" in terminal  # tqdm's bar, not plain lines
    assert "shards, " not in terminal
    assert "wrote " in terminal and "600 sentences searched" in terminal


def test_a_resumed_run_says_what_was_already_done(folder):
    work = folder / "work"
    assert _mine(folder, "--work-dir", work).exit_code == 0
    (work / "margins" / "fwd-000001.scores.npy").unlink()
    again = _mine(folder, "--work-dir", work)
    assert again.exit_code == 0, again.output
    lines = again.said
    assert lines[0] == (f"laser: mine: resuming in {work}: already done: src-split, trg-split, "
                        "knn, bwd, margins (5 of 6 tasks)")
    # margins' one shard was a moment (no line), and the runs after it were kept
    assert lines[1].startswith(f"{CORPUS / 'src.txt'}: 600 lines") and len(lines) == 3
    done = _mine(folder, "--work-dir", work)
    assert done.said[0] == (f"laser: mine: resuming in {work}: already done: "
                                           "src-split, trg-split, knn, bwd, margins, runs, "
                                           "retrieve")
    assert "resuming" not in _mine(folder, "--work-dir", folder / "fresh").stderr
    assert _mine(folder, "--work-dir", work, "-q").said == []


@pytest.mark.slow
def test_on_ray_the_progress_and_the_already_done_line_are_the_same(folder, ray_runtime):
    """--ray on a real local runtime: the driver counts the shard tasks as they come back from
    the workers, and says what a resumed run found done, as one process does."""
    work = folder / "work"
    first = _mine(folder, "--work-dir", work, "--ray", "local")
    assert first.exit_code == 0, first.output
    assert "laser: mine knn: 3/3 shards, " in "\n".join(first.said)
    assert any(re.fullmatch(r"laser: mine margins: 6/6 shards, [0-9.e+]+ shards/s, done in "
                            r"\d+:\d\d", line) for line in first.said), first.said
    assert "resuming" not in first.stderr
    assert first.said[-2].startswith(f"{CORPUS / 'src.txt'}: 600 lines, 600 sentences searched")
    (work / "margins" / "fwd-000001.scores.npy").unlink()
    again = _mine(folder, "--work-dir", work, "--ray", "local")
    assert again.exit_code == 0, again.output
    assert again.said[0] == (f"laser: mine: resuming in {work}: already done: src-split, "
                             "trg-split, knn, bwd, margins (5 of 6 tasks)")
    assert len(again.said) == 3 and again.said[-1].startswith("wrote ")
    done = _mine(folder, "--work-dir", work, "--ray", "local")
    assert done.said[0] == (f"laser: mine: resuming in {work}: already done: src-split, "
                            "trg-split, knn, bwd, margins, runs, retrieve")
    assert _mine(folder, "--work-dir", work, "--ray", "local", "-q").said == []
    assert (folder / "out.tsv").read_bytes() == _one_process(folder)


def _one_process(folder) -> bytes:
    """The pairs of the same command in this process, on one thread as a one-core worker."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(1):
        assert _mine(folder, "--work-dir", folder / "alone", "-q").exit_code == 0
    return (folder / "out.tsv").read_bytes()


def test_an_error_after_finished_work_says_where_it_was_kept(folder, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes((CORPUS / "src.txt").read_bytes() + b"caf\xe9\n")
    hidden = folder / ".out.tsv.shards"
    # the source side is split first: its error leaves nothing finished behind
    failed = _mine(folder, src=bad)
    assert failed.exit_code == 1
    assert failed.said == [f"laser: error: {bad}:601: invalid UTF-8 at byte 4 (--bad-lines skip "
                           "drops such lines or replace decodes them with U+FFFD)"]
    assert not hidden.exists()
    # now the sides split; trg's rows, too few for its lines, are found once it is split
    bad.write_bytes((CORPUS / "src.txt").read_bytes())
    np.save(folder / "trg.npy", np.load(folder / "trg.npy")[:5])
    failed = _mine(folder, src=bad)
    assert failed.exit_code == 1
    *progress, kept, error = failed.said
    assert [line.split(":")[1] for line in progress] == [" mine src-split", " mine trg-split"]
    size = sum(path.stat().st_size for path in hidden.rglob("*") if path.is_file())
    assert re.fullmatch(rf"laser: kept the finished work in {re.escape(str(hidden))} "
                        r"\(\d+\.\d KiB\): the same command resumes from it; "
                        rf"rm -r {re.escape(str(hidden))} removes it", kept)
    assert f"({size / 1024:.1f} KiB)" in kept
    assert error.startswith("laser: error: ")


@pytest.mark.slow
def test_ctrl_c_says_where_the_finished_work_was_kept(tmp_path):
    """A real SIGINT to a real run, once a stage has finished."""
    lines = [f"Phrase numéro {i} de la longue liste." for i in range(1500)]
    for name in ("fr.txt", "en.txt"):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    # A child of a background job inherits an ignored SIGINT; a user's terminal gives the default.
    child = subprocess.Popen(
        [sys.executable, "-m", "laser", "mine", "fr.txt", "en.txt", "--src-lang", "fr",
         "--trg-lang", "en", "--shard-lines", "100", "-o", "out.tsv"], cwd=tmp_path,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    said = []
    for line in child.stderr:
        said.append(line.rstrip("\n"))
        if line.startswith("laser: mine src-embed: "):  # the first side is embedded
            child.send_signal(signal.SIGINT)
            break
    said += child.stderr.read().splitlines()
    assert child.wait(timeout=120) == 130, said
    assert said[-1] == "laser: interrupted"
    assert re.fullmatch(r"laser: kept the finished work in \.out\.tsv\.shards \(\d+\.\d [KM]iB\): "
                        r"the same command resumes from it; rm -r \.out\.tsv\.shards removes it",
                        said[-2]), said
    assert not (tmp_path / "out.tsv").exists()
    resumed = subprocess.run(
        [sys.executable, "-m", "laser", "mine", "fr.txt", "en.txt", "--src-lang", "fr",
         "--trg-lang", "en", "--shard-lines", "100", "-o", "out.tsv"], cwd=tmp_path,
        capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.splitlines()[0].startswith(
        "laser: mine: resuming in .out.tsv.shards: already done: src-split, trg-split")
    assert not (tmp_path / ".out.tsv.shards").exists()


def test_plain_progress_says_done_of_all_rate_and_time_left(capsys):
    bar = PlainProgress("mine knn", 10, "shard", every=1e9)
    assert bar.line(4.0) == "laser: mine knn: 0/10 shards, 0 shards/s, time left unknown"
    bar.done = 2
    assert bar.line(4.0) == "laser: mine knn: 2/10 shards, 0.5 shards/s, 0:16 left"
    bar.update(7)
    assert capsys.readouterr().err == ""  # not yet ten, not yet 1e9 s since the last line
    bar.update(1)
    assert capsys.readouterr().err.startswith("laser: mine knn: 10/10 shards, ")
    one = PlainProgress("mine retrieve", 1, "shard", every=1e9)
    one.update()
    assert capsys.readouterr().err == ""  # one task of a moment: no line
    assert [clock(s) for s in (7, 750, 3723)] == ["0:07", "12:30", "1:02:03"]
