"""Every endpoint's happy path on a real server: rows equal `Encoder.encode` to 1e-6."""
from __future__ import annotations

import base64
import re

import numpy as np
import pytest

from laser.search.vectors import unit_rows

from serving.conftest import INDEXED, start_server

SENTENCES = ["Hello world.", "Das Buch liegt auf dem Tisch.", "Wo ist der Bahnhof?"]


def test_vectorize_answers_as_the_official_app(server, default_encoder):
    answer = server.get("/vectorize", params={"q": "Bonjour le monde.", "lang": "fr"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["content"] == "Bonjour le monde."
    expected = default_encoder.encode(["Bonjour le monde."], "fr")
    np.testing.assert_allclose(body["embedding"], expected, atol=1e-6)


def test_vectorize_reads_english_without_lang(server, default_encoder):
    body = server.get("/vectorize", params={"q": "Hello world."}).json()
    np.testing.assert_allclose(body["embedding"], default_encoder.encode(["Hello world."], "en"),
                               atol=1e-6)


def test_embed_gives_unit_rows_by_default_and_raw_rows_on_request(server, default_encoder):
    expected = default_encoder.encode(SENTENCES, "de")
    unit = server.post("/embed", {"inputs": SENTENCES, "lang": "de"})
    raw = server.post("/embed", {"inputs": SENTENCES, "lang": "de", "normalize": False})
    assert unit.status_code == raw.status_code == 200
    np.testing.assert_allclose(raw.json(), expected, atol=1e-6)
    np.testing.assert_allclose(unit.json(), unit_rows(expected), atol=1e-6)


def test_embed_takes_one_string(server, default_encoder):
    rows = server.post("/embed", {"inputs": "Hello world.", "normalize": False}).json()
    np.testing.assert_allclose(rows, default_encoder.encode(["Hello world."], "en"), atol=1e-6)


def test_openai_endpoint_floats_base64_and_usage(server, default_encoder):
    expected = default_encoder.encode(SENTENCES, "de")
    tokens = sum(len(ids) for ids in default_encoder.prepare(SENTENCES, "de"))
    floats = server.post("/v1/embeddings", {"model": "default", "input": SENTENCES, "lang": "de"})
    packed = server.post("/v1/embeddings", {"model": "default", "input": SENTENCES, "lang": "de",
                                            "encoding_format": "base64"})
    assert floats.status_code == packed.status_code == 200
    body = floats.json()
    assert body["object"] == "list" and body["model"] == "default"
    assert [item["index"] for item in body["data"]] == [0, 1, 2]
    assert body["usage"] == {"prompt_tokens": tokens, "total_tokens": tokens}
    np.testing.assert_allclose([item["embedding"] for item in body["data"]], expected, atol=1e-6)
    decoded = [np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4")
               for item in packed.json()["data"]]
    np.testing.assert_allclose(decoded, expected, atol=1e-6)


def test_openai_client(server, default_encoder):
    from openai import OpenAI
    client = OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    expected = default_encoder.encode(SENTENCES, "de")
    for options in ({}, {"encoding_format": "float"}):  # the client asks for base64 by default
        answer = client.embeddings.create(model="default", input=SENTENCES,
                                          extra_body={"lang": "de"}, **options)
        np.testing.assert_allclose([item.embedding for item in answer.data], expected,
                                   atol=1e-6)
        assert answer.usage.prompt_tokens > len(SENTENCES)
    single = client.embeddings.create(model="default", input="Hello world.")
    np.testing.assert_allclose(single.data[0].embedding,
                               default_encoder.encode("Hello world.", "en"), atol=1e-6)
    assert [model.id for model in client.models.list()] == ["default"]


def test_openai_client_sees_refusals(server):
    from openai import NotFoundError, OpenAI
    client = OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(NotFoundError, match="no-such-model"):
        client.embeddings.create(model="no-such-model", input="Hello")


def test_search_finds_the_nearest_indexed_sentences(server, default_encoder):
    queries = ["Hello world!", "Es regnet heute."]
    answer = server.post("/search", {"queries": queries, "lang": "de", "k": 3})
    assert answer.status_code == 200
    body = answer.json()
    assert body["index"] == "sentences" and body["model"] == "default"
    targets = unit_rows(default_encoder.encode(INDEXED, "en"))
    scores = unit_rows(default_encoder.encode(queries, "de")) @ targets.T
    for hits, expected in zip(body["results"], scores):
        best = np.argsort(-expected, kind="stable")[:3]
        assert [hit["id"] for hit in hits] == best.tolist()
        np.testing.assert_allclose([hit["score"] for hit in hits], expected[best], atol=1e-5)
        assert [hit["text"] for hit in hits] == [INDEXED[i] for i in best]


def test_health_and_info(server, default_encoder, index_path):
    assert server.get("/health").json() == {"status": "ok"}
    info = server.get("/info").json()
    assert info["model_choice"] == "by-language"
    [model] = info["models"]
    assert model["name"] == "default" and model["dim"] == default_encoder.dim
    assert model["sha256"] == default_encoder.files.sha256()
    [index] = info["indexes"]
    assert index["name"] == "sentences" and index["count"] == len(INDEXED)
    assert index["model_sha256"] == model["sha256"] and index["has_text"]
    assert info["limits"]["max_inputs"] == 16 and info["limits"]["max_chars"] == 300


def test_metrics_count_requests_sentences_and_batches(server):
    before = server.metric("laser_sentences_total")
    assert server.post("/embed", {"inputs": ["One.", "Two.", "Three."]}).status_code == 200
    text = server.get("/metrics").text
    assert server.metric("laser_sentences_total") == before + 3
    assert re.search(r'^laser_requests_total\{endpoint="/embed",status="200"\} [1-9]', text, re.M)
    assert re.search(r'^laser_batch_sentences_count [1-9]', text, re.M)
    assert re.search(r'^laser_request_seconds_bucket\{endpoint="/embed",le="\+Inf"\} [1-9]',
                     text, re.M)
    assert "# TYPE laser_queue_sentences gauge" in text


def test_page_is_self_contained(server):
    answer = server.get("/")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", answer.text)


MIXED = ["Hello world.", "Das Buch liegt auf dem Tisch.", "我们明天早上去北京看朋友。",
         "Η γάτα κοιμάται στον καναπέ."]


@pytest.mark.parametrize("path, field", [("/embed", "inputs"), ("/v1/embeddings", "input")])
def test_lang_auto_embeds_each_sentence_as_its_identified_language(server, default_encoder, path,
                                                                   field):
    expected = default_encoder.encode(MIXED, "auto")
    body = {field: MIXED, "lang": "auto", **({"normalize": False} if path == "/embed" else {})}
    answer = server.post(path, body)
    assert answer.status_code == 200
    rows = answer.json() if path == "/embed" else [item["embedding"]
                                                    for item in answer.json()["data"]]
    np.testing.assert_allclose(rows, expected, atol=1e-6)
    named = default_encoder.encode(MIXED, ["en", "de", "zh", "el"])
    np.testing.assert_allclose(rows, named, atol=1e-6)
    vectorized = server.get("/vectorize", params={"q": MIXED[2], "lang": "auto"}).json()
    np.testing.assert_allclose(vectorized["embedding"], named[2:3], atol=1e-6)


def test_lang_auto_embeds_und_sentences_as_the_servers_fallback(serving_dir, default_encoder):
    """`laser serve --lang-fallback ja`: sentences without letters are `und`, embedded as
    Japanese (MeCab), the others as their identified languages."""
    sentences = ["Das Buch liegt auf dem Tisch.", "2024-05-01", "12,5 %"]
    server = start_server(serving_dir, "--lang-fallback", "ja")
    try:
        rows = server.post("/embed", {"inputs": sentences, "lang": "auto",
                                      "normalize": False}).json()
    finally:
        server.stop()
    np.testing.assert_allclose(rows, default_encoder.encode(sentences, ["de", "ja", "ja"]),
                               atol=1e-6)
    assert not np.allclose(rows[1:], default_encoder.encode(sentences[1:], "en"), atol=1e-6)
