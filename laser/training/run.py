"""`laser train` end to end, every stage cached in a work folder so an interrupted run resumes:
tokenise (the inference preprocessing) -> joint BPE -> token ids -> train -> export."""
from __future__ import annotations

import json
import sys
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

import torch
from tqdm import tqdm

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..models.files import ModelFiles, sha256_of
from ..models.spaces import write_declaration
from ..subwords.fastbpe import read_vocab
from .batches import BatchSampler, LanguagePairs, dev_sets, load_pairs
from .corpus import PairFile, find_pair_files, tokenize_corpus
from .prepare import encode_corpus, learn_joint_bpe, make_dictionary
from .config import BPEConfig, TrainConfig
from .distill import TEACHER_DIR, TeacherTargets, prepare_distillation
from .teachers import Teacher, cache_stem
from .topics import TopicGrouping, topic_labels
from .trainer import Trainer, export_model
from .warm_start import check_growth, copy_bpe, init_files


@dataclass(frozen=True)
class Prepared:
    codes: Path
    vocab: Path
    dictionary: dict[str, int]
    train_languages: list[str]
    dev_languages: list[str]
    train_files: list[PairFile]  # the raw pair files (the teacher reads their English sides)


def corpus_splits(corpus: Path, dev: Optional[Path]) -> tuple[Path, Optional[Path]]:
    """`corpus/train` and `corpus/dev` when the folder has them, else the folder itself."""
    if (corpus / "train").is_dir():
        return corpus / "train", dev or ((corpus / "dev") if (corpus / "dev").is_dir() else None)
    return corpus, dev


def _stage_bar(description: str, total: int) -> tqdm:
    return tqdm(total=total, desc=description, file=sys.stderr, disable=not sys.stderr.isatty())


def _tokenized(files: list[PairFile], cache: Path, workers: int) -> list[PairFile]:
    with _stage_bar(f"tokenising {cache.name}", len(files)) as bar:
        return tokenize_corpus(files, cache, workers, bar.update)


def _check_recorded(path: Path, values: dict) -> None:
    """Record the preparation settings; a work folder prepared otherwise is refused."""
    if path.exists():
        recorded = json.loads(path.read_text())
        if recorded != values:
            raise LaserError(f"{path.parent}: prepared with other settings ({recorded}); "
                             "use another --work-dir")
    else:
        with atomic_text_output(path) as f:
            f.write(json.dumps(values, indent=1))


def work_bpe_files(work: Path) -> tuple[Path, Path]:
    """The BPE codes and vocabulary of a work folder (learned, or copied from --init)."""
    return work / "bpe.fcodes", work / "bpe.fvocab"


def prepare(train_dir: Path, dev_dir: Optional[Path], work: Path, bpe: BPEConfig,
            languages: Optional[Sequence[str]], workers: int,
            init: Optional[ModelFiles] = None) -> Prepared:
    """Tokenise, BPE-split and map to ids once (cached in `work`); the BPE is learned, or taken
    from `init` (`laser train --init`) unless `bpe.grow` asks for a larger one."""
    work.mkdir(parents=True, exist_ok=True)
    train_files = find_pair_files(train_dir, languages)
    copied = init is not None and not bpe.grow
    bpe_settings = ({"bpe_codes_sha256": sha256_of(init.codes),
                     "bpe_vocab_sha256": sha256_of(init.vocab)} if copied else
                    {"merges": bpe.merges, "alpha": bpe.alpha, "pivot_share": bpe.pivot_share})
    _check_recorded(work / "prepare.json",
                    {"languages": [pf.lang for pf in train_files], **bpe_settings})
    train_tok = _tokenized(train_files, work / "tok-train", workers)
    dev_tok = []
    if dev_dir is not None:
        wanted = {pf.lang for pf in train_files}
        dev_tok = _tokenized([pf for pf in find_pair_files(dev_dir) if pf.lang in wanted],
                             work / "tok-dev", workers)
    codes, vocab = work_bpe_files(work)
    if not (codes.exists() and vocab.exists()):
        if copied:
            copy_bpe(init, codes, vocab)
        else:
            with _stage_bar("learning BPE merges", bpe.merges) as bar:
                learn_joint_bpe(train_tok, codes, vocab, bpe.merges, bpe.alpha, bpe.pivot_share,
                                workers, lambda: bar.update(1))
    dictionary = make_dictionary(read_vocab(vocab))
    for files, folder in ((train_tok, "ids-train"), (dev_tok, "ids-dev")):
        with _stage_bar(f"token ids {folder}", len(files)) as bar:
            encode_corpus(files, codes, vocab, dictionary, work / folder, workers,
                          lambda: bar.update(1))
    return Prepared(codes, vocab, dictionary, [pf.lang for pf in train_tok],
                    [pf.lang for pf in dev_tok], train_files)


def largest_languages(pairs: Sequence[LanguagePairs], candidates: Sequence[str],
                      count: int) -> list[str]:
    """The `count` candidate languages with the most training pairs."""
    wanted = set(candidates)
    ranked = sorted((p for p in pairs if p.lang in wanted), key=lambda p: -len(p))
    return [p.lang for p in ranked[:count]]


