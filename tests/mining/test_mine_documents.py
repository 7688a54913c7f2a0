"""`laser mine` from web documents to pairs in one command: WET and JSON-lines sides split,
cleaned and mined, each pair naming both documents' URLs, paragraphs and sentences."""
import json

import pytest
from click.testing import CliRunner

from laser.cli import main

from web_documents import ENGLISH, FRENCH, write_jsonl, write_wet

# A paragraph of two sentences on each side: the second sentence's provenance says so.
FRENCH_PAGES = {**FRENCH, "http://jardin.example/fr/hiver": [
    "En hiver, le jardin se repose sous la neige. Les oiseaux cherchent des graines près de la "
    "maison.", "Accueil | Boutique | Contact"]}
ENGLISH_PAGES = {**ENGLISH, "http://garden.example/en/winter": [
    "In winter, the garden rests under the snow. The birds look for seeds near the house.",
    "Home | Shop | Contact"]}
FRENCH_URLS = list(FRENCH_PAGES)
ENGLISH_URLS = list(ENGLISH_PAGES)


def _mine(src, trg, output, *options):
    result = CliRunner().invoke(main, ["mine", str(src), str(trg), "--src-lang", "fr",
                                       "--trg-lang", "en", "--split-sentences", "--provenance",
                                       "-o", str(output), *options])
    assert result.exit_code == 0, result.output
    return result.output


def _expected_pairs():
    """Every content sentence with its translation: (fr URL, paragraph, sentence, en URL)."""
    pairs = {("http://jardin.example/fr/hiver", 1, 2, "http://garden.example/en/winter")}
    for fr_url, en_url in zip(FRENCH_URLS, ENGLISH_URLS):
        for number, paragraph in enumerate(FRENCH_PAGES[fr_url], 1):
            if "|" not in paragraph:
                pairs.add((fr_url, number, 1, en_url))
    return pairs


def test_wet_files_of_two_languages_give_pairs_naming_both_documents(tmp_path):
    src = write_wet(tmp_path / "fr.warc.wet.gz", FRENCH_PAGES)
    trg = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH_PAGES)
    _mine(src, trg, tmp_path / "mined.tsv")
    rows = [line.split("\t") for line in (tmp_path / "mined.tsv").read_text().splitlines()]
    assert all(len(row) == 11 for row in rows)
    found = set()
    for score, fr, en, fr_file, fr_url, fr_par, fr_sent, en_file, en_url, en_par, en_sent in rows:
        assert (fr_file, en_file) == (str(src), str(trg))
        assert (en_par, en_sent) == (fr_par, fr_sent)
        assert FRENCH_PAGES[fr_url][int(fr_par) - 1].count(fr) == 1
        assert ENGLISH_PAGES[en_url][int(en_par) - 1].count(en) == 1
        found.add((fr_url, int(fr_par), int(fr_sent), en_url))
    assert found == _expected_pairs()


def test_a_jsonl_side_mines_as_its_wet_file_and_names_its_urls(tmp_path):
    src = write_jsonl(tmp_path / "fr.jsonl", FRENCH_PAGES, field="body")
    trg = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH_PAGES)
    stderr = _mine(src, trg, tmp_path / "mined.jsonl", "--output-format", "jsonl",
                   "--text-field", "body", "--verbose")
    records = [json.loads(line) for line in (tmp_path / "mined.jsonl").read_text().splitlines()]
    assert {(record["src_document"], record["src_paragraph"], record["src_sentence"],
             record["trg_document"]) for record in records} == _expected_pairs()
    assert {record["src_file"] for record in records} == {str(src)}
    assert f"cleaned {src}: 4 documents (0 empty), 9 paragraphs, 10 sentences; removed 3 by " \
           "boilerplate; kept 7" in stderr


def test_bad_lines_of_a_document_side_fail_or_are_skipped(tmp_path):
    """--bad-lines reaches a side read as documents: a JSON line that is not UTF-8 text fails
    the run naming the option, or with skip is dropped (named on stderr) and the rest mined."""
    src = write_jsonl(tmp_path / "fr.jsonl", FRENCH_PAGES, field="body")
    with open(src, "ab") as out:
        out.write(b'{"url": "http://jardin.example/fr/abimee", "body": "Caf\xe9 noir."}\n')
    trg = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH_PAGES)
    failed = CliRunner().invoke(main, ["mine", str(src), str(trg), "--src-lang", "fr",
                                       "--trg-lang", "en", "--text-field", "body", "-q",
                                       "-o", str(tmp_path / "mined.jsonl")])
    assert failed.exit_code == 1
    assert failed.stderr.splitlines()[-1] == (
        f"laser: error: {src}:5: invalid UTF-8 at byte 56 (--bad-lines skip drops such lines or "
        "replace decodes them with U+FFFD)")
    stderr = _mine(src, trg, tmp_path / "mined.jsonl", "--output-format", "jsonl",
                   "--text-field", "body", "--bad-lines", "skip")
    assert f"laser: warning: skipped 1 line that is not UTF-8 text (--bad-lines skip): {src}:5 " \
           "(invalid UTF-8 at byte 56)" in stderr.splitlines()
    records = [json.loads(line) for line in (tmp_path / "mined.jsonl").read_text().splitlines()]
    assert {(record["src_document"], record["src_paragraph"], record["src_sentence"],
             record["trg_document"]) for record in records} == _expected_pairs()


def test_a_rerun_reuses_the_cleaning_stage(tmp_path):
    src = write_wet(tmp_path / "fr.warc.wet.gz", FRENCH_PAGES)
    trg = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH_PAGES)
    work = tmp_path / "work"
    _mine(src, trg, tmp_path / "a.tsv", "--work-dir", str(work))
    stamps = {path: path.stat().st_mtime_ns for path in (work / "src-clean").iterdir()
              if path.name != "manifest.json"}
    _mine(src, trg, tmp_path / "b.tsv", "--work-dir", str(work))
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps
    assert (tmp_path / "a.tsv").read_bytes() == (tmp_path / "b.tsv").read_bytes()


@pytest.mark.parametrize("options, message", [
    (["--src-embeddings", "x.npy"], "documents are split and cleaned before they are embedded; "
                                    "drop --src-embeddings"),
    (["--src-lang", ""], "documents are cleaned in their language; pass --src-lang"),
])
def test_document_sides_need_their_text_and_language(tmp_path, options, message):
    src = write_wet(tmp_path / "fr.warc.wet.gz", FRENCH_PAGES)
    trg = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH_PAGES)
    (tmp_path / "x.npy").write_bytes(b"")
    options = [str(tmp_path / option) if option == "x.npy" else option for option in options]
    result = CliRunner().invoke(main, ["mine", str(src), str(trg), "--src-lang", "fr",
                                       "--trg-lang", "en", "-o", str(tmp_path / "out"),
                                       *options])
    assert result.exit_code == 1
    assert result.output.strip() == f"laser: error: {src}: {message}"
