"""`laser train` on a tiny corpus: official checkpoint format, resume (observably: from the saved
step, only the remaining steps, the same weights as an uninterrupted run), the loss, the schedule
and the batch sampler."""
import gzip
import itertools
import json
import re
from dataclasses import replace

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from laser.runtime.bilstm import BiLSTMEncoder, load_checkpoint
from laser.cli import main
from laser.encoder import Encoder
from laser.errors import LaserError
from laser.models.files import ModelFiles
from laser.models.registry import shipped_model_dir
from laser.subwords.fastbpe import BPE
from laser.training.corpus import find_pair_files, read_pairs
from laser.training.config import (CPU_PIECE_SENTENCES, TrainConfig, cpu_runs_bf16_lstms,
                                   pieces_for)
from laser.training.batches import Batch
from laser.training.warm_start import pieces
from laser.training.trainer import (Trainer, _optimise, backward_loss, encoder_params,
                                    in_batch_order, learning_rate, length_pieces,
                                    ranking_loss)

from conftest import CORPUS_SAMPLE

CORPUS = CORPUS_SAMPLE
LANGUAGES = ("deu", "ell", "fra")


def _copy_head(source, target, lines):
    with gzip.open(source, "rt", encoding="utf-8") as f:
        head = list(itertools.islice(f, lines))
    with gzip.open(target, "wt", encoding="utf-8") as out:
        out.writelines(head)


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    for split, lines in (("train", 120), ("dev", 40)):
        (root / split).mkdir()
        for lang in LANGUAGES:
            _copy_head(CORPUS / "dev" / f"{lang}-eng.tsv.gz",
                       root / split / f"{lang}-eng.tsv.gz", lines)
    return root


def invoke(corpus, work, output, steps, *extra):
    return CliRunner().invoke(main, [
        "train", str(corpus), "-o", str(output), "--work-dir", str(work), "--steps", str(steps),
        "--merges", "300", "--embed-dim", "16", "--hidden-size", "12", "--batch-size", "8",
        "--eval-every", "4", "--warmup", "2", "--bow-steps", "3", "--workers", "1", "--name", "tiny",
        *extra])


def train(corpus, work, output, steps, *extra):
    result = invoke(corpus, work, output, steps, *extra)
    assert result.exit_code == 0, result.output
    return result


def read_log(work):
    return [json.loads(line) for line in (work / "log.jsonl").read_text().splitlines()]


@pytest.fixture
def steps_taken(monkeypatch):
    """The step number of every optimiser step the trainer takes; setting `stop_at` makes the
    step with that number raise (an interrupted run: its last checkpoint stays on disk)."""
    real = Trainer.train_step
    record = {"taken": [], "stop_at": None}

    def recording_step(self, batch):
        if self.step == record["stop_at"]:
            raise RuntimeError(f"interrupted before step {self.step}")
        record["taken"].append(self.step)
        return real(self, batch)

    monkeypatch.setattr(Trainer, "train_step", recording_step)
    return record


def weights(work):
    return torch.load(work / "checkpoint.pt", weights_only=True)


def test_trained_model_is_an_official_checkpoint_that_embeds(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "work", tmp_path / "model", 8)
    files = ModelFiles.from_dir(tmp_path / "model")
    assert files.encoder.name == "tiny.pt" and files.codes.name == "tiny.fcodes"
    checkpoint = load_checkpoint(files.encoder)
    assert checkpoint.params["bidirectional"] and checkpoint.params["embed_dim"] == 16
    assert set(checkpoint.state) == {"embed_tokens.weight"} | {
        f"lstm.{w}_l0{s}" for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        for s in ("", "_reverse")}
    assert all(t.dtype == torch.float16 for t in checkpoint.state.values())
    assert list(checkpoint.dictionary.items())[:4] == [("<s>", 0), ("<pad>", 1), ("</s>", 2),
                                                       ("<unk>", 3)]
    vocab = [line.split()[0] for line in files.vocab.read_text().splitlines()]
    assert list(checkpoint.dictionary)[4:] == vocab
    embeddings = Encoder(files).encode(["Guten Morgen.", "Καλημέρα."], lang="de")
    assert embeddings.shape == (2, 24) and embeddings.dtype == np.float32
    log = read_log(tmp_path / "work")
    assert log[0]["stage"] == "bag-of-subwords" and log[0]["steps"] == 3
    assert log[1]["event"] == "start" and log[1]["step"] == 0 and log[1]["steps"] == 8
    evaluations = [record for record in log if "average_error" in record]
    assert [record["step"] for record in evaluations[1:]] == [4, 8]
    assert all(0 <= record["average_error"] <= 1 for record in evaluations)
    assert log[-1]["event"] == "end" and log[-1]["steps_run"] == 8


