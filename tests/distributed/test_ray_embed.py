"""`laser embed --ray` on a real local Ray runtime (2 CPUs): bit-identical to one process, a
killed worker retried, an interrupted run resumed shard by shard, a bad line reported."""
from __future__ import annotations

import gzip
import json
import os
import sys

import pytest
from click.testing import CliRunner

from conftest import CORPUS_SAMPLE, ROOT
from laser.cli import main
from laser.distributed.ray_runner import EmbedWorker, RayOptions, embed_file_on_ray
from laser.distributed.shards import MANIFEST
from laser.distributed.work import EncoderSpec
from laser.errors import LaserError
from laser.models.files import ModelFiles
from laser.pipeline import EmbedOptions, embed_file

pytestmark = pytest.mark.slow

LINES = 50
SHARD_LINES = 16  # 4 shards: 16, 16, 16, 2 lines
MODEL = ROOT / "models" / "default"


@pytest.fixture(scope="module")
def sentences(tmp_path_factory) -> str:
    """The first French sentences of the vendored corpus sample, one a line."""
    with gzip.open(CORPUS_SAMPLE / "dev" / "fra-eng.tsv.gz", "rt", encoding="utf-8") as f:
        lines = [next(f).split("\t")[0] for _ in range(LINES)]
    path = tmp_path_factory.mktemp("input") / "fr.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def single(sentences, tmp_path_factory):
    """The output and sidecar of the ordinary single-process `embed_file`."""
    from laser.encoder import Encoder
    path = tmp_path_factory.mktemp("single") / "fr.npy"
    embed_file(Encoder.load(str(MODEL)), sentences, str(path), EmbedOptions("fr"))
    return path.read_bytes(), _sidecar(path)


def _sidecar(path) -> dict:
    record = json.loads(open(f"{path}.json").read())
    del record["output"]
    return record


def _embed(*args: str):
    return CliRunner().invoke(main, ["embed", *args, "--lang", "fr", "--model", str(MODEL)])


def _spec() -> EncoderSpec:
    return EncoderSpec(ModelFiles.from_dir(MODEL))


def test_shards_on_two_workers_equal_one_process(ray_runtime, sentences, single, tmp_path):
    output = tmp_path / "fr.npy"
    result = _embed(sentences, "-o", str(output), "--ray", "local", "--ray-workers", "2",
                    "--shard-lines", str(SHARD_LINES))
    assert result.exit_code == 0, result.output
    assert "4 shards computed, 0 reused" in result.output
    assert (output.read_bytes(), _sidecar(output)) == single
    assert sorted(os.listdir(tmp_path)) == ["fr.npy", "fr.npy.json"]  # work dir removed


class DyingOnce(EmbedWorker):
    """A worker whose process dies in the middle of its first task on shard 1: the marker file
    it removes before exiting makes the retry succeed."""

    marker = None

    def embed(self, job):
        if job.shard.index == 1 and os.path.exists(self.marker):
            os.unlink(self.marker)
            os._exit(1)
        return super().embed(job)


def test_a_killed_worker_is_retried_and_the_output_is_the_same(ray_runtime, sentences, single,
                                                                tmp_path):
    ray_runtime.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    marker = tmp_path / "die-once"
    marker.touch()
    DyingOnce.marker = str(marker)
    output = tmp_path / "fr.npy"
    report, run = embed_file_on_ray(_spec(), sentences, str(output), EmbedOptions("fr"),
                                    RayOptions(workers=2, shard_lines=SHARD_LINES),
                                    worker_class=DyingOnce)
    assert not marker.exists()  # the worker did die
    assert sorted(run.computed) == [0, 1, 2, 3]
    assert (output.read_bytes(), _sidecar(output)) == single


