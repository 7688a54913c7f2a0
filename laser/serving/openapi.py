"""The OpenAPI 3.1 description of the server, served at /openapi.json: every endpoint, its
request and answer, every refusal's status and JSON shape, and the API-key scheme. Clients can be
generated from it, and the tests fuzz the server against it (tests/serving/test_openapi.py)."""
from __future__ import annotations

from functools import lru_cache

import orjson

from ..version import __version__
from .limits import Limits

JSON = "application/json"
REF = "#/components/schemas/"

ERROR_WHEN = {
    400: "The body is not JSON or not valid UTF-8 (also a query string, or an unpaired "
         "surrogate).",
    401: "No valid API key (only when the server has keys): `Authorization: Bearer KEY`.",
    404: "An unknown model or index.",
    409: "Queries from a model of another embedding space than the index's (or the two sides "
         "of /align embedded in two spaces).",
    413: "A body over --max-body-bytes, more inputs than --max-inputs (--max-align-sentences a "
         "side for /align), or an input over --max-chars without truncate.",
    422: "A missing field, a wrong type, an empty string or list, a line break in an input, an "
         "unknown language, a bad k, dimensions or encoding_format.",
    429: "The queue is full (--max-queued): retry after Retry-After seconds.",
    503: "Too many connections at once, or the server is shutting down: retry after "
         "Retry-After seconds.",
}


def error_answer(status: int) -> dict:
    headers = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
    if status == 401:
        headers["WWW-Authenticate"] = {"schema": {"type": "string", "const": "Bearer"},
                                       "required": True}
    if status in (429, 503):
        headers["Retry-After"] = {"schema": {"type": "string", "pattern": "^[0-9]+$"}}
    return {"description": ERROR_WHEN[status], "headers": headers,
            "content": {JSON: {"schema": {"$ref": REF + "Error"}}}}


def answer(description: str, schema: dict, media: str = JSON) -> dict:
    return {"description": description,
            "parameters": {"X-Request-Id": {
                "name": "X-Request-Id", "in": "header", "required": False,
                "schema": {"type": "string"},
                "description": "Kept when 1-128 visible ASCII characters, else replaced."}},
            "headers": {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}},
            "content": {media: {"schema": schema}}}


def operation(summary: str, ok: dict, errors: tuple[int, ...], body: str = "",
              parameters: tuple[dict, ...] = (), secured: bool = True) -> dict:
    """One operation: its 200 answer, the refusals it may give, its body or query parameters."""
    found = {"summary": summary, "responses": {"200": ok}}
    statuses = (401,) + errors if secured else errors
    found["responses"].update({str(status): error_answer(status) for status in statuses})
    if body:
        found["requestBody"] = {"required": True,
                                "content": {JSON: {"schema": {"$ref": REF + body}}}}
    found["parameters"] = [*parameters, {"$ref": "#/components/parameters/X-Request-Id"}]
    if not secured:
        found["security"] = []
    return found


def query(name: str, schema: dict, description: str, required: bool = False) -> dict:
    return {"name": name, "in": "query", "required": required, "schema": schema,
            "description": description}


EMBEDDING = {"type": "array", "items": {"type": "number"}}
ROWS = {"type": "array", "items": EMBEDDING}
EMBEDDING_ERRORS = (400, 404, 413, 422, 429, 503)


