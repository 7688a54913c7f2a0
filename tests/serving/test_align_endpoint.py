"""POST /align on a real `laser serve`: the beads `laser.align` finds in this process for the
same sentences and model, under the API key like every endpoint, and a 4xx JSON error for bad
input."""
from __future__ import annotations

import json

import pytest
import requests

from serving.conftest import start_server

GERMAN = ["Ich habe Hunger.", "Das Buch liegt auf dem Tisch.", "Es regnet heute.",
          "Ich bleibe zu Hause.", "Wo ist der Bahnhof?"]
ENGLISH = ["I am hungry.", "The book is on the table.",
           "It is raining today, so I stay at home.", "Where is the station?"]


@pytest.fixture(scope="module")
def aligning_server(serving_dir):
    running = start_server(serving_dir, "--max-align-sentences", "6", "--max-inputs", "4",
                           "--api-key", "align-key", key="align-key")
    yield running
    running.stop()


def test_align_answers_the_beads_of_the_library(aligning_server):
    import laser
    expected = laser.align(GERMAN, ENGLISH, src_lang="de", trg_lang="en")
    answer = aligning_server.post("/align", {"src": GERMAN, "trg": ENGLISH, "src_lang": "de",
                                             "trg_lang": "en"})
    assert answer.status_code == 200, answer.text
    beads = answer.json()["beads"]
    assert [(tuple(b["src"]), tuple(b["trg"])) for b in beads] == \
        [(bead.src, bead.trg) for bead in expected]
    assert [b["score"] for b in beads] == pytest.approx([bead.score for bead in expected],
                                                        abs=1e-5)
    for bead in beads:
        assert bead["src_text"] == " ".join(GERMAN[i] for i in bead["src"])
        assert bead["trg_text"] == " ".join(ENGLISH[i] for i in bead["trg"])
    assert sorted(i for b in beads for i in b["src"]) == list(range(len(GERMAN)))
    assert sorted(i for b in beads for i in b["trg"]) == list(range(len(ENGLISH)))


def test_align_takes_an_empty_side(aligning_server):
    answer = aligning_server.post("/align", {"src": [], "trg": ENGLISH[:2], "trg_lang": "en"})
    assert answer.status_code == 200, answer.text
    assert [(b["src"], b["trg"]) for b in answer.json()["beads"]] == [([], [0]), ([], [1])]


BAD = [
    ("no key", {"src": ["a"], "trg": ["b"]}, 401, "API key"),
    ("src missing", {"trg": ["b"]}, 422, "needs 'src'"),
    ("src a string", {"src": "a", "trg": ["b"]}, 422, "'src' must be an array"),
    ("an empty sentence", {"src": ["a", ""], "trg": ["b"]}, 422, "src[1] is an empty string"),
    ("a line break", {"src": ["a"], "trg": ["b\nc"]}, 422, "line break"),
    ("too many sentences", {"src": ["a"] * 7, "trg": ["b"]}, 413, "the limit is 6 per side"),
    ("unknown language", {"src": ["a"], "trg": ["b"], "trg_lang": "klingonese"}, 422,
     "klingonese"),
    ("unknown model", {"src": ["a"], "trg": ["b"], "model": "gpt-4"}, 404, "gpt-4"),
]


@pytest.mark.parametrize("name, body, status, message", BAD, ids=[case[0] for case in BAD])
def test_bad_align_requests_get_a_json_error(aligning_server, name, body, status, message):
    headers = {"Content-Type": "application/json"}
    if name != "no key":
        headers["Authorization"] = "Bearer align-key"
    answer = requests.post(aligning_server.url + "/align", data=json.dumps(body),
                           headers=headers, timeout=60)
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert message in error["message"] and error["code"] == status


def test_the_openapi_document_describes_align(aligning_server):
    document = aligning_server.get("/openapi.json").json()
    operation = document["paths"]["/align"]["post"]
    assert set(operation["responses"]) == {"200", "400", "401", "404", "409", "413", "422",
                                           "429", "503"}
    request = document["components"]["schemas"]["AlignRequest"]
    assert request["properties"]["src"]["maxItems"] == 6