def test_a_bad_line_stops_the_run_and_the_rerun_computes_only_missing_shards(
        ray_runtime, sentences, single, tmp_path):
    good = open(sentences, "rb").read().split(b"\n")
    broken = good.copy()
    broken[20] = b"caf\xe9"  # line 21, in shard 1
    source = tmp_path / "fr.txt"
    source.write_bytes(b"\n".join(broken))
    output, work = tmp_path / "fr.npy", tmp_path / "work"
    args = (str(source), "-o", str(output), "--ray", "local", "--shard-lines", str(SHARD_LINES),
            "--work-dir", str(work))
    result = _embed(*args)
    assert result.exit_code == 1
    kept, error = result.output.splitlines()
    assert error == (f"laser: error: {source}:21: invalid UTF-8 at byte 4 (--bad-lines replace "
                     "decodes them with U+FFFD)")
    assert kept.startswith(f"laser: kept the finished work in {work} (") and kept.endswith(
        f"): the same command resumes from it; rm -r {work} removes it")
    assert not output.exists()
    # all 4 shards were running on the 2 workers (2 tasks each): the good ones finished
    assert sorted(json.loads((work / MANIFEST).read_text())["done"]) == ["0", "2", "3"]

    source.write_bytes(b"\n".join(good))
    result = _embed(*args)
    assert result.exit_code == 0, result.output
    assert "1 shards computed, 3 reused" in result.output
    # shards after the edited line moved in the file but kept their lines and bytes
    assert (output.read_bytes(), _sidecar(output)) == single
    assert sorted(json.loads((work / MANIFEST).read_text())["done"]) == ["0", "1", "2", "3"]


def test_bad_lines_replace_gives_the_rows_and_the_record_of_one_process(ray_runtime, sentences,
                                                                        tmp_path):
    """--bad-lines replace on Ray: the bytes and the sidecar (its bad_lines record too) of one
    process, and the same warning; a resumed run that reuses every shard reports them again."""
    from laser.encoder import Encoder
    from laser.io.bad_lines import BadLines
    lines = open(sentences, "rb").read().split(b"\n")
    lines[2] = b"caf\xe9"  # shard 0
    lines[40] = b"nul \x00 byte"  # shard 2
    source = tmp_path / "web.txt"
    source.write_bytes(b"\n".join(lines))
    single = tmp_path / "single.npy"
    embed_file(Encoder.load(str(MODEL)), str(source), str(single),
               EmbedOptions("fr", bad_lines=BadLines("replace", "--bad-lines")))
    output, work = tmp_path / "ray.npy", tmp_path / "work"
    args = (str(source), "-o", str(output), "--ray", "local", "--shard-lines", str(SHARD_LINES),
            "--work-dir", str(work), "--bad-lines", "replace")
    warning = (f"laser: warning: replaced bad bytes with U+FFFD in 2 lines that are not UTF-8 "
               f"text (--bad-lines replace): {source}:3 (invalid UTF-8 at byte 4), {source}:41 "
               "(contains a NUL byte; is this a text file?)")
    for computed in ("4 shards computed, 0 reused", "0 shards computed, 4 reused"):
        result = _embed(*args)
        assert result.exit_code == 0, result.output
        assert warning in result.stderr.splitlines() and computed in result.stderr
        assert (output.read_bytes(), _sidecar(output)) == (single.read_bytes(), _sidecar(single))
        assert _sidecar(output)["bad_lines"]["count"] == 2


def test_a_resumed_run_with_other_options_recomputes_everything(ray_runtime, sentences,
                                                                 tmp_path):
    options = RayOptions(workers=1, shard_lines=SHARD_LINES, work_dir=str(tmp_path / "work"))
    output = str(tmp_path / "fr.npy")
    _, first = embed_file_on_ray(_spec(), sentences, output, EmbedOptions("fr"), options)
    _, half = embed_file_on_ray(_spec(), sentences, output, EmbedOptions("fr", fp16=True),
                                options)
    assert (sorted(first.computed), sorted(half.computed), half.reused) == (
        [0, 1, 2, 3], [0, 1, 2, 3], [])


def test_a_manifest_from_an_older_laser_gets_its_model_fields_without_recomputing(
        ray_runtime, sentences, tmp_path):
    """A manifest written before sidecars named the model's space: the rerun asks the workers
    for the model's fields again and reuses every shard."""
    options = RayOptions(workers=1, shard_lines=SHARD_LINES, work_dir=str(tmp_path / "work"))
    output = str(tmp_path / "fr.npy")
    embed_file_on_ray(_spec(), sentences, output, EmbedOptions("fr"), options)
    manifest = tmp_path / "work" / MANIFEST
    record = json.loads(manifest.read_text())
    del record["encoder"]["model_space"], record["encoder"]["model_name"]
    manifest.write_text(json.dumps(record))
    report, rerun = embed_file_on_ray(_spec(), sentences, output, EmbedOptions("fr"), options)
    assert (rerun.computed, sorted(rerun.reused)) == ([], [0, 1, 2, 3])
    assert _sidecar(output)["model_space"] == report.model_space == "laser-default-v2"


