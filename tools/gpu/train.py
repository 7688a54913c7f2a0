"""On the leased GPU machine: unpack the training data (`pack.py`), then train one variant of
a recipe (TrainConfig fields in JSON; recipe-ga.json is run GA's) from the packed --init model
for a wall-clock budget, keeping the best-by-dev export. The library's Trainer does the work;
only the dev xsim is computed in torch, since faiss's wheel does not fit beside the data. See
docs/experiments/training-log.md, "On a leased GPU with a 64 MiB transfer limit".

    python3 tools/gpu/train.py unpack .gpu/data /tmp/gw
    python3 tools/gpu/train.py run .gpu/data /tmp/gw B --dropout 0.1 --seconds 360
"""
from __future__ import annotations

import argparse
import json
import lzma
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import laser.training.trainer as trainer_module
from laser.subwords.fastbpe import read_vocab
from laser.training.batches import BatchSampler, LanguagePairs, TokenArrays, dev_sets, prefetched
from laser.errors import LaserError
from laser.training.config import TrainConfig, read_recipe, recipe_file
from laser.training.distill import TeacherTargets
from laser.training.prepare import make_dictionary
from laser.training.run import largest_languages, work_bpe_files
from laser.training.topics import TopicGrouping
from laser.training.trainer import Trainer, embed_ids, export_model

RECIPE = Path(__file__).with_name("recipe-ga.json")
CANDIDATE = "laser-candidate"  # the exported file name: a shipped model gets a versioned one
PROBE_STEPS = 30  # steps timed to fit the run's length (and its cosine schedule) to the budget
EVALUATIONS = 30


def torch_dev_errors(model, dev, device) -> dict[str, tuple[float, float]]:
    """The trainer's dev xsim (nearest by cosine, both directions), in torch."""
    errors = {}
    for lang, (sources, pivots) in dev.items():
        x = F.normalize(torch.from_numpy(embed_ids(model, sources, device)).float(), dim=1)
        y = F.normalize(torch.from_numpy(embed_ids(model, pivots, device)).float(), dim=1)
        similarity, truth = x @ y.T, torch.arange(len(x))
        errors[lang] = ((similarity.argmax(1) != truth).float().mean().item(),
                        (similarity.argmax(0) != truth).float().mean().item())
    return errors


def save_ids(folder: Path, stem: str, tokens: np.ndarray, lengths: np.ndarray) -> None:
    np.save(folder / f"{stem}.tokens.npy", tokens.astype(np.int32))
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    np.save(folder / f"{stem}.offsets.npy", offsets)


def unpack(packed: Path, work: Path) -> None:
    """WORK/ids-train and WORK/ids-dev in the layout `laser train` writes."""
    index = json.loads((packed / "index.json").read_text())
    tokens = np.frombuffer(lzma.open(packed / "tokens.u16.xz").read(), dtype=np.uint16)
    lengths = np.frombuffer(lzma.open(packed / "lengths.u16.xz").read(), dtype=np.uint16)
    folder = work / "ids-train"
    folder.mkdir(parents=True, exist_ok=True)
    token_at = length_at = 0
    for lang in index["languages"]:
        for side in ("src", "eng"):
            sizes = lengths[length_at:length_at + index["pairs"][lang]].astype(np.int64)
            save_ids(folder, f"{lang}.{side}", tokens[token_at:token_at + sizes.sum()], sizes)
            token_at, length_at = token_at + int(sizes.sum()), length_at + len(sizes)
    assert (token_at, length_at) == (len(tokens), len(lengths)), "the packed streams disagree"
    (work / "ids-dev").mkdir(exist_ok=True)
    dev = np.load(work / "dev.npz")
    for key in (k for k in dev.files if k.endswith(".tokens")):
        stem = key[: -len(".tokens")]
        save_ids(work / "ids-dev", stem, dev[key], dev[f"{stem}.lengths"].astype(np.int64))
    print(f"unpacked {len(index['languages'])} languages, {len(tokens)} tokens", flush=True)


def language_pairs(folder: Path, languages, rows=None) -> list[LanguagePairs]:
    return [LanguagePairs(lang, TokenArrays.load(folder / f"{lang}.src"),
                          TokenArrays.load(folder / f"{lang}.eng"),
                          None if rows is None else rows[lang].astype(np.int64))
            for lang in languages]


