"""Encoder speed at the full LASER1 size: our batching and kernels next to a plain reference.

Builds a random checkpoint with the shape of `bilstm.93langs.2018-12-26.pt` (73,640-token
dictionary, 320-d embeddings, 5-layer 512-unit BiLSTM, ~52M parameters) in a temporary
directory (never committed), BPE-splits real dev sentences with the parity fixture's codes, and
times in one run:

* `laser`      — our encoder (length-sorted batches, per-direction un-packed LSTM kernels);
* `reference`  — unsorted batches of fixed size, packed, through one stock bidirectional
                 `nn.LSTM` (how a straightforward port of the official encoder runs);
* the machine's sgemm GFLOP/s, and the share of the BiLSTM's FLOP limit each reaches (the
  limit: sgemm GFLOP/s divided by the FLOPs one token costs).

    python bench/embed_speed.py [--sentences 3000] [--threads N] [--repeats 2]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.models.bilstm import load_checkpoint  # noqa: E402
from laser.models.sequences import PAD, UNK  # noqa: E402
from laser.models.encoder import Encoder  # noqa: E402
from laser.models.files import ModelFiles  # noqa: E402

SHARED = ROOT.parent / "shared"
FIXTURE_MODEL = SHARED / "fixtures/parity/public/model"
LASER1 = dict(num_embeddings=73640, embed_dim=320, hidden_size=512, num_layers=5,
              bidirectional=True, left_pad=True, padding_idx=1, padding_value=0.0)
LANGUAGES = ("deu", "fra", "spa", "rus", "ita", "por", "pol", "tur")


def build_checkpoint(directory: Path) -> Path:
    """A random LASER1-shaped checkpoint whose dictionary holds the fixture's BPE vocabulary."""
    torch.manual_seed(0)
    vocab = [line.split(" ")[0] for line in
             (FIXTURE_MODEL / "bpe.fvocab").read_text(encoding="utf-8").splitlines()]
    tokens = ["<s>", "<pad>", "</s>", "<unk>"] + vocab
    tokens += [f"filler{i}" for i in range(LASER1["num_embeddings"] - len(tokens))]
    lstm = nn.LSTM(LASER1["embed_dim"], LASER1["hidden_size"], LASER1["num_layers"],
                   bidirectional=True)
    embed = nn.Embedding(LASER1["num_embeddings"], LASER1["embed_dim"], padding_idx=PAD)
    state = {"embed_tokens.weight": embed.weight.detach()}
    state.update({f"lstm.{k}": v.detach() for k, v in lstm.state_dict().items()})
    path = directory / "laser1-random.pt"
    torch.save({"params": LASER1, "model": state,
                "dictionary": {token: i for i, token in enumerate(tokens)}}, path)
    for suffix in ("fcodes", "fvocab"):
        (directory / f"bpe.{suffix}").write_bytes((FIXTURE_MODEL / f"bpe.{suffix}").read_bytes())
    return path


def dev_sentences(count: int) -> dict[str, list[str]]:
    """Foreign sides of the dev split, spread over a few languages."""
    per_language = count // len(LANGUAGES)
    result = {}
    for code in LANGUAGES:
        with gzip.open(SHARED / f"data/corpus/dev/{code}-eng.tsv.gz", "rt", encoding="utf-8") as f:
            result[code] = [line.split("\t")[0] for line in itertools.islice(f, per_language)]
    return result


def flops_per_token(params: dict) -> float:
    hidden, total, width = params["hidden_size"], 0, params["embed_dim"]
    directions = 2 if params["bidirectional"] else 1
    for _ in range(params["num_layers"]):
        total += directions * 2 * 4 * hidden * (width + hidden)
        width = directions * hidden
    return float(total)


def sgemm_gflops(size: int = 2048, repeats: int = 10) -> float:
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * size ** 3 * repeats / (time.perf_counter() - start) / 1e9