def _with_teacher(pairs: list[LanguagePairs], prepared: Prepared, work: Path,
                  config: TrainConfig, teacher: Optional[Teacher], threads: int,
                  progress: bool) -> tuple[list[LanguagePairs], Optional[TeacherTargets]]:
    """The pairs with their teacher-cache rows and the targets, when config.teacher is set."""
    if not config.teacher:
        return pairs, None
    from .teachers import make_teacher
    teacher = teacher or make_teacher(config.teacher, threads)
    if teacher.name != config.teacher:
        raise LaserError(f"teacher {teacher.name!r} given for --teacher {config.teacher}")
    distillation = prepare_distillation(teacher, prepared.train_files, work, progress)
    pairs = [replace(p, teacher_rows=distillation.rows[p.lang]) for p in pairs]
    for p in pairs:
        if len(p.teacher_rows) != len(p):
            raise LaserError(f"{p.lang}: {len(p.teacher_rows)} English sentences for "
                             f"{len(p)} token-id pairs; use another --work-dir")
    return pairs, distillation.targets


def _topic_grouping(targets: Optional[TeacherTargets], work: Path,
                    config: TrainConfig) -> Optional[TopicGrouping]:
    """The teacher's clusters of the English sides, when config.topic_clusters asks for them."""
    if not config.topic_clusters or targets is None:
        return None
    labels = topic_labels(targets, config.topic_clusters, config.seed, work / TEACHER_DIR,
                          cache_stem(config.teacher))
    return TopicGrouping(labels, config.topic_band)


def train(corpus: Path, output: Path, work: Path, config: TrainConfig, bpe: BPEConfig,
          languages: Optional[Sequence[str]] = None, dev_dir: Optional[Path] = None,
          eval_languages: int = 20, dev_limit: Optional[int] = 1000, workers: int = 1,
          device: str = "cpu", name: str = "laser", progress: Optional[bool] = None,
          teacher: Optional[Teacher] = None, teacher_threads: int = 1,
          keep_last: bool = False) -> Trainer:
    """Prepare (or reuse) the data in `work`, train to config.steps, export the best (or with
    `keep_last`, the last step's model) to `output`. With config.teacher set, distil from it
    (`teacher`: an instance to use instead of the one `teachers.make_teacher` builds by that
    name)."""
    if config.topic_clusters and not config.teacher:
        raise LaserError("--topic-clusters needs a --teacher (its embeddings are clustered)")
    if config.topic_clusters and config.topic_band > config.pool_batches:
        raise LaserError(f"--topic-band {config.topic_band} is more than --pool-batches "
                         f"{config.pool_batches}: a band is cut from one pool")
    train_dir, dev_dir = corpus_splits(corpus, dev_dir)
    if dev_dir is None:
        warn_no_dev("the corpus has no dev/ folder and no --dev was given")
    init = init_files(config.init) if config.init else None
    if bpe.grow:
        check_growth(init, bpe.merges)
    prepared = prepare(train_dir, dev_dir, work, bpe, languages, workers, init)
    config.vocab_size = len(prepared.dictionary)
    show = sys.stderr.isatty() if progress is None else progress
    pairs, targets = _with_teacher(load_pairs(work / "ids-train", prepared.train_languages),
                                   prepared, work, config, teacher, teacher_threads, show)
    sampler = BatchSampler(pairs, config.batch_size, config.alpha, config.seed, config.max_length,
                           config.pool_batches, _topic_grouping(targets, work, config))
    evaluated = largest_languages(pairs, prepared.dev_languages, eval_languages)
    dev = dev_sets(load_pairs(work / "ids-dev", evaluated), dev_limit) if evaluated else {}
    if not dev and dev_dir is not None:
        warn_no_dev(f"{dev_dir} has no pairs of the trained languages")
    if not dev:
        config.eval_every = config.steps  # no dev data: export at the end
    trainer = Trainer(config, sampler, dev, prepared.dictionary, work, device, progress, targets)

    def export(model) -> None:
        export_model(model, prepared.dictionary, prepared.codes, prepared.vocab, output, name)
        declare_teacher_space(output, config.teacher, model.output_dim, targets)

    trainer.run((lambda model: None) if keep_last else export)  # keep_last: no best to write
    if keep_last or not dev:
        export(trainer.model)
    return trainer


def warn_no_dev(reason: str) -> None:
    """Say once, before training, that no dev evaluation will choose the exported model."""
    warnings.warn(f"no dev evaluation: {reason}; the last step's model is exported",
                  stacklevel=3)


def declare_teacher_space(output: Path, teacher: str, student_dim: int,
                          targets: Optional[TeacherTargets]) -> None:
    """A student distilled from one LASER-format model at that model's width (so with no
    projection head between them) is trained into its teacher's embedding space: its model.json
    says so, and commands then let its vectors meet the teacher's (laser.models.spaces)."""
    from .teachers import laser_teacher_space
    space = laser_teacher_space(teacher) if targets is not None else None
    if space and student_dim == targets.dim:
        write_declaration(output, output.name, space)


def set_threads(threads: Optional[int]) -> None:
    if threads:
        torch.set_num_threads(threads)