def schemas(limits: Limits) -> dict:
    """The request and answer bodies; `limits` give the arrays' bounds."""
    sentence = {"type": "string", "minLength": 1,
                "description": "One sentence, without line breaks, at most --max-chars "
                               "characters unless truncate is true."}
    sentences = {"oneOf": [sentence, {"type": "array", "items": sentence, "minItems": 1,
                                      "maxItems": limits.max_inputs}]}
    document = {"type": "array", "items": sentence, "maxItems": limits.max_align_sentences,
                "description": "A document's sentences in order (empty: nothing on this side)."}
    indices = {"type": "array", "items": {"type": "integer", "minimum": 0},
               "description": "0-based positions of the bead's sentences on this side; empty "
                              "for a sentence the other side lacks."}
    common = {"lang": {"type": "string", "default": "en",
                       "description": "The language: an ISO 639-1/3 or FLORES-200 code, or an "
                                      "English name."},
              "model": {"type": "string", "description": "A served model (GET /v1/models)."},
              "truncate": {"type": "boolean", "default": False,
                           "description": "Cut inputs longer than --max-chars instead of "
                                          "refusing them."}}
    return {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["message", "type", "code"], "properties": {
                "message": {"type": "string"}, "type": {"type": "string"},
                "code": {"type": "integer"}}}}},
        "Vectorized": {"type": "object", "required": ["content", "embedding"], "properties": {
            "content": {"type": "string"}, "embedding": {**ROWS, "minItems": 1,
                                                         "maxItems": 1}}},
        "EmbedRequest": {"type": "object", "required": ["inputs"], "properties": {
            "inputs": sentences, **common,
            "normalize": {"type": "boolean", "default": True}}},
        "EmbeddingsRequest": {"type": "object", "required": ["input"], "properties": {
            "input": sentences, **common,
            "encoding_format": {"type": "string", "enum": ["float", "base64"],
                                "default": "float"},
            "dimensions": {"type": "integer", "description": "The model's dimension if given."},
            "normalize": {"type": "boolean", "default": False}}},
        "Embeddings": {"type": "object", "required": ["object", "data", "model", "usage"],
                       "properties": {
            "object": {"const": "list"},
            "data": {"type": "array", "items": {
                "type": "object", "required": ["object", "index", "embedding"], "properties": {
                    "object": {"const": "embedding"}, "index": {"type": "integer"},
                    "embedding": {"oneOf": [EMBEDDING, {
                        "type": "string", "description": "base64 of little-endian float32"}]}}}},
            "model": {"type": "string"},
            "usage": {"type": "object", "required": ["prompt_tokens", "total_tokens"],
                      "properties": {"prompt_tokens": {"type": "integer"},
                                     "total_tokens": {"type": "integer"}}}}},
        "Models": {"type": "object", "required": ["object", "data"], "properties": {
            "object": {"const": "list"},
            "data": {"type": "array", "items": {
                "type": "object", "required": ["id", "object", "created", "owned_by"],
                "properties": {"id": {"type": "string"}, "object": {"const": "model"},
                               "created": {"type": "integer"},
                               "owned_by": {"type": "string"}}}}}},
        "SearchRequest": {"type": "object", "required": ["queries"], "properties": {
            "queries": sentences, **common,
            "index": {"type": "string", "description": "Needed with several indexes."},
            "k": {"type": "integer", "minimum": 1, "maximum": limits.max_k, "default": 4}}},
        "SearchResults": {"type": "object", "required": ["index", "model", "results"],
                          "properties": {
            "index": {"type": "string"}, "model": {"type": "string"},
            "results": {"type": "array", "items": {"type": "array", "items": {
                "type": "object", "required": ["id", "score"], "properties": {
                    "id": {"type": "integer"}, "score": {"type": "number"},
                    "text": {"type": "string"}}}}}}},
        "AlignRequest": {"type": "object", "required": ["src", "trg"], "properties": {
            "src": document, "trg": document,
            "src_lang": {**common["lang"], "description": "The language of src."},
            "trg_lang": {**common["lang"], "description": "The language of trg."},
            "model": common["model"], "truncate": common["truncate"]}},
        "Alignment": {"type": "object", "required": ["model", "beads"], "properties": {
            "model": {"type": "string"},
            "beads": {"type": "array", "items": {
                "type": "object", "required": ["src", "trg", "src_text", "trg_text", "score"],
                "properties": {
                    "src": indices, "trg": indices,
                    "src_text": {"type": "string"}, "trg_text": {"type": "string"},
                    "score": {"type": "number"}}}}}},
        "Health": {"type": "object", "required": ["status"],
                   "properties": {"status": {"const": "ok"}}},
        "Info": {"type": "object", "required": ["version", "models", "model_choice",
                                                "indexes", "limits"], "properties": {
            "version": {"type": "string"}, "models": {"type": "array"},
            "model_choice": {"enum": ["fixed", "by-language"]},
            "indexes": {"type": "array"}, "limits": {"type": "object"}}},
    }