def _strict_json(line: str):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(line, parse_constant=refuse)


def test_a_corpus_without_dev_says_so_once_and_never_reports_nan(tiny_corpus, tmp_path):
    result = train(tiny_corpus / "train", tmp_path / "work", tmp_path / "model", 4)
    lines = result.stderr.splitlines()
    assert lines[0] == ("laser: warning: no dev evaluation: the corpus has no dev/ folder and no "
                        "--dev was given; the last step's model is exported")
    assert sum("dev evaluation" in line for line in lines) == 2  # the warning and the last line
    assert lines[-1] == f"step 4: no dev evaluation; the last step's model in {tmp_path / 'model'}"
    assert not re.search(r"\b(nan|inf)\b|empty slice", result.stderr, re.IGNORECASE)
    log = [_strict_json(line) for line in (tmp_path / "work" / "log.jsonl").read_text().splitlines()]
    assert not any("average_error" in record for record in log)
    assert log[-2]["step"] == 4 and log[-2]["loss"] > 0
    assert ModelFiles.from_dir(tmp_path / "model").encoder.name == "tiny.pt"


def test_run_interrupted_partway_resumes_at_its_checkpoint(tiny_corpus, tmp_path, steps_taken):
    train(tiny_corpus, tmp_path / "straight", tmp_path / "m1", 8, "--checkpoint-every", "2")
    assert steps_taken["taken"] == list(range(8))
    # Interrupted before step 5 of 8: the checkpoint written at step 4 is the last one.
    steps_taken.update(taken=[], stop_at=5)
    result = invoke(tiny_corpus, tmp_path / "resumed", tmp_path / "m2", 8, "--checkpoint-every", "2")
    assert result.exit_code != 0 and "interrupted before step 5" in str(result.exception)
    assert steps_taken["taken"] == [0, 1, 2, 3, 4] and weights(tmp_path / "resumed")["step"] == 4
    steps_taken.update(taken=[], stop_at=None)
    train(tiny_corpus, tmp_path / "resumed", tmp_path / "m2", 8, "--checkpoint-every", "2")
    # Resumed at the saved step, only the remaining steps taken ...
    assert steps_taken["taken"] == [4, 5, 6, 7]
    starts = [r for r in read_log(tmp_path / "resumed") if r.get("event") == "start"]
    assert [r["step"] for r in starts] == [0, 4]
    # ... and the result is the uninterrupted run's.
    straight, resumed = weights(tmp_path / "straight"), weights(tmp_path / "resumed")
    assert straight["step"] == resumed["step"] == 8
    for name, tensor in straight["model"].items():
        assert torch.allclose(tensor, resumed["model"][name], atol=1e-6), name


def test_resumed_run_keeps_what_it_learned_under_its_first_schedule(tiny_corpus, tmp_path,
                                                                    steps_taken):
    """Steps 0-3 under a 4-step schedule, then 4-7 under an 8-step one: a run that restarted
    instead of resuming would be exactly the straight 8-step run, which this must not equal."""
    train(tiny_corpus, tmp_path / "straight", tmp_path / "m1", 8)
    train(tiny_corpus, tmp_path / "resumed", tmp_path / "m2", 4)
    steps_taken["taken"].clear()
    train(tiny_corpus, tmp_path / "resumed", tmp_path / "m2", 8)
    assert steps_taken["taken"] == [4, 5, 6, 7]
    straight, resumed = weights(tmp_path / "straight"), weights(tmp_path / "resumed")
    assert resumed["step"] == 8
    difference = max((straight["model"][name] - tensor).abs().max().item()
                     for name, tensor in resumed["model"].items())
    assert difference > 1e-4


def test_resume_with_another_shape_is_refused(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "work", tmp_path / "m", 2)
    result = CliRunner().invoke(main, [
        "train", str(tiny_corpus), "-o", str(tmp_path / "m"), "--work-dir", str(tmp_path / "work"),
        "--merges", "300", "--embed-dim", "16", "--hidden-size", "20", "--steps", "4",
        "--workers", "1"])
    assert result.exit_code == 1
    assert "cannot resume with a different hidden_size" in result.output


