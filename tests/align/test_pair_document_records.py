"""`laser align --pair-documents` on collections of records: WET and WARC files (built with
warcio as a crawler writes them), JSON lines, one file or a folder on either side, mixed with
plain sentence files. A record's paragraphs are split into sentences in its side's language;
documents are named by URL, JSON `id`, else FILE:NUMBER; the beads' indices are those of the
split sentences."""
from __future__ import annotations

import gzip
import io
import json

import pytest

from conftest import CORPUS_SAMPLE, laser_ok, one_error_line, run_laser
from laser import split_sentences
from web_documents import write_wet

LANGS = ("--src-lang", "de", "--trg-lang", "en")
SIZES = [6, 8, 5, 7, 9, 6, 5]  # the last two: one lonely document on each side


def documents() -> list[list[tuple[str, str]]]:
    """Documents of consecutive German-English dev pairs."""
    with gzip.open(CORPUS_SAMPLE / "dev" / "deu-eng.tsv.gz", "rt", encoding="utf-8") as f:
        pairs = [tuple(line.rstrip("\n").split("\t")) for line in f]
    found, start = [], 0
    for size in SIZES:
        found.append(pairs[start:start + size])
        start += size
    return found


def paragraphs(sentences: list[str]) -> list[str]:
    """Sentences as paragraphs of up to three."""
    return [" ".join(sentences[start:start + 3]) for start in range(0, len(sentences), 3)]


def side(column: int) -> list[list[str]]:
    """One language's side of each document as paragraphs; the German side without the last
    translated document's counterpart (the lonely ones close each side)."""
    docs = documents()
    translated = [paragraphs([pair[column] for pair in doc]) for doc in docs[:-2]]
    lonely = docs[-2] if column == 0 else docs[-1]
    return translated + [paragraphs([pair[column] for pair in lonely])]


def sentences_of(paragraph_list: list[str], lang: str) -> list[str]:
    return [sentence for paragraph in paragraph_list
            for sentence in split_sentences(paragraph, lang)]


