"""Documents as inputs (laser.io.documents): WET/WARC files built with warcio, JSON lines and
blank-line-separated text, told by their content, compressed or not; damaged records are one
line naming the file and the record; empty documents give no sentence."""
import gzip
import io
import lzma

import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.errors import LaserError
from laser.cleaning.sentences import read_sentences, sentence_input
from laser.io.documents import DocumentOptions, input_format, read_documents
from laser.io.warc import html_text

from web_documents import ENGLISH, FRENCH, write_jsonl, write_wet


def test_a_wet_file_is_told_by_its_version_line_and_read_a_record_a_document(tmp_path):
    path = write_wet(tmp_path / "crawl.warc.wet.gz", FRENCH)
    assert input_format(str(path)) == "warc"
    documents = list(read_documents(str(path)))
    assert [document.name for document in documents] == list(FRENCH)
    assert [document.url for document in documents] == list(FRENCH)
    assert [document.paragraphs for document in documents] == list(FRENCH.values())


def test_an_uncompressed_and_an_xz_warc_read_as_the_gzipped_one(tmp_path):
    plain = write_wet(tmp_path / "crawl.warc", FRENCH, gzip=False)
    packed = tmp_path / "crawl.warc.xz"
    packed.write_bytes(lzma.compress(plain.read_bytes()))
    for path in (plain, packed):
        assert input_format(str(path)) == "warc"
        assert [document.paragraphs for document in read_documents(str(path))] == \
            list(FRENCH.values())


def test_jsonl_is_told_by_a_first_line_that_parses_and_read_by_its_text_field(tmp_path):
    path = write_jsonl(tmp_path / "dump.jsonl", FRENCH, field="content")
    with gzip.open(tmp_path / "dump.jsonl.gz", "wt", encoding="utf-8") as out:
        out.write(path.read_text(encoding="utf-8"))
    for name in ("dump.jsonl", "dump.jsonl.gz"):
        assert input_format(str(tmp_path / name)) == "jsonl"
        documents = list(read_documents(str(tmp_path / name),
                                        DocumentOptions(text_field="content")))
        assert [(document.name, document.paragraphs) for document in documents] == \
            list(FRENCH.items())


def test_text_is_one_document_a_line_unless_told_documents_are_separated_by_blank_lines(tmp_path):
    path = tmp_path / "book.txt"
    path.write_text("{not json\nFirst paragraph.\n\n  \nSecond document.\nIts second line.\n",
                    encoding="utf-8")
    assert input_format(str(path)) == "lines"
    assert [document.paragraphs for document in read_documents(str(path))] == \
        [["{not json"], ["First paragraph."], [""], ["  "], ["Second document."],
         ["Its second line."]]
    documents = list(read_documents(str(path), DocumentOptions("paragraphs")))
    assert [(document.name, document.paragraphs) for document in documents] == [
        ("1", ["{not json", "First paragraph."]),
        ("2", ["Second document.", "Its second line."])]


def test_sentences_carry_file_document_paragraph_and_sentence(tmp_path):
    path = write_wet(tmp_path / "crawl.warc.wet.gz", {
        "http://a.example/1": ["Il pleut. Nous restons à la maison.", "", "Demain il fera beau."],
    })
    found = [(sentence.text, sentence.origin.fields()) for sentence in
             read_sentences(str(path), DocumentOptions(split=True, lang="fr"))]
    assert found == [
        ("Il pleut.", (str(path), "http://a.example/1", 1, 1)),
        ("Nous restons à la maison.", (str(path), "http://a.example/1", 1, 2)),
        ("Demain il fera beau.", (str(path), "http://a.example/1", 3, 1)),
    ]