def test_init_grows_a_trained_model_keeping_its_bpe_embeddings_and_layer(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "w1", tmp_path / "one-layer", 4)
    train(tiny_corpus, tmp_path / "w2", tmp_path / "two-layers", 1, "--init",
          str(tmp_path / "one-layer"), "--layers", "2", "--lr", "1e-9", "--eval-every", "100")
    first = ModelFiles.from_dir(tmp_path / "one-layer")
    assert (tmp_path / "w2" / "bpe.fcodes").read_bytes() == first.codes.read_bytes()
    assert (tmp_path / "w2" / "bpe.fvocab").read_bytes() == first.vocab.read_bytes()
    start = load_checkpoint(first.encoder).state
    grown = weights(tmp_path / "w2")["model"]
    assert torch.allclose(grown["embed_tokens.weight"], start["embed_tokens.weight"].float(),
                          atol=1e-6)
    assert torch.allclose(grown["layers.0.1.weight_hh_l0"],
                          start["lstm.weight_hh_l0_reverse"].float(), atol=1e-6)
    assert grown["layers.1.0.weight_ih_l0"].shape == (48, 24)
    init = read_log(tmp_path / "w2")[0]
    assert init["stage"] == "init" and init["layers_copied"] == 1
    assert init["tokens_copied"] == init["tokens_total"] == len(load_checkpoint(first.encoder)
                                                                 .dictionary)
    assert load_checkpoint(ModelFiles.from_dir(tmp_path / "two-layers").encoder) \
        .params["num_layers"] == 2


def test_init_from_a_model_of_another_width_is_refused(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "w1", tmp_path / "narrow", 1)
    result = invoke(tiny_corpus, tmp_path / "w2", tmp_path / "wide", 1, "--init",
                    str(tmp_path / "narrow"), "--hidden-size", "20")
    assert result.exit_code == 1
    assert "--init model has hidden_size 12, the network to train 20" in result.output


def test_init_with_a_smaller_hidden_size_narrows_the_model(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "w1", tmp_path / "wide", 4, "--layers", "2")
    train(tiny_corpus, tmp_path / "w2", tmp_path / "narrow", 1, "--init", str(tmp_path / "wide"),
          "--layers", "2", "--hidden-size", "8", "--lr", "1e-9", "--eval-every", "100")
    init = read_log(tmp_path / "w2")[0]
    assert init["hidden_from"] == 12 and init["layers_copied"] == 2
    wide = load_checkpoint(ModelFiles.from_dir(tmp_path / "wide").encoder).state
    narrow = load_checkpoint(ModelFiles.from_dir(tmp_path / "narrow").encoder)
    assert narrow.params["hidden_size"] == 8
    assert narrow.state["lstm.weight_hh_l1_reverse"].shape == (32, 8)
    assert narrow.state["lstm.weight_ih_l1"].shape == (32, 16)
    wide_rows = wide["lstm.weight_ih_l0"].float()
    for row in narrow.state["lstm.weight_ih_l0"].float():  # every kept unit's gate rows
        assert torch.isclose(wide_rows, row, atol=1e-3).all(dim=1).any()
    embeddings = Encoder(ModelFiles.from_dir(tmp_path / "narrow")).encode(["Guten Morgen."], "de")
    assert embeddings.shape == (1, 16) and np.isfinite(embeddings).all()


def test_grow_vocab_learns_more_merges_and_starts_new_tokens_from_their_pieces(tiny_corpus,
                                                                              tmp_path):
    train(tiny_corpus, tmp_path / "w1", tmp_path / "small", 4)
    train(tiny_corpus, tmp_path / "w2", tmp_path / "grown", 1, "--init", str(tmp_path / "small"),
          "--grow-vocab", "--merges", "600", "--lr", "1e-9", "--eval-every", "100")
    small_files = ModelFiles.from_dir(tmp_path / "small")
    codes = (tmp_path / "w2" / "bpe.fcodes").read_text().splitlines()
    assert len(codes) == 600 and codes[:300] == small_files.codes.read_text().splitlines()
    small = load_checkpoint(small_files.encoder)
    grown = load_checkpoint(ModelFiles.from_dir(tmp_path / "grown").encoder).dictionary
    new_tokens = [token for token in grown if token not in small.dictionary]
    init = read_log(tmp_path / "w2")[0]
    assert init["tokens_total"] == len(grown) and init["tokens_composed"] == len(new_tokens) > 50
    assert init["tokens_copied"] == len(grown) - len(new_tokens)
    embeddings = weights(tmp_path / "w2")["model"]["embed_tokens.weight"]
    bpe = BPE(small_files.codes, small_files.vocab)
    for token in new_tokens[:20]:
        rows = [small.dictionary[piece] for piece in pieces(token, bpe)]
        expected = small.state["embed_tokens.weight"][rows].float().mean(dim=0)
        assert torch.allclose(embeddings[grown[token]], expected, atol=1e-6), token
    encoded = Encoder(ModelFiles.from_dir(tmp_path / "grown")).encode(["Guten Morgen."], "de")
    assert encoded.shape == (1, 24) and np.isfinite(encoded).all()


