"""The client libraries people reach embedding services through, each the real package in its own
virtualenv (.venv-clients, `make clients`), against a live server with an API key: LangChain's
OpenAIEmbeddings, LlamaIndex's OpenAIEmbedding and TextEmbeddingsInference, Haystack's
text-embeddings-inference embedders. Their rows equal `Encoder.encode`'s to 1e-6."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from laser.search.vectors import unit_rows

from serving.conftest import ROOT, start_server

CLIENTS_PYTHON = ROOT / ".venv-clients" / "bin" / "python"
SCRIPT = ROOT / "tests" / "serving" / "clients" / "embed_with_libraries.py"
KEY = "client-key"
SENTENCES = ["Hello world.", "The book is on the table.", "Where is the train station?"]
QUIET = {"HAYSTACK_TELEMETRY_ENABLED": "False", "HF_HUB_DISABLE_TELEMETRY": "1",
         "LANGSMITH_TRACING": "false", "DO_NOT_TRACK": "1"}


def clients_python() -> str:
    """The client libraries' Python: skipped where they are not installed, failed in CI."""
    if not CLIENTS_PYTHON.exists():
        reason = "the client libraries are not installed (make clients; .ci/run does)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    return str(CLIENTS_PYTHON)


@pytest.fixture(scope="module")
def library_rows(serving_dir) -> dict:
    python = clients_python()
    server = start_server(serving_dir, "--api-key", KEY, key=KEY)
    try:
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("PYTHONPATH", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
        result = subprocess.run([python, str(SCRIPT), server.url, KEY, *SENTENCES],
                                capture_output=True, text=True, timeout=600, cwd=serving_dir,
                                env={**environment, **QUIET})
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("library, normalized", [
    ("langchain-openai", False), ("llama-index-openai", False), ("llama-index-tei", True),
    ("haystack-tei", False)])
def test_library_gets_the_rows_of_laser_embed(library_rows, default_encoder, library,
                                              normalized):
    expected = default_encoder.encode(SENTENCES, "en")
    expected = unit_rows(expected) if normalized else expected
    rows = np.array(library_rows[library])  # the documents, then the first one as a query
    assert rows.shape == (len(SENTENCES) + 1, default_encoder.dim)
    np.testing.assert_allclose(rows, np.vstack([expected, expected[:1]]), atol=1e-6)
