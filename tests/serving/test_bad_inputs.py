"""Bad requests get a 4xx JSON error naming the problem, and the server answers the next one."""
from __future__ import annotations

import json

import numpy as np
import pytest
import requests

LIMIT = 300  # --max-chars of the `server` fixture; --max-inputs 16, --max-body-bytes 200000
JSON = {"Content-Type": "application/json"}

# (name, method, path, body as bytes or a JSON value, or query params for GET; status, message)
BAD = [
    ("not JSON", "POST", "/embed", b"{inputs: hello", 400, "not valid JSON"),
    ("invalid UTF-8", "POST", "/embed", b'{"inputs": "caf\xe9"}', 400, "not valid UTF-8"),
    ("lone surrogate", "POST", "/embed", b'{"inputs": "\\ud800"}', 400, "unpaired surrogate"),
    ("invalid UTF-8 in query", "GET", "/vectorize?q=caf%E9", None, 400, "not valid UTF-8"),
    ("body not an object", "POST", "/embed", ["Hello"], 422, "must be a JSON object"),
    ("inputs missing", "POST", "/embed", {"text": "Hello"}, 422, "needs 'inputs'"),
    ("inputs a number", "POST", "/embed", {"inputs": 3}, 422, "a string or an array"),
    ("an input not a string", "POST", "/embed", {"inputs": ["a", None]}, 422,
     "inputs[1] must be a string"),
    ("empty list", "POST", "/embed", {"inputs": []}, 422, "empty array"),
    ("empty openai input", "POST", "/v1/embeddings", {"model": "default", "input": []}, 422,
     "empty array"),
    ("token arrays", "POST", "/v1/embeddings", {"model": "default", "input": [[1, 2]]}, 422,
     "token arrays"),
    ("unknown encoding", "POST", "/v1/embeddings",
     {"model": "default", "input": "a", "encoding_format": "int8"}, 422, "encoding_format"),
    ("wrong dimensions", "POST", "/v1/embeddings",
     {"model": "default", "input": "a", "dimensions": 3}, 422, "dimensions"),
    ("normalize not a boolean", "POST", "/embed", {"inputs": "a", "normalize": "yes"}, 422,
     "'normalize' must be true or false"),
    ("unknown language", "POST", "/embed", {"inputs": "a", "lang": "klingonese"}, 422,
     "unknown language"),
    ("unknown language in query", "GET", "/vectorize", {"q": "a", "lang": "xx"}, 422,
     "unknown language"),
    ("lang not a string", "POST", "/embed", {"inputs": "a", "lang": 7}, 422, "'lang'"),
    ("line break", "POST", "/embed", {"inputs": ["one\ntwo"]}, 422, "line break"),
    # every endpoint refuses an empty string, as the OpenAI API does (docs/serving.md)
    ("empty string", "POST", "/embed", {"inputs": ""}, 422, "inputs[0] is an empty string"),
    ("empty string in a list", "POST", "/v1/embeddings", {"model": "default", "input": ["a", ""]},
     422, "input[1] is an empty string"),
    ("empty query string", "GET", "/vectorize", {"q": ""}, 422, "q is an empty string"),
    ("empty search query", "POST", "/search", {"queries": ""}, 422, "queries[0] is an empty"),
    ("empty string at the root", "POST", "/", {"inputs": [""]}, 422, "empty string"),
    ("truncate not a boolean in query", "GET", "/vectorize", {"q": "a", "truncate": "maybe"},
     422, "'truncate' must be true or false"),
    ("q missing", "GET", "/vectorize", {"lang": "en"}, 422, "?q="),
    ("unknown model", "POST", "/v1/embeddings", {"model": "gpt-4", "input": "a"}, 404,
     "gpt-4"),
    ("model as a path", "POST", "/embed", {"inputs": "a", "model": "/etc"}, 404, "/etc"),
    ("too many inputs", "POST", "/embed", {"inputs": ["a"] * 17}, 413, "limit is 16"),
    ("a line over the limit", "POST", "/embed", {"inputs": ["ok", "x" * (LIMIT + 1)]}, 413,
     f"inputs[1] has {LIMIT + 1} characters; the limit is {LIMIT}"),
    ("a query over the limit", "GET", "/vectorize", {"q": "x" * (LIMIT + 1)}, 413,
     f"the limit is {LIMIT} (--max-chars); send &truncate=true to cut it"),
    ("oversize body", "POST", "/embed", {"inputs": "a", "padding": "x" * 200_000}, 413,
     "limit is 200000"),
    ("k too large", "POST", "/search", {"queries": "a", "k": 101}, 422, "'k'"),
    ("k not a number", "POST", "/search", {"queries": "a", "k": "3"}, 422, "'k'"),
    ("unknown index", "POST", "/search", {"queries": "a", "index": "fr"}, 404, "no index 'fr'"),
    ("queries missing", "POST", "/search", {"query": "a"}, 422, "needs 'queries'"),
    ("unknown path", "GET", "/embeddings", None, 404, "Not Found"),
    ("wrong method", "GET", "/embed", None, 405, "Method Not Allowed"),
]


def send(server, method: str, path: str, body) -> requests.Response:
    if method == "GET":
        return server.get(path, params=body)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return requests.post(server.url + path, data=data, headers=JSON, timeout=60)


@pytest.mark.parametrize("name, method, path, body, status, message", BAD,
                         ids=[case[0] for case in BAD])
def test_bad_request_gets_a_json_error_and_the_server_goes_on(server, name, method, path, body,
                                                              status, message):
    answer = send(server, method, path, body)
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert message in error["message"] and error["code"] == status
    assert server.post("/embed", {"inputs": "Still serving."}).status_code == 200


def test_a_line_at_the_limit_is_embedded(server, default_encoder):
    line = "word " * (LIMIT // 5 - 1) + "last."
    assert len(line) == LIMIT
    rows = server.post("/embed", {"inputs": [line], "normalize": False}).json()
    np.testing.assert_allclose(rows, default_encoder.encode([line], "en"), atol=1e-6)


def test_truncate_cuts_a_long_line_to_the_limit(server, default_encoder):
    line = "The cat sleeps on the sofa. " * 20
    rows = server.post("/embed", {"inputs": [line], "truncate": True, "normalize": False}).json()
    np.testing.assert_allclose(rows, default_encoder.encode([line[:LIMIT]], "en"), atol=1e-6)


@pytest.mark.parametrize("truncate", ["true", "1"])
def test_truncate_on_vectorize_cuts_a_long_query(server, default_encoder, truncate):
    line = "The cat sleeps on the sofa. " * 20
    body = server.get("/vectorize", params={"q": line, "truncate": truncate}).json()
    assert body["content"] == line[:LIMIT]
    np.testing.assert_allclose(body["embedding"], default_encoder.encode([line[:LIMIT]], "en"),
                               atol=1e-6)


def test_a_wrong_method_on_a_known_path_gets_json_and_the_methods_allowed(server):
    answer = server.post("/health")
    assert answer.status_code == 405 and "error" in answer.json()
    assert answer.headers["Allow"] == "GET"
    assert requests.delete(server.url + "/v1/embeddings", timeout=60).headers["Allow"] == "POST"


def test_head_is_answered_where_get_is(server):
    answer = requests.head(server.url + "/health", timeout=60)
    assert answer.status_code == 200 and answer.content == b""
    assert requests.head(server.url + "/embed", timeout=60).status_code == 405