def test_grow_vocab_cuts_a_new_subword_with_the_smaller_bpe(tmp_path):
    codes = tmp_path / "codes"
    codes.write_text("h e 10\nl o</w> 9\n")
    bpe = BPE(codes)
    assert pieces("hello", bpe) == ["he@@", "l@@", "lo"]
    assert pieces("hello@@", bpe) == ["he@@", "l@@", "l@@", "o@@"]  # lo</w> ends a word only
    assert pieces("he@@", bpe) == ["he@@"]
    assert pieces("he", bpe) == ["h@@", "e"]


@pytest.mark.parametrize("init, merges, message", [
    (False, "600", "--grow-vocab needs --init"),
    (True, "300", "--grow-vocab needs more --merges than the init model's 300")])
def test_grow_vocab_is_refused_without_init_or_more_merges(tiny_corpus, tmp_path, init, merges,
                                                           message):
    train(tiny_corpus, tmp_path / "w1", tmp_path / "small", 1)
    options = ["--init", str(tmp_path / "small")] if init else []
    result = invoke(tiny_corpus, tmp_path / "w2", tmp_path / "grown", 1, *options, "--grow-vocab",
                    "--merges", merges)
    assert result.exit_code == 1 and message in result.output
    assert not (tmp_path / "w2").exists()


def test_other_merges_in_a_prepared_work_dir_is_refused(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "work", tmp_path / "m", 1)
    result = CliRunner().invoke(main, [
        "train", str(tiny_corpus), "-o", str(tmp_path / "m"), "--work-dir", str(tmp_path / "work"),
        "--merges", "200", "--steps", "2"])
    assert result.exit_code == 1 and "prepared with other settings" in result.output


def test_malformed_pair_line_names_file_and_line(tmp_path):
    path = tmp_path / "xx-eng.tsv"
    path.write_text("a\tb\nno tab here\n", encoding="utf-8")
    with pytest.raises(LaserError, match=r"xx-eng.tsv:2: expected 'foreign<TAB>english'"):
        list(read_pairs(path))


def test_missing_language_is_refused(tiny_corpus):
    with pytest.raises(LaserError, match="no pair file for xyz"):
        find_pair_files(tiny_corpus / "train", ["fra", "xyz"])


def test_ranking_loss_rewards_aligned_pairs_and_skips_duplicates():
    torch.manual_seed(0)
    english = torch.randn(6, 10)
    aligned = torch.cat([english + 0.01 * torch.randn(6, 10), english])
    shuffled = torch.cat([english[torch.randperm(6)], english])
    no_duplicates = torch.zeros(6, 6, dtype=torch.bool)
    assert ranking_loss(aligned, no_duplicates, 20, 0.1) < 0.1
    assert ranking_loss(shuffled, no_duplicates, 20, 0.1) > 1
    # Pair 5 repeats pair 0: an identical "negative" would beat the margined positive.
    repeated = torch.cat([aligned[:5], aligned[:1], aligned[6:11], aligned[6:7]])
    duplicate = torch.zeros(6, 6, dtype=torch.bool)
    duplicate[0, 5] = duplicate[5, 0] = True
    assert ranking_loss(repeated, duplicate, 20, 0.1) < 0.1
    assert ranking_loss(repeated, no_duplicates, 20, 0.1) > 0.5


def test_learning_rate_warms_up_then_decays_to_the_floor():
    config = TrainConfig(lr=1e-3, warmup=10, steps=110, final_lr_ratio=0.1)
    assert learning_rate(config, 0) == pytest.approx(1e-4)
    assert learning_rate(config, 9) == pytest.approx(1e-3)
    assert learning_rate(config, 60) == pytest.approx(1e-3 * (0.1 + 0.9 * 0.5))
    assert learning_rate(config, 110) == pytest.approx(1e-4)
    assert learning_rate(config, 500) == pytest.approx(1e-4)


def test_fresh_encoder_round_trips_through_official_state():
    params = encoder_params(TrainConfig(vocab_size=50, embed_dim=8, hidden_size=6, num_layers=2))
    torch.manual_seed(1)
    model = BiLSTMEncoder(params)
    copy = BiLSTMEncoder(params)
    copy.load_official_state(model.official_state())
    tokens, lengths = torch.tensor([[5, 6, 7, 2], [8, 2, 1, 1]]), torch.tensor([4, 2])
    assert torch.equal(model(tokens, lengths), copy(tokens, lengths))


