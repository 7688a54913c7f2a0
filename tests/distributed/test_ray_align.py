"""`laser align --ray` on a real local Ray runtime (2 CPUs): the pairs of two folders aligned by
Ray tasks give the bytes of one process (BLAS on one thread there too, as in a one-core
worker), and a run that stops at a bad pair resumes on Ray with the pairs it lacks."""
from __future__ import annotations

import pytest
from threadpoolctl import threadpool_limits

from conftest import laser_ok, one_error_line, run_laser

pytestmark = pytest.mark.slow

LANGS = ("--src-lang", "de", "--trg-lang", "en")
DOCUMENTS = {
    "a.txt": (["Tom liebt Kinder.", "Ich bin sehr entspannt. Sag nicht so was!",
               "Ich liebe Maria."],
              ["Tom loves children.", "I'm very relaxed.", "Don't say such things.",
               "I love Mary."]),
    "b.txt": (["Wo ist der Bahnhof?", "Es regnet heute.", "Ich bleibe zu Hause."],
              ["Where is the station?", "It is raining today."]),
    "c.txt": (["Das Buch liegt auf dem Tisch."], ["The book is on the table.", "Thanks."]),
}


def folders(tmp_path):
    for side, column in (("de", 0), ("en", 1)):
        (tmp_path / side).mkdir()
        for name, sides in DOCUMENTS.items():
            (tmp_path / side / name).write_text("".join(f"{line}\n" for line in sides[column]),
                                                encoding="utf-8")
    return str(tmp_path / "de"), str(tmp_path / "en")


def outputs(folder) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in DOCUMENTS}


def test_pairs_on_ray_equal_one_process(ray_runtime, tmp_path):
    de, en = folders(tmp_path)
    with threadpool_limits(1):
        laser_ok("align", de, en, *LANGS, "-o", str(tmp_path / "alone"), "--format", "jsonl")
    result = laser_ok("align", de, en, *LANGS, "-o", str(tmp_path / "ray"), "--format", "jsonl",
                      "--ray", "local")
    assert "aligned 3 document pairs (3 now, 0 reused" in result.stderr
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "alone")


def test_a_run_on_ray_resumes(ray_runtime, tmp_path):
    de, en = folders(tmp_path)
    broken = tmp_path / "de" / "c.txt"
    broken.write_bytes(b"Das Buch\x00liegt.\n")
    command = ("align", de, en, *LANGS, "-o", str(tmp_path / "out"), "--ray", "local",
               "--work-dir", str(tmp_path / "work"))
    failed = run_laser(*command)
    assert one_error_line(failed) == \
        f"laser: error: {broken}:1: contains a NUL byte; is this a text file?"
    broken.write_text("".join(f"{line}\n" for line in DOCUMENTS["c.txt"][0]), encoding="utf-8")
    resumed = laser_ok(*command)
    # the other pairs may or may not have finished on their workers before the run stopped:
    # those that did are reused, the bad one is aligned now
    now = int(resumed.stderr.split("(")[1].split(" now")[0])
    assert 1 <= now <= 3 and f"({now} now, {3 - now} reused" in resumed.stderr
    with threadpool_limits(1):
        laser_ok("align", de, en, *LANGS, "-o", str(tmp_path / "alone"))
    assert outputs(tmp_path / "out") == outputs(tmp_path / "alone")
