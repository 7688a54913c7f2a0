"""tasks/lid_extra_text.py's Debian messages, read from real .deb files built here (dpkg-deb):
which translated messages become language-ID lines, and under which label."""
from __future__ import annotations

import importlib
import shutil
import sys

import pytest

from conftest import ROOT
from laser.errors import LaserError
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
    """Each translation under its language and the English message it translates under
    English; not a message left as its English (Linux), nor one with placeholders or markup,
    nor one that two languages write alike (Gemeinsam), nor en_GB's or zh_TW's."""
    build_deb(tmp_path, tmp_path / "debs", "demo-l10n", CATALOGUES)
    lines = sorted(task.debian_lines(sorted((tmp_path / "debs").glob("*.deb"))))
    assert lines == [("deu", "Datei speichern"), ("deu", "Drucken"), ("eng", "Print"),
                     ("eng", "Save file"), ("eng", "Shared name"), ("slk", "Uložiť súbor"),
                     ("srp", "Sačuvaj datoteku"), ("zho", "保存文件")]
    task.write(tmp_path / "debian.tsv", lines)
    assert (tmp_path / "debian.tsv").read_text(encoding="utf-8").splitlines() == [
        "deu_Latn\tDatei speichern", "deu_Latn\tDrucken", "eng_Latn\tPrint",
        "eng_Latn\tSave file", "eng_Latn\tShared name", "slk_Latn\tUložiť súbor",
        "srp_Latn\tSačuvaj datoteku", "zho_Hans\t保存文件"]


@pytest.mark.parametrize("locale, language", [
    ("pt_BR", "por"), ("sr@latin", "srp"), ("nb", "nob"), ("ast", "ast"), ("fa", "pes"),
    ("zh_CN", "zho"), ("zh_TW", None), ("zh_HK", None), ("en_GB", None), ("en", None)])
def test_a_locale_is_read_as_the_models_language(task, locale, language):
    assert task.debian_language(locale) == language


def test_the_pinned_packages_are_read_from_the_debs_folder(task, tmp_path):
    """A package list's pinned .deb is found in the --debs folder (apt-get only downloads what
    is missing there); a line that is not name=version is an error naming the list's line."""
    build_deb(tmp_path, tmp_path / "debs", "demo-l10n", CATALOGUES)
    pins = tmp_path / "pins.txt"
    pins.write_text("# pinned\ndemo-l10n=1.0\n", encoding="utf-8")
    found = task.pinned_debs([pins, pins], tmp_path / "debs")
    assert found == [tmp_path / "debs/demo-l10n_1.0_all.deb"]
    assert ("slk", "Uložiť súbor") in task.debian_lines(found)
    pins.write_text("demo-l10n\n", encoding="utf-8")
    with pytest.raises(LaserError, match="pins.txt:1: expected name=version"):
        task.pinned_debs([pins], tmp_path / "debs")
