"""The curl and Python examples of docs/serving.md, run against a real server (the doc marks them
long-running for the docs-example runner, which starts no server); those of the client
libraries in their own virtualenv (`make clients`)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from serving.conftest import ROOT
from serving.test_client_libraries import QUIET, clients_python

DOC = ROOT / "docs" / "serving.md"
DOC_URL = "http://localhost:8080"
BLOCK = re.compile(r"<!-- example: skip long-running -->\n```(sh|python)\n(.*?)```", re.S)
CLIENT_LIBRARIES = re.compile(r"^from (langchain_openai|llama_index|haystack)", re.M)


def server_examples() -> list[tuple[str, str]]:
    """(language, code) of every example that calls a running server (not those starting one)."""
    return [(language, code) for language, code in BLOCK.findall(DOC.read_text(encoding="utf-8"))
            if DOC_URL in code and not re.search(r"^laser serve", code, re.M)]


def test_the_doc_has_server_examples():
    languages = [language for language, _ in server_examples()]
    assert languages.count("sh") >= 4 and languages.count("python") >= 3
    libraries = [code for _, code in server_examples() if CLIENT_LIBRARIES.search(code)]
    assert len(libraries) == 4


def interpreter(code: str) -> str:
    """This Python, or the client libraries' for an example that imports one."""
    return clients_python() if CLIENT_LIBRARIES.search(code) else sys.executable


@pytest.mark.parametrize("language, code", server_examples(),
                         ids=lambda value: value.split("\n")[0][:40])
def test_example_runs_against_a_server(server, language, code):
    code = code.replace(DOC_URL, server.url)
    command = ["bash", "-euo", "pipefail", "-c", code] if language == "sh" else \
        [interpreter(code), "-c", code]
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                            env={**environment, **QUIET})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() and '"error"' not in result.stdout, result.stdout