def test_an_empty_document_gives_no_sentence_and_its_neighbours_keep_their_names(tmp_path):
    path = write_wet(tmp_path / "crawl.warc.wet.gz", {
        "http://a.example/1": ["Bonjour tout le monde."], "http://a.example/empty": [],
        "http://a.example/blank": ["", "   "], "http://a.example/2": ["Au revoir."]})
    assert [document.name for document in read_documents(str(path))][1] == \
        "http://a.example/empty"
    assert [(sentence.text, sentence.origin.document) for sentence in
            read_sentences(str(path))] == [("Bonjour tout le monde.", "http://a.example/1"),
                                           ("Au revoir.", "http://a.example/2")]
    jsonl = tmp_path / "empty.jsonl"
    jsonl.write_text('{"text": "", "id": 1}\n{"text": "Salut.", "id": 2}\n', encoding="utf-8")
    assert [sentence.origin.document for sentence in read_sentences(str(jsonl))] == ["2"]


def _damaged_fourth_record(tmp_path):
    """A WARC file whose fourth record (its third page) has a broken version line."""
    path = write_wet(tmp_path / "crawl.warc", FRENCH, gzip=False)
    data = path.read_bytes()
    third = data.index(b"WARC/1.0", data.index(b"WARC/1.0", 1) + 1)
    third = data.index(b"WARC/1.0", third + 1)
    path.write_bytes(data[:third] + b"WARX/1.0" + data[third + 8:])
    return path


def test_a_damaged_warc_record_is_one_line_naming_the_file_and_the_record(tmp_path):
    path = _damaged_fourth_record(tmp_path)
    with pytest.raises(LaserError) as caught:
        list(read_documents(str(path)))
    message = str(caught.value)
    assert message.startswith(f"{path}: WARC record 4 (after <urn:uuid:")
    assert "damaged (Invalid WARC record, first line: WARX/1.0)" in message
    assert "\n" not in message
    result = CliRunner().invoke(main, ["embed", str(path), "--lang", "fr", "-o",
                                       str(tmp_path / "out.npy")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"laser: error: {message}"]
    assert not (tmp_path / "out.npy").exists()


def test_a_truncated_record_and_a_truncated_gzip_stream_are_damaged_records(tmp_path):
    path = write_wet(tmp_path / "crawl.warc", FRENCH, gzip=False)
    data = path.read_bytes()
    cut = tmp_path / "cut.warc"
    cut.write_bytes(data[:-40])
    with pytest.raises(LaserError, match=rf"^{cut}: WARC record 5 <urn:uuid:[^>]+>: damaged "
                                         r"\(truncated: \d+ of \d+ bytes\)$"):
        list(read_documents(str(cut)))
    packed = tmp_path / "cut.warc.gz"
    packed.write_bytes(gzip.compress(data)[:-200])
    with pytest.raises(LaserError, match=rf"^{packed}: WARC record \d+.*: damaged \(corrupt or "
                                         r"truncated gzip stream"):
        list(read_documents(str(packed)))


def test_bad_jsonl_records_are_one_line_naming_file_and_line(tmp_path):
    path = tmp_path / "dump.jsonl"
    for body, message in (('{"text": "ok"}\n{"body": "no text"}\n', "no 'text' field"),
                          ('{"text": "ok"}\n{"text": 3}\n',
                           r"its 'text' field \(--text-field\) is a JSON number, not a string"),
                          ('{"text": "ok"}\n[1, 2]\n', "a JSON array, not an object"),
                          ('{"text": "ok"}\n{"text": \n', "not a JSON object")):
        path.write_text(body, encoding="utf-8")
        with pytest.raises(LaserError, match=rf"^{path}:2: {message}"):
            list(read_documents(str(path)))


def test_html_responses_give_their_visible_text_a_block_a_paragraph():
    page = ("<html><head><title>T</title><style>p {}</style></head><body><p>Une phrase &amp; "
            "une <b>autre</b>.</p><script>var x;</script><div>Deux</div></body></html>")
    assert html_text(page) == "Une phrase & une autre.\nDeux"


def test_a_warc_response_record_is_its_page_text(tmp_path):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    path = tmp_path / "pages.warc.gz"
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=latin-1")],
                                   protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            "http://a.example/p", "response", http_headers=headers,
            payload=io.BytesIO("<p>Déjà vu.</p><p>Fin.</p>".encode("latin-1"))))
        image = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            "http://a.example/i.png", "response", http_headers=image,
            payload=io.BytesIO(b"\x89PNG")))
    documents = list(read_documents(str(path)))
    assert [(document.name, document.paragraphs) for document in documents] == [
        ("http://a.example/p", ["Déjà vu.", "Fin."])]


