"""tasks/lid_extra_text.py's Debian messages, read from real .deb files built here (dpkg-deb):
which translated messages become language-ID lines, and under which label."""
from __future__ import annotations

import importlib
import shutil
import sys

import pytest

from conftest import ROOT
from debian_packages import HEADER, build_deb

pytestmark = pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="needs Debian's dpkg-deb")

CATALOGUES = {
    "de": {"": HEADER, "Save file": "Datei speichern", "Print": "Drucken",
           "Copy %s here": "%s hierher kopieren", "Linux": "Linux",
           "<b>Bold</b>": "<b>Fett</b>", "Shared name": "Gemeinsam"},
    "sk": {"": HEADER, "Save file": "Uložiť súbor", "Shared name": "Gemeinsam"},
    "sr@latin": {"": HEADER, "Save file": "Sačuvaj datoteku"},
    "zh_CN": {"": HEADER, "Save file": "保存文件"},
    "zh_TW": {"": HEADER, "Save file": "儲存檔案"},
    "en_GB": {"": HEADER, "Color": "Colour"},
}


@pytest.fixture(scope="module")
def task():
    sys.path.insert(0, str(ROOT / "tasks"))
    try:
        yield importlib.import_module("lid_extra_text")
    finally:
        sys.path.remove(str(ROOT / "tasks"))


def test_translated_messages_become_lines_of_their_language(task, tmp_path):
    build_deb(tmp_path, tmp_path / "debs", "demo-l10n", CATALOGUES)
    lines = sorted(task.debian_lines(tmp_path / "debs"))
    assert lines == [("deu", "Datei speichern"), ("deu", "Drucken"), ("slk", "Uložiť súbor"),
                     ("srp", "Sačuvaj datoteku"), ("zho", "保存文件")]
    task.write(tmp_path / "debian.tsv", lines)
    assert (tmp_path / "debian.tsv").read_text(encoding="utf-8").splitlines() == [
        "deu_Latn\tDatei speichern", "deu_Latn\tDrucken", "slk_Latn\tUložiť súbor",
        "srp_Latn\tSačuvaj datoteku", "zho_Hans\t保存文件"]


@pytest.mark.parametrize("locale, language", [
    ("pt_BR", "por"), ("sr@latin", "srp"), ("nb", "nob"), ("ast", "ast"), ("fa", "pes"),
    ("zh_CN", "zho"), ("zh_TW", None), ("zh_HK", None), ("en_GB", None), ("en", None)])
def test_a_locale_is_read_as_the_models_language(task, locale, language):
    assert task.debian_language(locale) == language
