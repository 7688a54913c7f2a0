"""`--lang auto` with the official LASER2 model: a line identified as a language whose official
LASER3 encoder is installed (the LASER3 fixtures, in LASER2's space) is embedded by that encoder,
the others by the requested model; rows in input order. The shipped default has a space of its
own: nothing is routed."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import LASER3_FIXTURES, PARITY2_MODEL, install_official, laser_ok, needs_torch

pytestmark = needs_torch

# (line, its language as a command names it, the official model that embeds it)
MIXED = [
    ("Le chat dort sur le canapé depuis ce matin.", "fr", "laser2"),
    ("ሰላም ለዓለም። ዛሬ አየሩ በጣም ጥሩ ነው።", "amh", "laser3-amh_Ethi"),
    ("The cat has been sleeping on the sofa since this morning.", "en", "laser2"),
    ("ខ្ញុំចូលចិត្តញ៉ាំបាយជាមួយគ្រួសាររបស់ខ្ញុំ។", "khm", "laser3-khm_Khmr"),
    ("ልጆቹ ወደ ትምህርት ቤት በእግር ይሄዳሉ።", "amh", "laser3-amh_Ethi"),
    ("Η γάτα κοιμάται στον καναπέ από το πρωί.", "el", "laser2"),
    ("", "en", "laser2"),
]
LINES = [line for line, _, _ in MIXED]


def laser2_checkpoint(path: Path) -> Path:
    """A LASER2-format BiLSTM (random weights, the LASER2 fixture's dictionary) of the LASER3
    fixtures' width, 64: only rows of one width go in one output."""
    import torch

    from laser.models.checkpoint import read_checkpoint
    from laser.runtime.bilstm import BiLSTMEncoder
    from laser.training.trainer import save_laser_checkpoint
    fixture = read_checkpoint(PARITY2_MODEL / "encoder.pt")
    torch.manual_seed(61)
    model = BiLSTMEncoder({**fixture["params"], "hidden_size": 32})
    save_laser_checkpoint(model, fixture["dictionary"], path)
    return path


@pytest.fixture
def installed(tmp_path):
    """laser2 and the LASER3 encoders of Amharic and Khmer installed in the test's $LASER_HOME,
    as `laser download` leaves them."""
    install_official("laser2", laser2_checkpoint(tmp_path / "laser2-64.pt"))
    install_official("laser3-amh_Ethi", LASER3_FIXTURES / "B" / "laser3-B.pt")
    install_official("laser3-khm_Khmr", LASER3_FIXTURES / "A" / "laser3-A.pt")


def each_line_by_its_model() -> np.ndarray:
    """The lines of each official model embedded together by it, each with its language named
    (a transformer's rows move by float32 rounding with their batch companions), in input
    order."""
    from laser import Encoder
    rows = np.empty((len(MIXED), 64), dtype=np.float32)
    for name in {name for _, _, name in MIXED}:
        ours = [index for index, (_, _, model) in enumerate(MIXED) if model == name]
        rows[ours] = Encoder.load(name).encode([LINES[i] for i in ours],
                                               [MIXED[i][1] for i in ours])
    return rows


def test_auto_embeds_each_line_by_its_languages_encoder(installed):
    from laser import Encoder
    laser2 = Encoder.load("laser2")
    prepared = laser2.prepare(LINES, "auto")
    assert [encoder.name for encoder in prepared.encoders] == [name for _, _, name in MIXED]
    np.testing.assert_array_equal(laser2.encode(LINES, "auto"), each_line_by_its_model())
    # one language per line routes as `auto` does
    np.testing.assert_array_equal(laser2.encode(LINES, [lang for _, lang, _ in MIXED]),
                                  each_line_by_its_model())


def test_embed_of_a_mixed_file_equals_the_per_language_embeds(installed, tmp_path):
    source = tmp_path / "mixed.txt"
    source.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    out = tmp_path / "mixed.npy"
    result = laser_ok("embed", source, "-o", out, "--model", "laser2", "--lang", "auto")
    assert result.stderr.rstrip().endswith("; 2 lines of amh_Ethi by laser3-amh_Ethi; 1 line "
                                            "of khm_Khmr by laser3-khm_Khmr")
    np.testing.assert_array_equal(np.load(out), each_line_by_its_model())
    sidecar = json.loads((tmp_path / "mixed.npy.json").read_text(encoding="utf-8"))
    assert (sidecar["model_name"], sidecar["model_space"]) == ("laser2", "laser2")
    assert {code: record["model"] for code, record in sidecar["languages"].items()} == {
        "fra_Latn": "laser2", "amh_Ethi": "laser3-amh_Ethi", "eng_Latn": "laser2",
        "khm_Khmr": "laser3-khm_Khmr", "ell_Grek": "laser2", "und": "laser2"}
    assert sidecar["languages"]["amh_Ethi"]["lines"] == 2


def test_the_shipped_default_routes_nothing(installed, tmp_path):
    from laser import Encoder
    default = Encoder.load()
    assert {encoder.name for encoder in default.prepare(LINES, "auto").encoders} == \
        {"laser-default-v2"}
    source = tmp_path / "mixed.txt"
    source.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    out = tmp_path / "mixed.npy"
    laser_ok("embed", source, "-o", out, "--lang", "auto", "-q")
    np.testing.assert_array_equal(np.load(out), default.encode(LINES, [lang for _, lang, _ in
                                                                      MIXED]))
    sidecar = json.loads((tmp_path / "mixed.npy.json").read_text(encoding="utf-8"))
    assert {record["model"] for record in sidecar["languages"].values()} == {"laser-default-v2"}


def test_a_server_request_of_auto_routes_as_embed_does(installed, tmp_path):
    from laser.models.registry import laser_home
    from serving.conftest import start_server
    shutil.copytree(laser_home(), tmp_path / "laser-home")  # the server's: the same models
    server = start_server(tmp_path)
    try:  # the server refuses an empty input: the last line stays out
        answer = server.post("/embed", {"inputs": LINES[:-1], "lang": "auto", "model": "laser2",
                                        "normalize": False})
    finally:
        server.stop()
    assert answer.status_code == 200, answer.text
    # its batches are its own: a transformer's rows move by a few float32 ulps with them
    np.testing.assert_allclose(answer.json(), each_line_by_its_model()[:-1], atol=2e-6)
