"""The source family of each corpus pair (laser.lid.corpus.SourceOf), which the language-ID
recipe holds out per language and bench/lid.py scores out of source, on a corpus written here."""
import gzip
from pathlib import Path

from laser.lid.corpus import (FLORES, NTREX, TATOEBA, TICO, WIKI, SourceOf, dev_lines,
                              manifest_sources)

MANIFEST = """# A corpus

| lang | script | sources (train pairs per source) | train | dev | test-drop | dev-excl |
|---|---|---|---:|---:|---:|---:|
| fra | Latin | anki-fra 3, tatoeba-test 1, ntrex128 1, flores200 1 | 6 | 1 | 0 | 0 |
| slk | Latin | ntrex128 1, flores200 1 | 2 | 0 | 0 | 0 |
| npi | Devanagari | flores1-wiki 1, ntrex128 1, tatoeba-test 1 | 3 | 0 | 0 | 0 |
| ber | Latin | tatoeba-test 2 | 2 | 0 | 0 | 0 |
| ace | Latin | flores200 1 | 1 | 0 | 0 | 0 |
| mey | Latin | ntrex128 1 | 1 | 0 | 0 | 0 |
| din | Latin | tico19 1 | 1 | 0 | 0 | 0 |
"""
FLORES_EN, NTREX_EN, TICO_EN = "The flores sentence.", "The news sentence.", "The tico one."


