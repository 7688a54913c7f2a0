"""`laser prepare --ray` on a real local Ray runtime (2 CPUs): the cleaning stage's tasks, a
file each, give the single-process output and counts."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from laser.cli import main

from web_documents import ENGLISH, FRENCH, write_wet

pytestmark = pytest.mark.slow


def test_prepare_on_ray_equals_one_process(ray_runtime, tmp_path):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    pages = list(FRENCH.items()) + list(ENGLISH.items())
    for index in range(4):  # four files, English pages among the French ones
        write_wet(crawl / f"part-{index}.warc.wet.gz", dict(pages[index::4]))
    outputs = {}
    for name, options in (("alone", []), ("ray", ["--ray", "local", "--ray-workers", "2"])):
        result = CliRunner().invoke(main, ["prepare", str(crawl), "--lang", "fr", "--unify",
                                           "--provenance", "-o", str(tmp_path / name), *options])
        assert result.exit_code == 0, result.output
        record = json.loads((tmp_path / f"{name}.json").read_text())
        outputs[name] = ((tmp_path / name).read_bytes(), record["removed"], record["kept"])
    assert outputs["ray"] == outputs["alone"]
    # the English pages are other-language sentences; both sites' menus are boilerplate
    assert outputs["alone"][1]["language"] == 6 and outputs["alone"][1]["boilerplate"] == 6