def test_sentence_input_is_the_file_itself_for_sentence_files(tmp_path):
    path = tmp_path / "sentences.txt"
    path.write_text("One.\nTwo.\n", encoding="utf-8")
    with sentence_input(str(path), DocumentOptions()) as sentences:
        assert sentences == str(path)
    with pytest.raises(LaserError, match="--sentences-out goes with documents"):
        with sentence_input(str(path), DocumentOptions(), sentences_out=str(tmp_path / "s")):
            pass


def test_lid_and_embed_read_documents_a_row_a_sentence_with_their_provenance(tmp_path):
    path = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH)
    out = tmp_path / "sentences.tsv"
    result = CliRunner().invoke(main, ["lid", str(path), "--split-sentences", "-o",
                                       str(tmp_path / "lid.tsv"), "--sentences-out", str(out),
                                       "-q"])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    expected = [[paragraph, str(path), url, str(number), "1"] for url, paragraphs in
                ENGLISH.items() for number, paragraph in enumerate(paragraphs, 1)]
    assert rows == expected
    codes = [line.split("\t")[0] for line in (tmp_path / "lid.tsv").read_text().splitlines()]
    assert len(codes) == len(rows) and codes[0] == "eng_Latn"
    result = CliRunner().invoke(main, ["embed", str(path), "--lang", "en", "-o",
                                       str(tmp_path / "en.npy"), "-q"])
    assert result.exit_code == 0, result.output
    import numpy as np
    assert np.load(tmp_path / "en.npy").shape[0] == len(rows)


def test_split_sentences_needs_a_language(tmp_path):
    path = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH)
    result = CliRunner().invoke(main, ["knn", "build", str(path), "--split-sentences", "-o",
                                       str(tmp_path / "x.index")])
    assert result.exit_code == 1
    assert "--split-sentences and --sentences-out go with --lang" in result.output


def test_split_writes_the_sentences_of_documents_with_their_provenance(tmp_path):
    path = write_jsonl(tmp_path / "pages.jsonl", {
        "http://a.example/1": ["Il pleut. Nous restons à la maison.", "Demain il fera beau."]})
    out = tmp_path / "sentences.tsv"
    result = CliRunner().invoke(main, ["split", str(path), "--lang", "fr", "--provenance",
                                       "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").splitlines() == [
        f"Il pleut.\t{path}\thttp://a.example/1\t1\t1",
        f"Nous restons à la maison.\t{path}\thttp://a.example/1\t1\t2",
        f"Demain il fera beau.\t{path}\thttp://a.example/1\t2\t1"]
    result = CliRunner().invoke(main, ["split", str(path), "--lang", "fr", "--with-line"])
    assert result.exit_code == 1 and "documents take --provenance" in result.output


def test_knn_build_indexes_the_sentences_of_documents_and_records_no_text(tmp_path):
    path = write_wet(tmp_path / "en.warc.wet.gz", ENGLISH)
    result = CliRunner().invoke(main, ["knn", "build", str(path), "--lang", "en",
                                       "--split-sentences", "-o", str(tmp_path / "en.index"),
                                       "--sentences-out", str(tmp_path / "en.tsv"), "-q"])
    assert result.exit_code == 0, result.output
    import json
    meta = json.loads((tmp_path / "en.index.json").read_text())
    sentences = (tmp_path / "en.tsv").read_text(encoding="utf-8").splitlines()
    assert meta["count"] == len(sentences) == 9 and meta["text"] is None
