"""`laser prepare`: a crawl's documents split, normalised and filtered, each filter's count on
stderr and in OUTPUT.json, the sentences with their provenance; resumable in its work
directory."""
import json

import pytest
from click.testing import CliRunner

from laser.cli import main

from web_documents import FRENCH, write_wet

CRAWL = {
    **FRENCH,
    "http://jardin.example/fr/copie": ["Les roses fleurissent au début de l'été dans notre jardin."],
    "http://divers.example/a": ["The weather is very nice today in London.",
                                "Appelez le 01 23 45 67 89 / 06 12 34 56 78",
                                "Oui.",
                                "Это предложение написано по-русски."],
    "http://divers.example/vide": [],
}
KEPT = [
    ("Les roses fleurissent au début de l'été dans notre jardin.", "http://jardin.example/fr/roses", 1),
    ("Il faut arroser les plantes chaque matin quand il fait chaud.", "http://jardin.example/fr/roses", 3),
    ("Nous avons récolté trois paniers de pommes ce week-end.", "http://jardin.example/fr/pommes", 1),
    ("La tarte aux pommes de ma grand-mère est la meilleure du village.", "http://jardin.example/fr/pommes", 3),
    ("En hiver, le jardin se repose sous la neige.", "http://jardin.example/fr/hiver", 1),
    ("Le train pour Lyon part à huit heures du quai numéro deux.", "http://gare.example/horaires", 1),
]


def _prepare(tmp_path, *options, name="out.txt"):
    crawl = tmp_path / "fr.warc.wet.gz"
    if not crawl.exists():
        write_wet(crawl, CRAWL)
    result = CliRunner().invoke(main, ["prepare", str(crawl), "--lang", "fr", "-o",
                                       str(tmp_path / name), *options])
    assert result.exit_code == 0, result.output
    return crawl, result.output


def test_each_filter_removes_its_sentences_and_is_counted(tmp_path):
    crawl, stderr = _prepare(tmp_path, "--unify", "--provenance")
    rows = [line.split("\t") for line in (tmp_path / "out.txt").read_text().splitlines()]
    assert rows == [[text, str(crawl), url, str(paragraph), "1"] for text, url, paragraph in KEPT]
    record = json.loads((tmp_path / "out.txt.json").read_text())
    assert {key: record[key] for key in ("documents", "empty_documents", "paragraphs",
                                         "sentences", "kept")} == \
        {"documents": 7, "empty_documents": 1, "paragraphs": 14, "sentences": 14, "kept": 6}
    assert record["removed"] == {"chars": 1, "words": 0, "script": 1, "digits_punctuation": 1,
                                 "boilerplate": 3, "language": 1, "duplicates": 1}
    assert stderr.strip().endswith(
        "7 documents (1 empty), 14 paragraphs, 14 sentences; removed 1 by length in characters, "
        "1 by letters outside the language's script, 1 by digits, punctuation and symbols, "
        "3 by boilerplate, 1 by language ID, 1 by duplicates; kept 6")


def test_filters_switched_off_keep_what_they_removed(tmp_path):
    _prepare(tmp_path, "--boilerplate", "0", "--no-lid", "--min-chars", "1",
             "--min-script-share", "0", "--max-digits-punctuation", "1")
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert len(lines) == 14  # every sentence, the duplicate too
    assert lines.count("Accueil | Boutique | Contact") == 3
    assert "Oui." in lines and "The weather is very nice today in London." in lines


def test_boilerplate_is_a_paragraph_in_n_documents_of_one_site(tmp_path):
    _prepare(tmp_path, "--boilerplate", "4", "--no-lid")
    assert (tmp_path / "out.txt").read_text().splitlines().count("Accueil | Boutique | Contact") == 3
    _prepare(tmp_path, "--boilerplate", "2", "--no-lid", "--min-words", "7")
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert "Accueil | Boutique | Contact" not in lines
    # two documents of jardin.example hold the first sentence of the roses page
    assert "Les roses fleurissent au début de l'été dans notre jardin." not in lines


def test_a_rerun_resumes_and_recomputes_only_missing_tasks(tmp_path):
    work = tmp_path / "work"
    _prepare(tmp_path, "--work-dir", str(work))
    expected = (tmp_path / "out.txt").read_bytes()
    stage = work / "input-clean"
    read = {path.name: path.stat().st_mtime_ns for path in stage.glob("file-*")}
    (stage / "sentences-000000.txt").unlink()
    (tmp_path / "out.txt").unlink()
    _prepare(tmp_path, "--work-dir", str(work))
    assert (tmp_path / "out.txt").read_bytes() == expected
    assert {path.name: path.stat().st_mtime_ns for path in stage.glob("file-*")} == read
    manifest = json.loads((stage / "manifest.json").read_text())
    assert set(manifest["done"]) >= {"read-000000", "filter-000000", "boilerplate-0"}
    _prepare(tmp_path, "--work-dir", str(work), "--min-chars", "1", "--no-lid")  # recomputed
    assert "Oui." in (tmp_path / "out.txt").read_text().splitlines()