@pytest.mark.device
@pytest.mark.parametrize("bf16", [False, True])
def test_bf16_runs_the_network_in_bfloat16_and_still_learns(bf16, device):
    skip_unless_bf16_runs(bf16, device)
    torch.manual_seed(0)
    config = TrainConfig(vocab_size=60, embed_dim=16, hidden_size=12, lr=1e-2, warmup=1,
                         steps=40, bf16=bf16)
    model = BiLSTMEncoder(encoder_params(config)).to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    tokens = torch.randint(4, 60, (16, 9))
    tokens[8:] = tokens[:8]  # each "translation" is its sentence: the ranking task is learnable
    batch = Batch(tokens, torch.full((16,), 9), torch.zeros(8, 8, dtype=torch.bool), ["xx"] * 8)
    seen = []
    first_lstm = model.layers[0][0]
    first_lstm.register_forward_hook(lambda module, inputs, output: seen.append(output[0].dtype))
    losses = [_optimise(model, optimizer, config, step, batch, torch.device(device))
              for step in range(40)]
    assert set(seen) == {torch.bfloat16 if bf16 else torch.float32}
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert losses[-1] < 0.5 * losses[0]


def _padded_batch(sentences: int, vocab: int) -> Batch:
    """`sentences` random right-padded sentences of 3-9 tokens as pairs of a batch."""
    lengths = torch.randint(3, 10, (sentences,))
    tokens = torch.randint(4, vocab, (sentences, 9))
    for row, length in enumerate(lengths):
        tokens[row, length:] = 1
    pairs = sentences // 2
    return Batch(tokens, lengths, torch.zeros(pairs, pairs, dtype=torch.bool), ["xx"] * pairs)


@pytest.mark.device
@pytest.mark.parametrize("bf16", [False, True])
def test_chunked_embedding_gives_the_whole_batchs_gradients(bf16, device):
    skip_unless_bf16_runs(bf16, device)
    torch.manual_seed(0)
    config = TrainConfig(vocab_size=60, embed_dim=16, hidden_size=12, num_layers=2, bf16=bf16)
    model = BiLSTMEncoder(encoder_params(config)).to(device).train()
    batch = _padded_batch(20, 60)
    head = torch.nn.Linear(24, 5).to(device)  # an extra loss with parameters of its own

    def gradients(chunk):
        model.zero_grad()
        head.zero_grad()
        loss = backward_loss(model, batch, replace(config, chunk_sentences=chunk),
                             torch.device(device), lambda e, b: head(e).pow(2).mean())
        return loss, [p.grad.clone() for p in [*model.parameters(), *head.parameters()]]

    whole_loss, whole = gradients(0)
    for chunk in (7, 20):  # uneven chunks, and one chunk as large as the batch
        loss, chunked = gradients(chunk)
        assert loss == pytest.approx(whole_loss, rel=1e-6)
        for expected, found in zip(whole, chunked):
            if bf16:  # the same up to bfloat16 rounding of each chunk's weight gradients
                assert (found - expected).norm() <= 0.01 * expected.norm()
            else:
                torch.testing.assert_close(found, expected, rtol=1e-4, atol=1e-6)
    assert all(g.norm() > 0 for g in whole)


def test_length_pieces_sort_the_batch_and_cut_each_piece_to_its_longest_sentence():
    torch.manual_seed(0)
    batch = _padded_batch(20, 60)
    pieces = length_pieces(batch, 6)
    assert [len(p.rows) for p in pieces] == [6, 6, 6, 2]
    assert sorted(torch.cat([p.rows for p in pieces]).tolist()) == list(range(20))
    lengths = torch.cat([p.lengths for p in pieces])
    assert torch.equal(lengths, batch.lengths.sort().values)
    for piece in pieces:
        assert piece.tokens.size(1) == piece.lengths.max()
        assert torch.equal(piece.tokens, batch.tokens[piece.rows, :piece.tokens.size(1)])
    assert len(length_pieces(batch, 0)) == 1