def test_ray_options_need_ray(sentences, tmp_path):
    result = _embed(sentences, "-o", str(tmp_path / "x.npy"), "--shard-lines", "5")
    assert result.exit_code == 1
    assert "go with --ray" in result.output
    with pytest.raises(LaserError, match="regular file"):
        embed_file_on_ray(_spec(), "-", str(tmp_path / "x.npy"), EmbedOptions("fr"))


def test_lang_auto_writes_each_shards_languages_in_order(ray_runtime, sentences, tmp_path):
    from laser.encoder import Encoder
    others = ["The cat sleeps on the sofa.", "我们明天早上去北京看朋友。",
              "Η γάτα κοιμάται στον καναπέ.", ""]
    lines = []
    for index, line in enumerate(open(sentences, encoding="utf-8").read().splitlines()[:20]):
        lines += [line, others[index // 5]] if index % 5 == 0 else [line]  # 24 lines, 2 shards
    source = tmp_path / "mixed.txt"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    single, spread = tmp_path / "single.npy", tmp_path / "ray.npy"
    embed_file(Encoder.load(str(MODEL)), str(source), str(single),
               EmbedOptions("auto", lang_out=str(tmp_path / "single.lang")))
    _, run = embed_file_on_ray(_spec(), str(source), str(spread),
                               EmbedOptions("auto", lang_out=str(tmp_path / "ray.lang")),
                               RayOptions(workers=2, shard_lines=SHARD_LINES))
    assert len(run.computed) == 2
    assert (spread.read_bytes(), _sidecar(spread)) == (single.read_bytes(), _sidecar(single))
    languages = (tmp_path / "ray.lang").read_text(encoding="utf-8")
    assert languages == (tmp_path / "single.lang").read_text(encoding="utf-8")
    assert [line.split("\t")[0] for line in languages.splitlines()][:6] == \
        ["fra_Latn", "eng_Latn"] + ["fra_Latn"] * 4


def test_a_read_only_sidecar_is_refused_before_any_shard_is_embedded(sentences, tmp_path):
    output, sidecar = tmp_path / "fr.npy", tmp_path / "fr.npy.json"
    output.write_bytes(b"old")
    sidecar.write_text("{}\n", encoding="utf-8")
    sidecar.chmod(0o444)
    with pytest.raises(LaserError, match=f"^{sidecar}: read-only \\(mode 0444\\), not replaced"):
        embed_file_on_ray(_spec(), sentences, str(output), EmbedOptions("fr"),
                          RayOptions(work_dir=str(tmp_path / "work")))
    assert output.read_bytes() == b"old" and not (tmp_path / "work").exists()


def test_a_held_work_dir_is_refused_and_a_resumed_run_removes_stale_temp_files(
        ray_runtime, sentences, single, tmp_path):
    """Another process holding the work directory (a real one, with laser's lock) refuses the
    run in one line; once it is gone, the run removes the temp files of its shards that a killed
    run left (and nothing else)."""
    import subprocess
    work = tmp_path / "work"
    holder = subprocess.Popen([sys.executable, "-c", "import sys\n"
                               "from laser.io.locks import hold_work_dir\n"
                               "with hold_work_dir(sys.argv[1]):\n"
                               "    print('held', flush=True)\n    sys.stdin.read()\n",
                               str(work)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(LaserError, match=f"^{work}: work directory in use by process "
                                             f"{holder.pid} "):
            embed_file_on_ray(_spec(), sentences, str(tmp_path / "fr.npy"), EmbedOptions("fr"),
                              RayOptions(shard_lines=7, work_dir=str(work)))
    finally:
        holder.kill()
        holder.wait()
    stale = [work / ".shard-000001.npy.0a1b2c3d.tmp", work / ".manifest.json.ffffffff.tmp"]
    other = work / ".notes.txt.0a1b2c3d.tmp"  # not a shard's nor the manifest's
    for path in (*stale, other):
        path.write_bytes(b"left by a killed run")
    embed_file_on_ray(_spec(), sentences, str(tmp_path / "fr.npy"), EmbedOptions("fr"),
                      RayOptions(shard_lines=7, work_dir=str(work)))
    assert (tmp_path / "fr.npy").read_bytes() == single[0]
    assert not any(path.exists() for path in stale) and other.exists()
