"""`make demo` end to end: it embeds the sample through the CLI and reports neighbours."""
import re

import numpy as np

from laser import demo


def test_demo_embeds_every_language_and_reports_neighbours(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LASER_MODEL", raising=False)
    demo.main()
    out = capsys.readouterr().out
    for lang in ("en", "fr", "de", "es"):
        assert np.load(tmp_path / "demo-output" / f"{lang}.npy").shape[0] == 5
    correct, total = re.search(r"(\d+)/(\d+) nearest neighbours are the translation", out).groups()
    assert int(total) == 35 and int(correct) >= 33  # 35/35 with the shipped model