@pytest.mark.device
def test_pieces_give_the_whole_batchs_embeddings_and_gradients(device):
    torch.manual_seed(0)
    config = TrainConfig(vocab_size=60, embed_dim=16, hidden_size=12, num_layers=2)
    model = BiLSTMEncoder(encoder_params(config)).to(device).train()
    batch = _padded_batch(20, 60)
    pieces = length_pieces(batch, 6)
    whole = model(batch.tokens.to(device), batch.lengths.to(device))
    pieced = in_batch_order([model(p.tokens.to(device), p.lengths.to(device)) for p in pieces],
                            pieces)
    torch.testing.assert_close(pieced, whole, rtol=1e-5, atol=1e-6)

    def gradients(piece_sentences):
        model.zero_grad()
        loss = backward_loss(model, batch, replace(config, piece_sentences=piece_sentences),
                             torch.device(device))
        return loss, [p.grad.clone() for p in model.parameters()]

    one_loss, one_piece = gradients(0)
    loss, pieced_gradients = gradients(6)
    assert loss == pytest.approx(one_loss, rel=1e-5)
    for expected, found in zip(one_piece, pieced_gradients):
        torch.testing.assert_close(found, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.device
def test_dropout_acts_only_while_training(device):
    torch.manual_seed(0)
    config = TrainConfig(vocab_size=60, embed_dim=16, hidden_size=12, num_layers=2)
    plain = BiLSTMEncoder(encoder_params(config)).to(device)
    dropped = BiLSTMEncoder(encoder_params(config)).to(device)
    dropped.load_state_dict(plain.state_dict())
    dropped.dropout = 0.3
    batch = _padded_batch(8, 60)
    tokens, lengths = batch.tokens.to(device), batch.lengths.to(device)
    first, second = (dropped.train()(tokens, lengths) for _ in range(2))
    assert not torch.equal(first, second)
    assert torch.equal(dropped.eval()(tokens, lengths), plain.eval()(tokens, lengths))


@pytest.mark.parametrize("layers, dropout, embedding_dropout, dropped", [
    (1, 0.5, 0.0, False),  # one layer: its only input is the token embeddings, spared
    (2, 0.5, 0.0, True),   # the second layer's input still gets dropout
    (1, 0.0, 0.5, True),   # the embeddings alone
])
def test_embedding_dropout_sets_the_rate_of_the_first_layers_input(layers, dropout,
                                                                   embedding_dropout, dropped):
    torch.manual_seed(0)
    config = TrainConfig(vocab_size=60, embed_dim=16, hidden_size=12, num_layers=layers)
    model = BiLSTMEncoder(encoder_params(config))
    model.dropout, model.embedding_dropout = dropout, embedding_dropout
    batch = _padded_batch(8, 60)
    training = model.train()(batch.tokens, batch.lengths)
    assert torch.equal(training, model.eval()(batch.tokens, batch.lengths)) != dropped


@pytest.mark.device
def test_chunked_embedding_with_dropout_gives_the_gradients_of_its_masks(device):
    torch.manual_seed(0)
    config = TrainConfig(vocab_size=60, embed_dim=16, hidden_size=12, num_layers=2,
                         chunk_sentences=7)
    model = BiLSTMEncoder(encoder_params(config)).to(device).train()
    model.dropout = 0.3
    batch = _padded_batch(20, 60)
    pieces = length_pieces(batch, 7)

    def gradients(loss_of_batch):
        model.zero_grad()
        torch.manual_seed(5)
        loss = loss_of_batch()
        return loss, [p.grad.clone() for p in model.parameters()]

    def chunks_with_autograd():  # the same masks in the same order, one graph for the batch
        embeddings = in_batch_order([model(p.tokens.to(device), p.lengths.to(device))
                                     for p in pieces], pieces)
        loss = ranking_loss(embeddings, batch.duplicate, config.scale, config.margin)
        loss.backward()
        return loss.item()

    expected_loss, expected = gradients(chunks_with_autograd)
    loss, found = gradients(lambda: backward_loss(model, batch, config, torch.device(device)))
    assert loss == pytest.approx(expected_loss, rel=1e-6)
    for want, got in zip(expected, found):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.device
def test_a_run_with_dropout_logs_it_and_exports_a_deterministic_model(tiny_corpus, tmp_path,
                                                                       device):
    train(tiny_corpus, tmp_path / "plain", tmp_path / "m1", 4, "--device", device)
    train(tiny_corpus, tmp_path / "dropout", tmp_path / "m2", 4, "--dropout", "0.2",
          "--device", device)
    assert read_log(tmp_path / "dropout")[1]["dropout"] == 0.2
    assert read_log(tmp_path / "dropout")[1]["embedding_dropout"] is None
    plain, dropped = weights(tmp_path / "plain"), weights(tmp_path / "dropout")
    assert not torch.equal(plain["model"]["embed_tokens.weight"],
                           dropped["model"]["embed_tokens.weight"])
    encoder = Encoder(ModelFiles.from_dir(tmp_path / "m2"))
    assert np.array_equal(encoder.encode(["Guten Morgen."], "de"),
                          encoder.encode(["Guten Morgen."], "de"))


def test_embedding_dropout_0_spares_a_one_layer_network_entirely(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "plain", tmp_path / "m1", 4)
    train(tiny_corpus, tmp_path / "spared", tmp_path / "m2", 4, "--dropout", "0.2",
          "--embedding-dropout", "0")
    assert read_log(tmp_path / "spared")[1]["embedding_dropout"] == 0.0
    plain, spared = weights(tmp_path / "plain"), weights(tmp_path / "spared")
    for name, tensor in plain["model"].items():
        assert torch.equal(tensor, spared["model"][name]), name


def test_a_run_in_chunks_trains_the_same_weights(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "whole", tmp_path / "m1", 4)
    train(tiny_corpus, tmp_path / "chunked", tmp_path / "m2", 4, "--chunk-sentences", "5")
    whole, chunked = weights(tmp_path / "whole"), weights(tmp_path / "chunked")
    assert chunked["config"]["chunk_sentences"] == 5
    assert whole["config"]["piece_sentences"] == CPU_PIECE_SENTENCES  # the CPU's default
    for name, tensor in whole["model"].items():
        assert torch.allclose(tensor, chunked["model"][name], atol=1e-5), name


def test_pieces_default_to_the_device():
    assert pieces_for(None, "cpu") == CPU_PIECE_SENTENCES
    assert pieces_for(None, "cuda") == pieces_for(None, "cuda:1") == 0
    assert pieces_for(5, "cuda") == 5 and pieces_for(0, "cpu") == 0


def test_a_run_in_length_pieces_trains_the_same_weights(tiny_corpus, tmp_path):
    train(tiny_corpus, tmp_path / "one", tmp_path / "m1", 4, "--piece-sentences", "0")
    train(tiny_corpus, tmp_path / "pieces", tmp_path / "m2", 4, "--piece-sentences", "3")
    one, pieces = weights(tmp_path / "one"), weights(tmp_path / "pieces")
    assert pieces["config"]["piece_sentences"] == 3
    assert read_log(tmp_path / "pieces")[1]["piece_sentences"] == 3
    assert read_log(tmp_path / "one")[1]["piece_sentences"] == 0
    for name, tensor in one["model"].items():
        assert torch.allclose(tensor, pieces["model"][name], atol=1e-5), name


def _last_step_state(work):
    saved = weights(work)
    model = BiLSTMEncoder(encoder_params(TrainConfig.from_dict(saved["config"])))
    model.load_state_dict(saved["model"])
    return {name: tensor.half() for name, tensor in model.official_state().items()}


def test_keep_last_exports_the_last_steps_weights(tiny_corpus, tmp_path):
    # a learning rate this high makes a later evaluation worse than the first one
    runs = {keep: train(tiny_corpus, tmp_path / keep, tmp_path / f"model-{keep}", 6,
                        "--eval-every", "2", "--lr", "0.5", "--keep", keep)
            for keep in ("best", "last")}
    assert "the last step's model in" in runs["last"].output
    errors = [r["average_error"] for r in read_log(tmp_path / "best") if "average_error" in r]
    assert errors[-1] > min(errors)
    for keep, equal in (("last", True), ("best", False)):
        exported = load_checkpoint(ModelFiles.from_dir(tmp_path / f"model-{keep}").encoder).state
        last = _last_step_state(tmp_path / keep)
        assert all(torch.equal(exported[name], t) for name, t in last.items()) == equal, keep


def skip_unless_bf16_runs(bf16: bool, device: str) -> None:
    if bf16 and device != "cpu":
        pytest.skip("--bf16 is refused off the CPU")
    if bf16 and not cpu_runs_bf16_lstms():
        pytest.skip("this CPU has no bfloat16 LSTM; the refusal is tested instead")


def test_bf16_run_exports_the_usual_checkpoint(tiny_corpus, tmp_path):
    skip_unless_bf16_runs(True, "cpu")
    train(tiny_corpus, tmp_path / "work", tmp_path / "model", 4, "--bf16")
    assert read_log(tmp_path / "work")[1]["bf16"] is True
    checkpoint = load_checkpoint(ModelFiles.from_dir(tmp_path / "model").encoder)
    assert all(t.dtype == torch.float16 for t in checkpoint.state.values())
    embeddings = Encoder(ModelFiles.from_dir(tmp_path / "model")).encode(["Guten Morgen."], "de")
    assert embeddings.shape == (1, 24) and np.isfinite(embeddings).all()


def test_bf16_off_the_cpu_is_refused_before_any_work(tiny_corpus, tmp_path):
    """On CUDA torch's autocast runs cuDNN's LSTMs in float16, not bfloat16 (seen on an H200)."""
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "model", 4, "--bf16",
                    "--device", "cuda")
    assert result.exit_code != 0 and not (tmp_path / "work").exists()
    assert "--bf16 runs on the CPU only" in result.output and "Traceback" not in result.output
    with pytest.raises(LaserError, match="CPU only"):
        Trainer(TrainConfig(bf16=True), None, {}, {}, tmp_path, device="cuda:0")