def paths() -> dict:
    sentence = {"type": "string", "minLength": 1}
    return {
        "/vectorize": {"get": operation(
            "One sentence's row, as the official LASER app answers.",
            answer("The row (Encoder.encode's, not unit length).", {"$ref": REF + "Vectorized"}),
            EMBEDDING_ERRORS, parameters=(
                query("q", sentence, "The sentence.", required=True),
                query("lang", {"type": "string"}, "The language (default en)."),
                query("model", {"type": "string"}, "A served model."),
                query("truncate", {"type": "boolean"}, "Cut a sentence over --max-chars.")))},
        "/embed": {"post": operation(
            "Rows of sentences, as text-embeddings-inference answers.",
            answer("One row per input (unit length unless normalize is false).", ROWS),
            EMBEDDING_ERRORS, "EmbedRequest")},
        "/v1/embeddings": {"post": operation(
            "Rows of sentences, as the OpenAI embeddings API answers.",
            answer("One row per input.", {"$ref": REF + "Embeddings"}), EMBEDDING_ERRORS,
            "EmbeddingsRequest")},
        "/v1/models": {"get": operation(
            "The loaded models, as the OpenAI API lists them.",
            answer("The models.", {"$ref": REF + "Models"}), ())},
        "/search": {"post": operation(
            "The k nearest indexed sentences of each query.",
            answer("Per query, its neighbours, nearest first.", {"$ref": REF + "SearchResults"}),
            EMBEDDING_ERRORS + (409,), "SearchRequest")},
        "/align": {"post": operation(
            "The beads of two documents' sentences, in order, as `laser align` finds them.",
            answer("The beads, 1-1, 1-N, N-1, N-M, 1-0 and 0-1, each with its score.",
                   {"$ref": REF + "Alignment"}), EMBEDDING_ERRORS + (409,), "AlignRequest")},
        "/health": {"get": operation(
            "Whether the server is ready (never needs a key).",
            answer("Ready.", {"$ref": REF + "Health"}), (), secured=False)},
        "/info": {"get": operation(
            "Version, models, indexes and limits.", answer("What is served.",
                                                           {"$ref": REF + "Info"}), ())},
        "/metrics": {"get": operation(
            "Prometheus metrics (open with --open-metrics).",
            answer("The Prometheus text format.", {"type": "string"}, "text/plain"), ())},
        "/openapi.json": {"get": operation(
            "This document (never needs a key).",
            answer("OpenAPI 3.1.", {"type": "object"}), (), secured=False)},
        "/": {"get": operation(
            "A page to try the server in a browser (never needs a key; it asks for one).",
            answer("HTML.", {"type": "string"}, "text/html"), (), secured=False),
              "post": operation(
            "As POST /embed: text-embeddings-inference answers at its root too.",
            answer("One row per input (unit length unless normalize is false).", ROWS),
            EMBEDDING_ERRORS, "EmbedRequest")},
    }


def document(limits: Limits) -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "laser serve", "version": __version__,
                 "description": "Multilingual sentence embeddings and k-NN search "
                                "(docs/serving.md). Every refusal is the JSON Error."},
        "paths": paths(),
        "components": {
            "schemas": schemas(limits),
            "securitySchemes": {"apiKey": {
                "type": "http", "scheme": "bearer",
                "description": "A key of --api-key, --api-key-file or $LASER_API_KEY; a server "
                               "started without keys needs none."}},
            "parameters": {"X-Request-Id": {
                "name": "X-Request-Id", "in": "header", "required": False,
                "schema": {"type": "string"},
                "description": "Kept when 1-128 visible ASCII characters, else replaced."}},
            "headers": {"X-Request-Id": {
                "description": "The request's X-Request-Id when it sent a valid one (1-128 "
                               "visible ASCII characters), else one made up; in the access log.",
                "schema": {"type": "string", "minLength": 1, "maxLength": 128},
                "required": True}},
        },
        "security": [{"apiKey": []}],
    }


@lru_cache(maxsize=4)
def openapi_document(limits: Limits) -> bytes:
    """The document as JSON, for a server with these limits."""
    return orjson.dumps(document(limits))