class Reference(nn.Module):
    """A stock bidirectional nn.LSTM over packed, unsorted fixed-size batches, max-pooled."""

    def __init__(self, checkpoint):
        super().__init__()
        p = checkpoint.params
        self.embed = nn.Embedding(p["num_embeddings"], p["embed_dim"], padding_idx=PAD)
        self.lstm = nn.LSTM(p["embed_dim"], p["hidden_size"], p["num_layers"], bidirectional=True)
        self.embed.load_state_dict({"weight": checkpoint.state["embed_tokens.weight"]})
        self.lstm.load_state_dict({k[5:]: v for k, v in checkpoint.state.items()
                                   if k.startswith("lstm.")})

    @torch.inference_mode()
    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens.t())
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, padding_value=float("-inf"))
        return out.max(dim=0).values


def run_reference(model: Reference, sequences: list[list[int]], batch_size: int) -> np.ndarray:
    rows = []
    for start in range(0, len(sequences), batch_size):
        batch = sequences[start:start + batch_size]
        lengths = torch.tensor([len(s) for s in batch])
        tokens = torch.full((len(batch), int(lengths.max())), PAD, dtype=torch.long)
        for i, s in enumerate(batch):
            tokens[i, :len(s)] = torch.tensor(s)
        rows.append(model(tokens, lengths).numpy())
    return np.concatenate(rows)


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--reference-batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs; best is kept")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        checkpoint_path = build_checkpoint(Path(tmp))
        files = ModelFiles(checkpoint_path, Path(tmp) / "bpe.fcodes", Path(tmp) / "bpe.fvocab")
        encoder = Encoder(files)
        checkpoint = load_checkpoint(checkpoint_path)
    corpus = dev_sentences(args.sentences)
    bpe_lines, prep_seconds = [], 0.0
    for code, sentences in corpus.items():
        lines, seconds = timed(lambda s=sentences, c=code: encoder.apply_bpe(encoder.tokenize(s, c)))
        bpe_lines += lines
        prep_seconds += seconds
    sequences = [encoder.token_ids(line) for line in bpe_lines]
    n_sentences, n_tokens = len(sequences), sum(map(len, sequences))
    unknown = sum(token == UNK for s in sequences for token in s)
    per_token = flops_per_token(checkpoint.params)

    reference_model = Reference(checkpoint)
    ours_s = ref_s = gflops = 0.0
    for _ in range(args.repeats):  # alternate and keep the best, so a busy moment hurts neither
        gflops = max(gflops, sgemm_gflops())
        ours, seconds = timed(encoder.encode_ids, sequences)
        ours_s = min(ours_s or seconds, seconds)
        ref, seconds = timed(run_reference, reference_model, sequences, args.reference_batch)
        ref_s = min(ref_s or seconds, seconds)
    agreement = float(np.abs(ours - ref).max())

    print(f"machine: {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, sgemm {gflops:.1f} GFLOP/s")
    print(f"model: LASER1 shape, {sum(p.numel() for p in encoder.model.parameters()) / 1e6:.1f}M "
          f"parameters, {per_token / 1e6:.1f} MFLOP per token")
    print(f"input: {n_sentences} dev sentences ({', '.join(corpus)}), {n_tokens} tokens "
          f"incl. </s>, {unknown} <unk>; preprocessing+BPE {n_sentences / prep_seconds:.0f} sent/s")
    print(f"max |ours - reference| = {agreement:.2e}")
    print()
    print("| encoder | seconds | sentences/s | tokens/s | GFLOP/s | share of sgemm |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, seconds in (("laser (ours)", ours_s),
                          (f"reference (unsorted, batch {args.reference_batch}, packed)", ref_s)):
        achieved = n_tokens * per_token / seconds / 1e9
        print(f"| {name} | {seconds:.2f} | {n_sentences / seconds:.1f} | {n_tokens / seconds:.0f} "
              f"| {achieved:.1f} | {achieved / gflops:.0%} |")
    print(f"\nspeed-up over the reference: {ref_s / ours_s:.2f}x")


if __name__ == "__main__":
    main()