def test_bf16_on_a_cpu_without_bfloat16_lstms_is_refused_before_any_work(tiny_corpus, tmp_path):
    if cpu_runs_bf16_lstms():
        pytest.skip("this CPU runs bfloat16 LSTMs; the bf16 runs are tested instead")
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "model", 4, "--bf16")
    assert result.exit_code != 0 and not (tmp_path / "work").exists()
    assert "--bf16: torch cannot run LSTMs in bfloat16 on this CPU" in result.output
    assert "Traceback" not in result.output


def test_a_recipe_sets_the_settings_it_names_and_the_command_line_wins(tiny_corpus, tmp_path):
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps({"num_layers": 2, "hidden_size": 10, "lr": 0.01,
                                  "dropout": 0.2, "margin": 0.25}))
    train(tiny_corpus, tmp_path / "work", tmp_path / "model", 4, "--recipe", str(recipe),
          "--lr", "0.005")
    config = weights(tmp_path / "work")["config"]
    assert (config["num_layers"], config["dropout"], config["margin"]) == (2, 0.2, 0.25)
    assert (config["lr"], config["hidden_size"]) == (0.005, 12)  # given on the command line
    assert Encoder(ModelFiles.from_dir(tmp_path / "model")).encode(["Hallo."], "de").shape == (1, 24)