def write(path: Path, rows: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(f"{foreign}\t{english}\n" for foreign, english in rows)


def corpus(root: Path) -> Path:
    (root / "MANIFEST.md").parent.mkdir(parents=True, exist_ok=True)
    (root / "MANIFEST.md").write_text(MANIFEST, encoding="utf-8")
    write(root / "train/fra-eng.tsv.gz", [("Bonjour.", "Hello."), ("Merci.", "Thanks."),
                                          ("Merci.", "Thank you."), ("La phrase.", FLORES_EN),
                                          ("Les nouvelles.", NTREX_EN), ("Oui.", "Yes.")])
    write(root / "dev/fra-eng.tsv.gz", [("Non.", "No.")])
    write(root / "train/slk-eng.tsv.gz", [("Správy.", NTREX_EN), ("Veta.", FLORES_EN)])
    write(root / "train/npi-eng.tsv.gz", [("विकि", "A wikipedia sentence."),
                                          ("समाचार", NTREX_EN), ("हो", "Yes.")])
    write(root / "train/ber-eng.tsv.gz", [("Azul.", "Hello."), ("Tanemmirt.", "Thanks.")])
    write(root / "train/ace-eng.tsv.gz", [("Kalimat.", FLORES_EN)])
    write(root / "train/mey-eng.tsv.gz", [("Khabar.", NTREX_EN)])
    write(root / "train/din-eng.tsv.gz", [("Tico.", TICO_EN)])
    return root


def test_the_manifest_gives_each_language_its_source_families(tmp_path):
    sources = manifest_sources(corpus(tmp_path))
    assert sources["fra"] == {TATOEBA, NTREX, FLORES}  # anki-fra is Tatoeba's too
    assert sources["npi"] == {WIKI, NTREX, TATOEBA}
    assert sources["din"] == {TICO}
    assert len(sources) == 7


def test_a_pair_is_of_its_english_sides_multiway_set_else_tatoeba(tmp_path):
    root = corpus(tmp_path)
    source_of = SourceOf(root)
    fra, npi = root / "train/fra-eng.tsv.gz", root / "train/npi-eng.tsv.gz"
    assert source_of(fra, FLORES_EN) == FLORES
    assert source_of(fra, NTREX_EN) == NTREX
    assert source_of(fra, TICO_EN) == TICO
    assert source_of(fra, "Hello.") == TATOEBA
    assert source_of(npi, "A wikipedia sentence.") == WIKI


def test_the_conversational_family_is_held_out_where_a_language_has_another(tmp_path):
    root = corpus(tmp_path)
    source_of = SourceOf(root)
    held = {path.name.split("-")[0]: source_of.held_out(path.name.split("-")[0])
            for path in (root / "train").glob("*.tsv.gz")}
    # Beside Wikipedia a Tatoeba line is not told apart: npi holds out its news instead.
    assert held == {"fra": TATOEBA, "slk": NTREX, "npi": NTREX, "ber": None, "ace": None,
                    "mey": None, "din": None}


def test_the_out_of_source_lines_are_the_held_out_familys_distinct_lines(tmp_path):
    root = corpus(tmp_path)
    found = SourceOf(root).out_of_source(root, per_language=10)
    assert sorted(found) == ["fra", "npi", "slk"]
    assert sorted(found["fra"]) == ["Bonjour.", "Merci.", "Oui."]  # "Merci." once
    assert found["slk"] == ["Správy."]
    assert found["npi"] == ["समाचार"]
    assert len(SourceOf(root).out_of_source(root, per_language=2)["fra"]) == 2



SLV_MANIFEST_ROW = "| slv | Latin | tatoeba-test 2, ntrex128 1, flores200 1 | 4 | 2 | 0 | 0 |\n"


def slovenian_corpus(root: Path) -> Path:
    """The corpus above with a Slovenian file whose Tatoeba sentences are Slovak, as the shared
    corpus's are."""
    corpus(root)
    with (root / "MANIFEST.md").open("a", encoding="utf-8") as manifest:
        manifest.write(SLV_MANIFEST_ROW)
    write(root / "train/slv-eng.tsv.gz", [("Nechcem pracovať.", "I don't want to work."),
                                          ("To nie je papier.", "It isn't paper."),
                                          ("Novice.", NTREX_EN), ("Stavek.", FLORES_EN)])
    write(root / "dev/slv-eng.tsv.gz", [("Dobrú noc!", "Good night!"), ("Novice.", NTREX_EN)])
    return root


def test_a_misfiled_family_is_its_own_languages(tmp_path):
    root = slovenian_corpus(tmp_path)
    source_of = SourceOf(root)
    slv = root / "train/slv-eng.tsv.gz"
    assert source_of.origin(slv, "It isn't paper.") == (TATOEBA, "slk")
    assert source_of.origin(slv, NTREX_EN) == (NTREX, "slv")
    # Slovak now has the conversational family, held out before its news; Slovenian its news.
    assert (source_of.held_out("slk"), source_of.held_out("slv")) == (TATOEBA, NTREX)
    assert source_of.held_out(source_of.origin(slv, "It isn't paper.")[1]) == TATOEBA
    assert source_of.origin(root / "train/slk-eng.tsv.gz", NTREX_EN) == (NTREX, "slk")


def test_dev_and_out_of_source_lines_go_to_the_language_they_are_in(tmp_path):
    root = slovenian_corpus(tmp_path)
    assert dev_lines(root, 10) == {"fra": ["Non."], "slk": ["Dobrú noc!"], "slv": ["Novice."]}
    found = SourceOf(root).out_of_source(root, per_language=10)
    assert sorted(found["slk"]) == ["Nechcem pracovať.", "To nie je papier."]
    assert found["slv"] == ["Novice."]


def test_a_corpus_without_a_manifest_has_no_families_and_no_misfiled_lines(tmp_path):
    """A user's corpus of train/ and dev/ alone (the toy corpus of the tests): every pair is
    read under its file's language, and no language has a family to hold out."""
    write(tmp_path / "train/slv-eng.tsv.gz", [("Novice.", "News.")])
    write(tmp_path / "dev/slv-eng.tsv.gz", [("Dober dan.", "Good day.")])
    source_of = SourceOf(tmp_path)
    assert source_of.origin(tmp_path / "train/slv-eng.tsv.gz", "News.") == (TATOEBA, "slv")
    assert source_of.held_out("slv") is None
    assert dev_lines(tmp_path, 10) == {"slv": ["Dober dan."]}
