"""Encoder speed at the full LASER1 size: ours (float32 and int8) next to the official algorithm.

Builds a random checkpoint with the shape of `bilstm.93langs.2018-12-26.pt` (73,640-token
dictionary, 320-d embeddings, 5-layer 512-unit BiLSTM, ~52M parameters) in a temporary
directory (never committed), BPE-splits real dev sentences with the parity fixture's codes, and
times in one run, alternating, best of --repeats:

* `official`   — the algorithm of the official `laser_encoders` SentenceEncoder: sentences
                 sorted longest first, batches of at most --max-tokens real tokens, right-padded,
                 packed through one stock multi-layer bidirectional `nn.LSTM`, max-pooled;
* `laser fp32` — our encoder as it runs by default on the CPU: length-sorted batches within a
                 padded-token budget, the float32 ONNX graph (`laser.runtime.onnx_graph`, one
                 bidirectional LSTM op per layer) in ONNX Runtime, one batch per core on one
                 thread each (its graph cache, $LASER_HOME/onnx, is pointed at the temporary
                 directory);
* `laser fp32, torch` — the same batches through our torch network (`runtime="torch"`: one
                 un-packed one-layer LSTM per direction), what runs on a GPU;
* `laser int8` — our encoder with `quantize="int8"`: the int8 ONNX graph (DynamicQuantizeLSTM,
                 per-channel, reduce-range) in ONNX Runtime, fed the same batches;
* `laser fp16` — our torch network in float16 (`quantize="fp16"`), for GPUs;
* the machine's sgemm GFLOP/s, and the share of the BiLSTM's FLOP limit each reaches (the
  limit: sgemm GFLOP/s divided by the FLOPs one token costs).

Each row's output is compared with the first row's (max |diff|, cosines). With `--device cuda`
the official algorithm and our torch runtimes run on the GPU (ONNX Runtime rows are CPU-only),
sgemm is the GPU's float32 matrix product, and `--no-tf32` turns off for the official algorithm
the TensorFloat-32 cuDNN kernels torch allows LSTMs by default (ours turn them off themselves).

    python bench/embed_speed.py [--sentences 3000] [--languages fra] [--repeats 3]
                                [--runtimes official,fp32,torch-fp32,int8]
    python bench/embed_speed.py --device cuda --runtimes official,torch-fp32,fp16
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.runtime.bilstm import load_checkpoint  # noqa: E402
from laser.runtime.sequences import PAD, UNK  # noqa: E402
from laser.encoder import Encoder  # noqa: E402
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


def dev_sentences(count: int, languages: list[str]) -> dict[str, list[str]]:
    """Foreign sides of the dev split, spread over a few languages."""
    per_language = count // len(languages)
    result = {}
    for code in languages:
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


def sgemm_gflops(device: str, size: int = 2048, repeats: int = 10) -> float:
    a, b = torch.randn(size, size, device=device), torch.randn(size, size, device=device)
    a @ b
    synchronize(device)
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    synchronize(device)
    return 2 * size ** 3 * repeats / (time.perf_counter() - start) / 1e9


def synchronize(device: str) -> None:
    if device != "cpu":
        torch.cuda.synchronize(device)


class OfficialLstm(nn.Module):
    """The official LASER BiLSTM encoder's forward pass: one stock multi-layer bidirectional
    nn.LSTM over a packed, right-padded, longest-first batch from zero states; padded steps
    (token == <pad>) set to -inf, then max-pooled over time."""

    def __init__(self, checkpoint):
        super().__init__()
        p = checkpoint.params
        self.padding_idx = p.get("padding_idx", PAD)
        self.embed = nn.Embedding(p["num_embeddings"], p["embed_dim"], padding_idx=self.padding_idx)
        self.lstm = nn.LSTM(p["embed_dim"], p["hidden_size"], p["num_layers"],
                            bidirectional=p.get("bidirectional", False))
        self.embed.load_state_dict({"weight": checkpoint.state["embed_tokens.weight"].float()})
        self.lstm.load_state_dict({k[5:]: v.float() for k, v in checkpoint.state.items()
                                   if k.startswith("lstm.")})

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        batch = tokens.size(0)
        x = self.embed(tokens).transpose(0, 1)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.tolist())
        layers = self.lstm.num_layers * (2 if self.lstm.bidirectional else 1)
        zeros = x.new_zeros(layers, batch, self.lstm.hidden_size)
        out, _ = self.lstm(packed, (zeros, zeros.clone()))
        out, _ = nn.utils.rnn.pad_packed_sequence(out, padding_value=0.0)
        padding = tokens.eq(self.padding_idx).t().unsqueeze(-1)
        if padding.any():
            out = out.masked_fill(padding, float("-inf"))
        return out.max(dim=0).values


def official_batches(lengths: np.ndarray, max_tokens: int) -> list[np.ndarray]:
    """The official SentenceEncoder's batches: sentences longest first (numpy quicksort), a batch
    closed when its real (unpadded) token count would pass max_tokens."""
    batches, current, tokens = [], [], 0
    for index in np.argsort(-lengths, kind="quicksort"):
        if current and tokens + lengths[index] > max_tokens:
            batches.append(np.array(current))
            current, tokens = [], 0
        current.append(index)
        tokens += lengths[index]
    if current:
        batches.append(np.array(current))
    return batches


def run_official(model: OfficialLstm, sequences: list[list[int]], max_tokens: int,
                 device: str = "cpu") -> np.ndarray:
    """The official SentenceEncoder.encode_sentences loop, rows restored to input order."""
    lengths = np.array([len(s) for s in sequences])
    order, rows = [], []
    with torch.no_grad():
        for batch in official_batches(lengths, max_tokens):
            tokens = torch.full((len(batch), lengths[batch[0]]), PAD, dtype=torch.long)
            for row, index in enumerate(batch):
                tokens[row, :lengths[index]] = torch.tensor(sequences[index])
            pooled = model(tokens.to(device), torch.from_numpy(lengths[batch]))
            rows.append(pooled.cpu().numpy())
            order.extend(batch)
    return np.vstack(rows)[np.argsort(order, kind="quicksort")]


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


RUNTIMES = ("official", "fp32", "torch-fp32", "int8", "fp16")
CPU_ONLY = ("fp32", "int8")
ROW_NAMES = {"official": "official SentenceEncoder algorithm (fp32)",
             "fp32": "laser (ours, fp32: onnxruntime, the CPU default)",
             "torch-fp32": "laser (ours, fp32, --runtime torch)",
             "int8": "laser (ours, --quantize int8: onnxruntime int8)",
             "fp16": "laser (ours, --quantize fp16: torch float16)"}


def load_runners(directory: Path, args: argparse.Namespace) -> tuple[Encoder, dict, dict]:
    """Our float32 encoder (for preprocessing), a runner per asked runtime (ids -> vectors) and
    the checkpoint's params."""
    checkpoint_path = build_checkpoint(directory)
    files = ModelFiles(checkpoint_path, directory / "bpe.fcodes", directory / "bpe.fvocab")
    encoder = Encoder(files, max_tokens=args.max_tokens)
    checkpoint = load_checkpoint(checkpoint_path)
    on_device = partial(Encoder, files, max_tokens=args.max_tokens, device=args.device)
    makers = {
        "official": lambda: partial(run_official, OfficialLstm(checkpoint).eval().to(args.device),
                                    max_tokens=args.max_tokens, device=args.device),
        "fp32": lambda: encoder.encode_ids,
        "torch-fp32": lambda: on_device(runtime="torch").encode_ids,
        "int8": lambda: Encoder(files, max_tokens=args.max_tokens, quantize="int8").encode_ids,
        "fp16": lambda: on_device(quantize="fp16").encode_ids,
    }
    return encoder, {name: makers[name]() for name in args.runtimes}, checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=3000, help="spread over --languages")
    parser.add_argument("--languages", default=",".join(LANGUAGES),
                        help="dev languages (ISO 639-3), e.g. fra")
    parser.add_argument("--max-tokens", type=int, default=12000, help="batch budget of both")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3,
                        help="alternating runs of each encoder; the best is kept")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES[:4]),
                        help=f"comma-separated subset of {','.join(RUNTIMES)}; the first is "
                             "the reference of the others' outputs")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (official and torch rows)")
    parser.add_argument("--no-tf32", action="store_true",
                        help="no TensorFloat-32 in cuDNN's LSTMs (torch allows it by default)")
    args = parser.parse_args()
    args.runtimes = args.runtimes.split(",")
    unknown = set(args.runtimes) - set(RUNTIMES)
    if unknown:
        parser.error(f"unknown runtimes {', '.join(sorted(unknown))}; choose from {RUNTIMES}")
    if args.device != "cpu" and set(args.runtimes) & set(CPU_ONLY):
        parser.error(f"{', '.join(CPU_ONLY)} run in ONNX Runtime on the CPU only")
    torch.backends.cudnn.allow_tf32 = not args.no_tf32
    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # what ONNX Runtime sessions read

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LASER_HOME"] = tmp  # the int8 graph of a throw-away checkpoint
        encoder, runners, checkpoint = load_runners(Path(tmp), args)
    corpus = dev_sentences(args.sentences, args.languages.split(","))
    bpe_lines, prep_seconds = [], 0.0
    for code, sentences in corpus.items():
        lines, seconds = timed(lambda s=sentences, c=code: encoder.apply_bpe(encoder.tokenize(s, c)))
        bpe_lines += lines
        prep_seconds += seconds
    sequences = [encoder.token_ids(line) for line in bpe_lines]
    n_sentences, n_tokens = len(sequences), sum(map(len, sequences))
    unknown = sum(token == UNK for s in sequences for token in s)
    per_token = flops_per_token(checkpoint.params)

    runs = {ROW_NAMES[name]: run for name, run in runners.items()}
    best = dict.fromkeys(runs, float("inf"))
    outputs, gflops = {}, 0.0
    for _ in range(args.repeats):  # alternate and keep the best, so a busy moment hurts none
        gflops = max(gflops, sgemm_gflops(args.device))
        for name, run in runs.items():
            outputs[name], seconds = timed(run, sequences)
            best[name] = min(best[name], seconds)
    print(f"machine: {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, {device_name(args)}, sgemm {gflops:.1f} GFLOP/s")
    print(f"model: LASER1 shape, {sum(t.numel() for t in checkpoint.state.values()) / 1e6:.1f}M "
          f"parameters, {per_token / 1e6:.1f} MFLOP per token")
    print(f"input: {n_sentences} dev sentences ({', '.join(corpus)}), {n_tokens} tokens "
          f"incl. </s>, {unknown} <unk>; preprocessing+BPE {n_sentences / prep_seconds:.0f} sent/s")
    reference_name = ROW_NAMES[args.runtimes[0]]
    reference = outputs[reference_name]
    for name, output in outputs.items():
        if name != reference_name:
            cosine = row_cosines(output, reference)
            print(f"{name} vs {args.runtimes[0]}: max |diff| "
                  f"{np.abs(output - reference).max():.2e}, median cosine "
                  f"{np.median(cosine):.5f}, min {cosine.min():.5f}")
    print()
    print("| encoder | seconds | sentences/s | tokens/s | GFLOP/s (fp32 equiv.) | share of sgemm "
          f"| vs {args.runtimes[0]} |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    baseline = best[next(iter(runs))]
    for name, seconds in best.items():
        achieved = n_tokens * per_token / seconds / 1e9
        print(f"| {name} | {seconds:.2f} | {n_sentences / seconds:.1f} | {n_tokens / seconds:.0f} "
              f"| {achieved:.1f} | {achieved / gflops:.0%} | {baseline / seconds:.2f}x |")


def device_name(args: argparse.Namespace) -> str:
    if args.device == "cpu":
        return "cpu"
    tf32 = "off" if args.no_tf32 else "on"
    return f"{torch.cuda.get_device_name(args.device)} (cuDNN TF32 {tf32})"


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


if __name__ == "__main__":
    main()