@pytest.mark.parametrize("text, message", [
    ('{"lr": 0.01,\n "hidden": 8}', "recipe.json: not training settings: hidden"),
    ('{"lr": 0.01,\n "steps" 8}', "recipe.json:2: not a JSON recipe"),
    ('[["lr", 0.01]]', "recipe.json: a recipe is a JSON object of training settings"),
    ('{"vocab_size": 500}', "recipe.json: vocab_size is not a setting of laser train"),
    (None, "--recipe v9: no such file, nor a shipped recipe (v2)"),
])
def test_a_bad_recipe_is_refused_in_one_line_before_any_work(tiny_corpus, tmp_path, text,
                                                             message):
    recipe = tmp_path / "recipe.json"
    if text is not None:
        recipe.write_text(text)
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "model", 4,
                    "--recipe", str(recipe) if text is not None else "v9")
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "work").exists()


def test_the_shipped_v2_recipe_is_the_candidates_step(tmp_path):
    command = main.get_command(None, "train")
    context = command.make_context("train", [str(tmp_path), "-o", str(tmp_path / "m"),
                                             "--work-dir", str(tmp_path / "w"), "--recipe", "v2",
                                             "--seed", "10"])
    settings = context.params
    assert (settings["layers"], settings["hidden_size"], settings["teacher"]) == (2, 288, "use+e5")
    assert (settings["batch_size"], settings["lr"], settings["steps"]) == (2048, 3e-4, 360)
    assert (settings["max_length"], settings["seed"]) == (128, 10)


def test_init_default_starts_from_the_shipped_model(tiny_corpus, tmp_path):
    shipped = ModelFiles.from_dir(shipped_model_dir())
    train(tiny_corpus, tmp_path / "w", tmp_path / "next", 1, "--init", "default",
          "--embed-dim", "256", "--hidden-size", "288", "--layers", "2", "--lr", "1e-9",
          "--eval-every", "100")
    init = read_log(tmp_path / "w")[0]
    assert init["stage"] == "init" and init["model"] == "laser-default-v2"
    assert init["from"] == str(shipped.encoder.parent) and init["layers_copied"] == 2
    assert (tmp_path / "w" / "bpe.fcodes").read_bytes() == shipped.codes.read_bytes()


def test_help_starts_from_the_shipped_model():
    result = CliRunner().invoke(main, ["train", "--help"])
    assert result.exit_code == 0
    assert "--init default --recipe v2" in result.output and "v2-candidate" not in result.output