def recipe(settings: dict, dictionary: dict, init: Path, teacher: str, args) -> TrainConfig:
    """The recipe's settings, with this variant's dropout, lr, cut and pieces where given,
    and the packed teacher."""
    values = {**settings, "teacher": teacher}
    values.update({name: getattr(args, name)
                   for name in ("dropout", "embedding_dropout", "lr", "max_length",
                                "piece_sentences")
                   if getattr(args, name) is not None})
    return TrainConfig.from_dict({**values, "vocab_size": len(dictionary), "steps": 10 ** 9,
                                  "init": str(init)})


def run(args, settings: dict) -> None:
    torch.set_num_threads(args.threads)
    trainer_module.dev_errors = torch_dev_errors
    work, index = args.work, json.loads((args.packed / "index.json").read_text())
    pairs = language_pairs(work / "ids-train", index["languages"], np.load(work / "rows.npz"))
    teacher = json.loads((work / "teacher.json").read_text())
    targets = TeacherTargets(np.load(work / "teacher" / f"{teacher['teacher']}.f16.npy",
                                     mmap_mode="r"), teacher["blocks"])
    codes, vocab = work_bpe_files(work)
    dictionary = make_dictionary(read_vocab(vocab))
    config = recipe(settings, dictionary, args.packed / "init", teacher["teacher"], args)
    sampler = BatchSampler(pairs, config.batch_size, config.alpha, config.seed, config.max_length,
                           config.pool_batches,
                           TopicGrouping(np.load(work / "topics.npy"), config.topic_band))
    dev_languages = [path.name[: -len(".src.tokens.npy")]
                     for path in (work / "ids-dev").glob("*.src.tokens.npy")]
    evaluated = largest_languages(pairs, dev_languages, 20)
    dev = dev_sets(language_pairs(work / "ids-dev", evaluated), 1000)
    run_dir, output = work / f"run-{args.name}", work / f"out-{args.name}"
    run_dir.mkdir(exist_ok=True)
    trainer = Trainer(config, sampler, dev, dictionary, run_dir, args.device, False, targets)
    print(f"{args.name}: start dev {100 * trainer.evaluate(stage='start'):.2f}%", flush=True)

    def export(model) -> None:
        export_model(model, dictionary, codes, vocab, output, CANDIDATE)

    train_for(trainer, args.seconds, export, args.name)
    (work / f"best-{args.name}.txt").write_text(f"{trainer.best_error}\n")


def train_for(trainer: Trainer, seconds: float, export, name: str) -> None:
    """Time the first PROBE_STEPS steps, fit config.steps (the cosine schedule's length) to
    `seconds`, then let the trainer run to it, evaluating about EVALUATIONS times."""
    config, started = trainer.config, time.time()
    with closing(prefetched(trainer.sampler, trainer.step)) as batches:
        for _ in range(PROBE_STEPS):
            trainer.train_step(next(batches))
    per_step = (time.time() - started) / PROBE_STEPS
    left = seconds - (time.time() - started)
    config.steps = trainer.step + max(1, int(0.9 * left / per_step))
    config.eval_every = max(20, config.steps // EVALUATIONS)
    config.checkpoint_every = config.steps
    print(f"{name}: {config.batch_size / per_step:.0f} pairs/s, {config.steps} steps",
          flush=True)
    trainer.run(export)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("unpack", "run"):
        command = commands.add_parser(name)
        command.add_argument("packed", type=Path)
        command.add_argument("work", type=Path)
    variant = commands.choices["run"]
    variant.add_argument("name")
    variant.add_argument("--recipe", default=str(RECIPE),
                         help="A recipe file, or the name of a shipped one (v2).")
    variant.add_argument("--dropout", type=float)
    variant.add_argument("--embedding-dropout", type=float)
    variant.add_argument("--lr", type=float)
    variant.add_argument("--max-length", type=int, help="Cut training sentences to this many tokens.")
    variant.add_argument("--piece-sentences", type=int,
                         help="Sentences per length-sorted forward piece; 0: the whole batch.")
    variant.add_argument("--seconds", type=float, default=360)
    variant.add_argument("--threads", type=int, default=5)
    variant.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if args.command == "unpack":
        unpack(args.packed, args.work)
        return
    try:
        settings = read_recipe(recipe_file(args.recipe))
    except LaserError as error:
        parser.error(str(error))
    run(args, settings)


if __name__ == "__main__":
    main()
