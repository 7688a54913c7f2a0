"""tasks/debian_l10n_pairs.py on a real .deb built here (dpkg-deb) around gettext catalogues
written here: which messages become pairs, and the corpus it writes."""
from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from debian_packages import HEADER, build_deb

TASK = ROOT / "tasks" / "debian_l10n_pairs.py"
ISO_CODES = Path("/usr/share/iso-codes/json/iso_639-3.json")

pytestmark = pytest.mark.skipif(not (shutil.which("dpkg-deb") and ISO_CODES.exists()),
                                reason="needs Debian's dpkg-deb and iso-codes")

GERMAN = {
    "": HEADER,
    "Select the layer that the new objects are drawn on.":
        "Wählen Sie die Ebene, auf der die neuen Objekte gezeichnet werden.",
    "menu\x04Save the current document under a new name.":
        "Das aktuelle Dokument unter einem neuen Namen speichern.",
    "One file was removed from the list.\x00%d files were removed from the list.":
        "Eine Datei wurde aus der Liste entfernt.\x00%d Dateien wurden aus der Liste entfernt.",
    "Open the _file that you want to print now.":
        "Öffnen Sie die _Datei, die Sie jetzt drucken wollen.",
    "Copy %s to the folder that you choose here.": "%s in den hier gewählten Ordner kopieren.",
    "Save file": "Datei speichern",
    "The train leaves the station at eight in the morning.":
        "Der Zug verlässt den Bahnhof um acht Uhr morgens.",
    "First line of a longer help text goes here.\nSecond line of that help text goes here.":
        "Erste Zeile eines längeren Hilfetexts steht hier.\nZweite Zeile dieses Hilfetexts steht hier.",
    "Remove every selected item from the current list.":
        "Remove every selected item from the current list.",
}
FRENCH = {"": HEADER, "Select the layer that the new objects are drawn on.":
          "Choisissez le calque sur lequel les nouveaux objets sont dessinés."}
GERMAN_EXTRA = {"": HEADER, "The library opens at nine and closes at six.":
                "Die Bibliothek öffnet um neun und schließt um sechs."}
CORPUS_TRAIN = ["Guten Morgen!\tGood morning!", "Ich habe Hunger.\tI am hungry.",
                "Wo ist der Bahnhof?\tWhere is the station?", "Danke schön.\tThank you.",
                "Es regnet.\tIt is raining.", "Bis morgen.\tSee you tomorrow."]
CORPUS_DEV = ["Der Zug verlässt den Bahnhof um acht Uhr morgens.\t"
              "The train leaves the station at eight in the morning."]


def write_pairs(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as sink:
        sink.write("".join(line + "\n" for line in lines))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("l10n")
    build_deb(root, root / "debs", "demo-l10n", {"de": GERMAN, "fr": FRENCH})
    build_deb(root, root / "debs", "demo-extra", {"de": GERMAN_EXTRA})
    write_pairs(root / "corpus/train/deu-eng.tsv.gz", CORPUS_TRAIN)
    write_pairs(root / "corpus/dev/deu-eng.tsv.gz", CORPUS_DEV)
    (root / "packages.txt").write_text("# a comment\ndemo-l10n=1.0\n")
    (root / "exclude.tsv").write_text("7\tscience\tOpen the file that you want to print now.\n")
    done = subprocess.run([sys.executable, str(TASK), str(root / "out"), "--corpus",
                           str(root / "corpus"), "--packages", str(root / "packages.txt"),
                           "--debs", str(root / "debs"), "--exclude", str(root / "exclude.tsv"),
                           "--share", "1.0"], capture_output=True, text=True)
    return root, done


def test_whole_sentences_become_pairs_and_the_rest_is_left_out(built):
    root, done = built
    assert done.returncode == 0, done.stderr
    with gzip.open(root / "out/train/deu-eng.tsv.gz", "rt", encoding="utf-8") as lines:
        written = lines.read().splitlines()
    assert written[:len(CORPUS_TRAIN)] == CORPUS_TRAIN  # the corpus's own pairs first, unchanged
    assert sorted(written[len(CORPUS_TRAIN):]) == sorted([
        "Wählen Sie die Ebene, auf der die neuen Objekte gezeichnet werden.\t"
        "Select the layer that the new objects are drawn on.",
        "Das aktuelle Dokument unter einem neuen Namen speichern.\t"  # msgctxt dropped
        "Save the current document under a new name.",
        "Eine Datei wurde aus der Liste entfernt.\t"  # a plural message's singular form
        "One file was removed from the list.",
        "Erste Zeile eines längeren Hilfetexts steht hier.\t"  # a help text, line by line
        "First line of a longer help text goes here.",
        "Zweite Zeile dieses Hilfetexts steht hier.\tSecond line of that help text goes here."])
    # left out: a placeholder (%s), a short label, the dev split's sentence, an --exclude
    # sentence (after its mnemonic is dropped), an untranslated message, French (not in corpus)
    assert done.stdout.startswith("5 new pairs in 1 languages")
    assert sorted(path.name for path in (root / "out/train").iterdir()) == ["deu-eng.tsv.gz"]
    assert (root / "out/dev").resolve() == (root / "corpus/dev").resolve()


def test_share_caps_the_new_pairs_per_language(built):
    root, _ = built
    done = subprocess.run([sys.executable, str(TASK), str(root / "capped"), "--corpus",
                           str(root / "corpus"), "--packages", str(root / "packages.txt"),
                           "--debs", str(root / "debs"), "--share", "0.5"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with gzip.open(root / "capped/train/deu-eng.tsv.gz", "rt", encoding="utf-8") as lines:
        assert len(lines.read().splitlines()) == len(CORPUS_TRAIN) + len(CORPUS_TRAIN) // 2


def test_several_package_lists_read_the_union_of_their_packages(built):
    root, _ = built
    (root / "more.txt").write_text("demo-extra=1.0\ndemo-l10n=1.0\n")
    done = subprocess.run([sys.executable, str(TASK), str(root / "union"), "--corpus",
                           str(root / "corpus"), "--packages", str(root / "packages.txt"),
                           str(root / "more.txt"), "--debs", str(root / "debs"), "--share", "1.0"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("6 new pairs in 1 languages")  # the 5 above and the extra one
    with gzip.open(root / "union/train/deu-eng.tsv.gz", "rt", encoding="utf-8") as lines:
        assert ("Die Bibliothek öffnet um neun und schließt um sechs.\t"
                "The library opens at nine and closes at six.") in lines.read().splitlines()


def test_a_malformed_package_list_is_one_line_naming_the_line(tmp_path):
    (tmp_path / "packages.txt").write_text("demo-l10n=1.0\ndemo-l10n\n")
    done = subprocess.run([sys.executable, str(TASK), str(tmp_path / "out"), "--corpus",
                           str(tmp_path), "--packages", str(tmp_path / "packages.txt")],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"debian_l10n_pairs: {tmp_path / 'packages.txt'}:2: "
                                   "expected name=version, got 'demo-l10n'")


def test_a_file_that_is_no_debian_package_is_one_line_naming_it(built, tmp_path):
    root, _ = built
    (tmp_path / "debs").mkdir()
    (tmp_path / "debs/demo-l10n_1.0_all.deb").write_text("not an archive\n")
    done = subprocess.run([sys.executable, str(TASK), str(tmp_path / "out"), "--corpus",
                           str(root / "corpus"), "--packages", str(root / "packages.txt"),
                           "--debs", str(tmp_path / "debs")], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith(f"debian_l10n_pairs: {tmp_path / 'debs/demo-l10n_1.0_all.deb'}: ")
