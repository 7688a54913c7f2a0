"""The OpenAPI document at /openapi.json holds: schemathesis generates requests for every operation
it describes (at least 200 each, valid and invalid) against a live server with an API key and an
index, and every answer must be below 500 and conform to the document (status, content type,
headers, body). Small limits keep the generated sentences cheap to embed. (The document is read
here when the tests are collected, before the server starts; the server must serve the same.)"""
from __future__ import annotations

from collections import Counter

import pytest
import requests

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, Phase, settings  # noqa: E402 (schemathesis brings it)
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance, response_headers_conformance, response_schema_conformance,
    status_code_conformance)

from laser.serving.limits import Limits  # noqa: E402
from laser.serving.openapi import document  # noqa: E402

from serving.conftest import start_server  # noqa: E402

KEY = "fuzz-key"
LIMITS = Limits(max_inputs=4, max_chars=200, max_queued=64, max_align_sentences=4)
CASES = 200
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]
generated: Counter = Counter()  # cases sent, by operation


@pytest.fixture(scope="module")
def fuzzed_server(serving_dir, index_path):
    running = start_server(serving_dir, "--index", str(index_path), "--api-key", KEY,
                           "--max-inputs", str(LIMITS.max_inputs), "--max-chars",
                           str(LIMITS.max_chars), "--max-queued", str(LIMITS.max_queued),
                           "--max-align-sentences", str(LIMITS.max_align_sentences), key=KEY)
    yield running
    running.stop()


schema = schemathesis.openapi.from_dict(document(LIMITS))


def test_the_server_serves_the_document_fuzzed(fuzzed_server):
    assert requests.get(fuzzed_server.url + "/openapi.json", timeout=60).json() == \
        document(LIMITS)


@schema.parametrize()
@settings(max_examples=CASES, deadline=None, database=None, derandomize=True,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_every_answer_conforms_to_the_document(case, fuzzed_server):
    generated[f"{case.method} {case.path}"] += 1
    case.call_and_validate(base_url=fuzzed_server.url,
                           headers={"Authorization": f"Bearer {KEY}"}, checks=CHECKS)


def test_every_operation_was_fuzzed(fuzzed_server):
    document = requests.get(fuzzed_server.url + "/openapi.json", timeout=60).json()
    operations = {f"{method.upper()} {path}" for path, item in document["paths"].items()
                  for method in item}
    assert len(operations) == 12
    fewer = {operation: generated[operation] for operation in operations
             if generated[operation] < CASES}
    assert not fewer, f"operations fuzzed with fewer than {CASES} cases: {fewer}"


def test_the_document_names_the_key_scheme_and_every_refusal(fuzzed_server):
    document = requests.get(fuzzed_server.url + "/openapi.json", timeout=60).json()
    assert document["openapi"] == "3.1.0"
    assert document["components"]["securitySchemes"]["apiKey"] == {
        **document["components"]["securitySchemes"]["apiKey"], "type": "http", "scheme": "bearer"}
    embed = document["paths"]["/embed"]["post"]["responses"]
    assert set(embed) == {"200", "400", "401", "404", "413", "422", "429", "503"}
    assert document["paths"]["/health"]["get"]["security"] == []