def write_warc_responses(path, pages: dict[str, list[str]]) -> None:
    """A WARC file of HTML responses, a <p> a paragraph."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for url, page in pages.items():
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                       protocol="HTTP/1.1")
            html = "<html><body>" + "".join(f"<p>{p}</p>" for p in page) + "</body></html>"
            writer.write_record(writer.create_warc_record(
                url, "response", http_headers=headers, payload=io.BytesIO(html.encode())))


def read_beads(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def check_beads(beads: list[dict], src_texts: dict, trg_texts: dict) -> None:
    """Every bead's text is its sentences' (by their indices) in the split documents."""
    assert beads
    for bead in beads:
        src, trg = src_texts[bead["src_document"]], trg_texts[bead["trg_document"]]
        assert bead["src_text"] == " ".join(src[i] for i in bead["src"])
        assert bead["trg_text"] == " ".join(trg[i] for i in bead["trg"])


def test_a_wet_file_and_a_jsonl_file_pair_their_records_named_by_url_and_id(tmp_path):
    german, english = side(0), side(1)
    urls = [f"http://seite.example/{n}" for n in range(len(german))]
    ids = [f"en-{n * 7 % 10}" for n in range(len(english))]
    write_wet(tmp_path / "de.warc.wet.gz", dict(zip(urls, german)))
    with open(tmp_path / "en.jsonl", "w", encoding="utf-8") as f:
        order = [3, 0, 5, 1, 4, 2]  # the English records in another order than the German
        for n in order:
            f.write(json.dumps({"id": ids[n], "text": "\n".join(english[n])}) + "\n")
    result = laser_ok("align", tmp_path / "de.warc.wet.gz", tmp_path / "en.jsonl",
                      "--pair-documents", *LANGS, "--pairs-out", tmp_path / "pairs.tsv",
                      "-o", tmp_path / "beads.jsonl", "--format", "jsonl")
    found = [line.split("\t") for line in
             (tmp_path / "pairs.tsv").read_text(encoding="utf-8").splitlines()]
    assert [(src, trg) for src, trg, _ in found] == [(urls[n], ids[n]) for n in range(5)]
    assert "6 documents in" in result.stderr and ": 5 pairs found" in result.stderr
    check_beads(read_beads(tmp_path / "beads.jsonl"),
                {url: sentences_of(page, "de") for url, page in zip(urls, german)},
                {id_: sentences_of(page, "en") for id_, page in zip(ids, english)})


def test_folders_of_jsonl_warc_and_plain_files_name_records_without_ids_by_file_and_number(
        tmp_path):
    german, english = side(0), side(1)
    (tmp_path / "de").mkdir()
    (tmp_path / "en").mkdir()
    # German: two JSON-lines files, text in "body", no url or id; a blank line counts as a line
    with open(tmp_path / "de" / "a.jsonl", "w", encoding="utf-8") as f:
        for page in german[:3]:
            f.write(json.dumps({"body": "\n".join(page)}) + "\n")
    with open(tmp_path / "de" / "b.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"body": "\n".join(german[3])}) + "\n\n")
        for page in german[4:]:
            f.write(json.dumps({"body": "\n".join(page)}) + "\n")
    de_names = ["a.jsonl:1", "a.jsonl:2", "a.jsonl:3", "b.jsonl:1", "b.jsonl:3", "b.jsonl:4"]
    # English: a WARC of HTML pages, and one plain file of a paragraph a line (split too)
    urls = [f"https://site.example/en/{n}" for n in range(len(english))]
    write_warc_responses(tmp_path / "en" / "pages.warc.gz",
                         {url: page for url, page in zip(urls, english) if url != urls[2]})
    (tmp_path / "en" / "sub").mkdir()
    (tmp_path / "en" / "sub" / "two.txt").write_text("\n".join(english[2]) + "\n",
                                                      encoding="utf-8")
    en_names = [*urls[:2], "sub/two.txt", *urls[3:]]
    laser_ok("align", tmp_path / "de", tmp_path / "en", "--pair-documents", *LANGS,
             "--text-field", "body", "--split-sentences", "--pairs-out", tmp_path / "pairs.tsv",
             "-o", tmp_path / "beads.jsonl", "--format", "jsonl", "-q")
    found = [line.split("\t")[:2] for line in
             (tmp_path / "pairs.tsv").read_text(encoding="utf-8").splitlines()]
    assert found == [[de_names[n], en_names[n]] for n in range(5)]
    check_beads(read_beads(tmp_path / "beads.jsonl"),
                {name: sentences_of(page, "de") for name, page in zip(de_names, german)},
                {name: sentences_of(page, "en") for name, page in zip(en_names, english)})


def test_without_split_sentences_a_plain_file_is_a_sentence_a_line(tmp_path):
    german, english = side(0), side(1)
    write_wet(tmp_path / "de.wet", dict(zip([f"http://d.example/{n}" for n in range(6)], german)),
              gzip=False)
    (tmp_path / "en").mkdir()
    for n, page in enumerate(english):
        (tmp_path / "en" / f"{n}.txt").write_text("\n".join(page) + "\n", encoding="utf-8")
    laser_ok("align", tmp_path / "de.wet", tmp_path / "en", "--pair-documents", *LANGS,
             "-o", tmp_path / "beads.jsonl", "--format", "jsonl", "-q")
    beads = read_beads(tmp_path / "beads.jsonl")
    check_beads(beads, {f"http://d.example/{n}": sentences_of(page, "de")
                        for n, page in enumerate(german)},
                {f"{n}.txt": page for n, page in enumerate(english)})  # lines kept whole


@pytest.mark.parametrize("damage, message", [
    ('{"text": "Gut."}\n{"text": "Auch gut."}\nnot json\n',
     "bad.jsonl:3: not a JSON object"),
    ('{"text": "Gut."}\n{"title": "kein Text"}\n', "bad.jsonl:2: no 'text' field (--text-field)"),
])
def test_a_bad_record_is_one_line_naming_file_and_line_and_nothing_is_written(
        tmp_path, damage, message):
    (tmp_path / "de").mkdir()
    (tmp_path / "de" / "bad.jsonl").write_text(damage, encoding="utf-8")
    write_wet(tmp_path / "en.wet.gz", {"http://e.example/": ["Good.", "Also good."]})
    result = run_laser("align", tmp_path / "de", tmp_path / "en.wet.gz", "--pair-documents",
                       *LANGS, "--pairs-out", tmp_path / "pairs.tsv", "-o", tmp_path / "b.tsv")
    assert one_error_line(result).startswith(f"laser: error: {tmp_path / 'de' / message}")
    assert not (tmp_path / "b.tsv").exists() and not (tmp_path / "pairs.tsv").exists()


def test_a_missing_collection_is_named(tmp_path):
    write_wet(tmp_path / "en.wet.gz", {"http://e.example/": ["Good."]})
    result = run_laser("align", tmp_path / "nowhere", tmp_path / "en.wet.gz", "--pair-documents",
                       *LANGS, "-o", tmp_path / "b.tsv")
    assert one_error_line(result) == f"laser: error: {tmp_path / 'nowhere'}: no such file or folder"
