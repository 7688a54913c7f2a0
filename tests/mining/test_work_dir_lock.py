"""A work directory is held by the run that uses it (`laser.io.locks`): a second run at once is
refused in one line naming the process that holds it, and removes nothing; a killed holder
never blocks the next run (the kernel frees its lock); the run that holds it removes the temp
files a killed run left in its stages. Real processes: the holder is a child process that
takes the lock with laser's own code and waits."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import CORPUS_SAMPLE, MINING_FIXTURES, ROOT, laser_ok, needs_torch, run_laser

CORPUS = MINING_FIXTURES / "main"
HOLD = ("import sys\nfrom laser.io.locks import hold_work_dir\n"
        "with hold_work_dir(sys.argv[1]):\n    print('held', flush=True)\n    sys.stdin.read()\n")


@pytest.fixture
def holder():
    """Start a process that holds a work directory until it is killed; yields the starter."""
    started = []

    def hold(directory) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-c", HOLD, str(directory)], cwd=ROOT,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        started.append(process)
        assert process.stdout.readline() == "held\n"
        return process
    yield hold
    for process in started:
        process.kill()
        process.wait()


@pytest.fixture
def embeddings(tmp_path):
    from test_same_results import SIDES, sign_embeddings
    for side, count in SIDES.items():
        np.save(tmp_path / f"{side}.npy", sign_embeddings(count, side))
    return tmp_path


def mine(folder, *options):
    return run_laser("mine", CORPUS / "src.txt", CORPUS / "trg.txt", "--src-embeddings",
                     folder / "src.npy", "--trg-embeddings", folder / "trg.npy", "--shard-lines",
                     "256", "-o", folder / "out.tsv", *options)


def assert_in_use(result, directory, process) -> None:
    """The one error line of a run refused a held work directory: the holder's pid and command
    (here `-c DIRECTORY`, as Python gives a `-c` program its argv); the last line, as mine
    warns first that the sign embeddings have no sidecar."""
    assert result.exit_code == 1 and "Traceback" not in result.output
    line = result.stderr.splitlines()[-1]
    assert line.startswith(f"laser: error: {directory}: work directory in use by process "
                           f"{process.pid} (-c ")
    assert line.endswith(f" {directory}); wait for it to end, or give another --work-dir")


def test_a_second_mine_in_a_held_work_dir_is_one_line_and_runs_after_the_holder_is_killed(
        embeddings, holder):
    work = embeddings / "work"
    process = holder(work)
    planted = work / "knn"
    planted.mkdir()
    (planted / ".fwd-000000.ids.npy.0123abcd.tmp").write_bytes(b"another run's")
    assert_in_use(mine(embeddings, "--work-dir", work), work, process)
    assert (planted / ".fwd-000000.ids.npy.0123abcd.tmp").exists()  # not its run's to remove
    assert not (embeddings / "out.tsv").exists()
    process.send_signal(signal.SIGKILL)
    process.wait()
    laser_ok(*mine_args(embeddings, "--work-dir", work))
    assert (embeddings / "out.tsv").exists()


def mine_args(folder, *options):
    return ("mine", CORPUS / "src.txt", CORPUS / "trg.txt", "--src-embeddings",
            folder / "src.npy", "--trg-embeddings", folder / "trg.npy", "--shard-lines", "256",
            "-o", folder / "out.tsv", *options)


def test_the_default_work_dir_is_held_too_and_a_refused_run_leaves_it(embeddings, holder):
    work = embeddings / ".out.tsv.shards"
    process = holder(work)
    assert_in_use(mine(embeddings), work, process)
    assert (work / ".laser.lock").read_text().startswith(f"{process.pid}\t")


def test_a_resumed_run_removes_the_stale_temp_files_of_its_stages(embeddings):
    work = embeddings / "work"
    laser_ok(*mine_args(embeddings, "--work-dir", work))
    expected = (embeddings / "out.tsv").read_bytes()
    stale = [work / "knn" / ".fwd-000001.ids.npy.9f8e7d6c.tmp",
             work / "margins" / ".manifest.json.00ff00ff.tmp",
             work / "src-split" / ".text-000000.txt.a1b2c3d4.tmp"]
    for path in stale:
        path.write_bytes(b"left by a killed run")
    kept = work / "knn" / "notes.tmp"  # not a name laser's temp files have
    kept.write_bytes(b"")
    laser_ok(*mine_args(embeddings, "--work-dir", work, "--threshold", "1.05"))
    assert not any(path.exists() for path in stale)
    assert kept.exists()
    laser_ok(*mine_args(embeddings, "--work-dir", work))
    assert (embeddings / "out.tsv").read_bytes() == expected


def test_after_sigkill_a_resumed_run_leaves_no_temp_file(embeddings):
    """A real run killed mid-way (once its first stage has recorded a task), then resumed."""
    work = embeddings / "work"
    args = [sys.executable, "-m", "laser", *map(str, mine_args(embeddings, "--work-dir", work,
                                                               "--shard-lines", "32"))]
    process = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.DEVNULL)
    manifest = work / "src-split" / "manifest.json"
    try:
        while process.poll() is None and not manifest.exists():
            time.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    subprocess.run(args, cwd=ROOT, check=True, stderr=subprocess.DEVNULL, timeout=600)
    assert not [path for path in work.rglob("*") if path.name.endswith(".tmp")]
    resumed = (embeddings / "out.tsv").read_bytes()
    laser_ok(*mine_args(embeddings, "--work-dir", embeddings / "fresh", "--shard-lines", "32"))
    assert resumed == (embeddings / "out.tsv").read_bytes()


@needs_torch
def test_a_training_run_in_a_held_work_dir_is_refused(tmp_path, holder):
    work = tmp_path / "work"
    process = holder(work)
    result = run_laser("train", CORPUS_SAMPLE, "-o", tmp_path / "model", "--work-dir", work,
                       "--steps", "1")
    assert_in_use(result, work, process)
    assert sorted(path.name for path in work.iterdir()) == [".laser.lock"]