def test_the_default_work_directory_is_removed_on_success(tmp_path):
    _prepare(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == \
        ["fr.warc.wet.gz", "out.txt", "out.txt.json"]


@pytest.mark.parametrize("args, message", [
    (["-", "--lang", "fr"], "not '-' (stdin)"),
    (["missing.wet.gz", "--lang", "fr"], "missing.wet.gz: no such file"),
    (["IN", "--lang", "fr", "--unify-by", "normalized"], "--unify-by goes with --unify"),
])
def test_bad_invocations_are_one_line(tmp_path, args, message):
    crawl = write_wet(tmp_path / "in.wet.gz", FRENCH)
    args = [str(crawl) if arg == "IN" else arg for arg in args]
    result = CliRunner().invoke(main, ["prepare", *args, "-o", str(tmp_path / "out.txt")])
    assert result.exit_code == 1
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def test_prepare_imports_none_of_the_heavy_packages(tmp_path):
    """The light install runs it: no torch, scipy, sacremoses, ONNX or faiss on the way."""
    import subprocess
    import sys
    from test_startup import HEAVY, PROBE
    crawl = write_wet(tmp_path / "fr.warc.wet.gz", CRAWL)
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), "prepare", str(crawl),
                           "--lang", "fr", "--unify", "-o", str(tmp_path / "out.txt"), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_bad_lines_fail_skip_or_replace_as_in_mine(tmp_path):
    """--bad-lines of a JSON-lines or text input: fail names the option, skip drops the line (its
    record) and names it, replace decodes it with U+FFFD; counted on stderr and in OUTPUT.json."""
    records = tmp_path / "docs.jsonl"
    records.write_bytes(b'{"text": "Le livre est sur la table de la cuisine ce matin."}\n'
                        b'{"text": "Caf\xe9 au lait pour tout le monde dans la maison."}\n'
                        b'{"text": "Nous partons demain matin pour la gare de Lyon."}\n')
    out = tmp_path / "out.txt"

    def prepare(*options):
        return CliRunner().invoke(main, ["prepare", str(records), "--lang", "fr", "-o", str(out),
                                         "--no-lid", "--provenance", "-q", *options])
    failed = prepare()
    assert failed.exit_code == 1 and not out.exists()
    assert failed.stderr == (f"laser: error: {records}:2: invalid UTF-8 at byte 14 (--bad-lines "
                             "skip drops such lines or replace decodes them with U+FFFD)\n")
    named = f"{records}:2 (invalid UTF-8 at byte 14)"
    skipped = prepare("--bad-lines", "skip")
    assert skipped.exit_code == 0, skipped.output
    assert skipped.stderr == ("laser: warning: skipped 1 line that is not UTF-8 text "
                              f"(--bad-lines skip): {named}\n")
    # the records keep their line numbers as names: the third is still 3
    assert [line.split("\t")[0::2] for line in out.read_text().splitlines()] == [
        ["Le livre est sur la table de la cuisine ce matin.", "1", "1"],
        ["Nous partons demain matin pour la gare de Lyon.", "3", "1"]]
    assert json.loads((tmp_path / "out.txt.json").read_text())["bad_lines"] == \
        {"policy": "skip", "count": 1, "named": [named]}
    replaced = prepare("--bad-lines", "replace")
    assert "replaced bad bytes with U+FFFD in 1 line" in replaced.stderr
    assert out.read_text().splitlines()[1].startswith("Caf\ufffd au lait")
    assert json.loads((tmp_path / "out.txt.json").read_text())["bad_lines"]["count"] == 1
    text = tmp_path / "paragraphs.txt"  # one document a line: a skipped line is no document
    text.write_bytes(b"Le livre est sur la table de la cuisine.\n\xff\xfe\n")
    done = CliRunner().invoke(main, ["prepare", str(text), "--lang", "fr", "-o", str(out),
                                     "--no-lid", "-q", "--bad-lines", "skip"])
    assert done.exit_code == 0 and f"{text}:2 (invalid UTF-8 at byte 1)" in done.stderr
    assert out.read_text() == "Le livre est sur la table de la cuisine.\n"
