"""BPE parity with `fast applybpe`, for fastBPE and the in-package applier alike."""
import pytest

from laser.subwords.fastbpe import BPE, PythonBPE
from laser.errors import LaserError

from conftest import PARITY, PARITY_MODEL, PARITY_STEMS

BACKENDS = ["python", "fastbpe"]
CODES, VOCAB = PARITY_MODEL / "bpe.fcodes", PARITY_MODEL / "bpe.fvocab"


def _lines(path):
    return path.read_bytes().decode("utf-8").split("\n")


@pytest.fixture(scope="module", params=BACKENDS)
def bpe(request):
    return BPE(CODES, VOCAB, backend=request.param)


@pytest.mark.parametrize("stem", PARITY_STEMS)
def test_bpe_matches_official_output(bpe, stem):
    tokenized = _lines(PARITY / "expected" / f"{stem}.tok")
    expected = _lines(PARITY / "expected" / f"{stem}.bpe")
    assert bpe.apply_lines(tokenized) == expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_bpe_without_vocabulary_matches_training_output(backend):
    bpe = BPE(CODES, None, backend=backend)
    tokenized = _lines(PARITY / "bpe_train" / "train.tok")
    assert bpe.apply_lines(tokenized) == _lines(PARITY / "bpe_train" / "train.bpe")


def test_spaces_are_kept_as_applybpe_keeps_them(bpe):
    assert bpe.apply_line("  de  la ") == "  de  la "
    assert bpe.apply_line("") == ""


def test_vocabulary_limit_undoes_unknown_merges(tmp_path):
    codes = tmp_path / "codes"
    codes.write_text("a b 10\nab c</w> 5\n", encoding="utf-8")
    vocab = tmp_path / "vocab"
    vocab.write_text("a@@ 3\nb@@ 3\nc 3\n", encoding="utf-8")
    assert PythonBPE(codes).apply_word("abc") == "abc"
    assert PythonBPE(codes, vocab).apply_word("abc") == "a@@ b@@ c"
    assert BPE(codes, vocab, backend="fastbpe").apply_line("abc abd") == \
        BPE(codes, vocab, backend="python").apply_line("abc abd")


def test_malformed_codes_are_reported_with_line(tmp_path):
    codes = tmp_path / "codes"
    codes.write_text("a b 1\nbroken\n", encoding="utf-8")
    for backend in BACKENDS:
        with pytest.raises(LaserError, match=r"codes:2: expected 'left right count'"):
            BPE(codes, None, backend=backend)


def test_unknown_backend_is_refused():
    with pytest.raises(LaserError, match="choose auto, fastbpe or python"):
        BPE(CODES, VOCAB, backend="sentencepiece")
