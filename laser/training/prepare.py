"""From tokenised pairs to training arrays: joint BPE learned on language-balanced word counts, the
LASER dictionary, and every side of every pair as token ids in memory-mappable arrays."""
from __future__ import annotations

from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from ..io.embeddings import save_array
from ..runtime.sequences import BOS, EOS, PAD, UNK, sentence_ids
from ..subwords.fastbpe import BPE
from ..subwords.bpe_learn import add_words, learn_codes, subword_counts, write_codes, write_vocab
from .corpus import PairFile, read_tokenized

SPECIAL_TOKENS = {"<s>": BOS, "<pad>": PAD, "</s>": EOS, "<unk>": UNK}
VOCAB_MIN_COUNT = 2


def language_weights(sizes: Mapping[str, int], alpha: float) -> dict[str, float]:
    """Sampling probabilities proportional to size**alpha (1: as the data, 0: uniform)."""
    raw = {lang: size ** alpha for lang, size in sizes.items() if size}
    total = sum(raw.values())
    return {lang: value / total for lang, value in raw.items()}


def _side_word_counts(pair_file: PairFile) -> tuple[Counter, Counter, int]:
    """Word counts of the foreign and of the English sides, and the pair count, in one pass."""
    source_counts, pivot_counts, pairs = Counter(), Counter(), 0
    for source, pivot in read_tokenized(pair_file.path):
        add_words(source_counts, source)
        add_words(pivot_counts, pivot)
        pairs += 1
    return source_counts, pivot_counts, pairs


def balanced_word_counts(pair_files: Sequence[PairFile], alpha: float, pivot_share: float,
                         workers: int = 1) -> tuple[Counter, Counter]:
    """Word counts as if each language's lines were drawn with probability ~ size**alpha (and
    the English sides made `pivot_share` of the draws), plus the plain counts of everything."""
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        per_language = dict(zip((pf.lang for pf in pair_files),
                                pool.map(_side_word_counts, pair_files)))
    sizes = {lang: n for lang, (_, _, n) in per_language.items()}
    weights = language_weights(sizes, alpha)
    total_pairs = sum(sizes.values())
    balanced: Counter = Counter()
    plain: Counter = Counter()
    pivot_counts: Counter = Counter()
    for lang, (source, pivot, size) in per_language.items():
        factor = (1 - pivot_share) * weights[lang] * total_pairs / size
        for word, count in source.items():
            balanced[word] += count * factor
        plain.update(source)
        pivot_counts.update(pivot)
    plain.update(pivot_counts)
    for word, count in pivot_counts.items():
        balanced[word] += count * pivot_share
    return Counter({w: max(1, round(c)) for w, c in balanced.items()}), plain


def learn_joint_bpe(pair_files: Sequence[PairFile], codes_path: Path, vocab_path: Path,
                    merges: int, alpha: float, pivot_share: float, workers: int = 1,
                    on_merge: Callable[[], None] | None = None) -> list[str]:
    """Write fastBPE codes and vocabulary for all languages jointly; returns the vocabulary."""
    balanced, plain = balanced_word_counts(pair_files, alpha, pivot_share, workers)
    write_codes(codes_path, learn_codes(balanced, merges, on_merge))
    bpe = BPE(codes_path, backend="python")
    return write_vocab(vocab_path, subword_counts(plain, bpe.apply_word), VOCAB_MIN_COUNT)


def make_dictionary(vocab: Sequence[str]) -> dict[str, int]:
    """The LASER dictionary: <s> <pad> </s> <unk>, then the BPE vocabulary in file order."""
    dictionary = dict(SPECIAL_TOKENS)
    for token in vocab:
        dictionary.setdefault(token, len(dictionary))
    return dictionary


def _save_sequences(path_stem: Path, sequences: list[list[int]]) -> None:
    offsets = np.zeros(len(sequences) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in sequences])
    tokens = np.fromiter((t for s in sequences for t in s), dtype=np.int32, count=int(offsets[-1]))
    save_array(f"{path_stem}.tokens.npy", tokens)
    save_array(f"{path_stem}.offsets.npy", offsets)


def _encode_file(pair_file: PairFile, codes: Path, vocab: Path, dictionary: dict[str, int],
                 out_dir: Path) -> str:
    bpe = BPE(codes, vocab)
    sources, pivots = [], []
    for source, pivot in read_tokenized(pair_file.path):
        sources.append(sentence_ids(dictionary, bpe.apply_line(source)))
        pivots.append(sentence_ids(dictionary, bpe.apply_line(pivot)))
    _save_sequences(out_dir / f"{pair_file.lang}.src", sources)
    _save_sequences(out_dir / f"{pair_file.lang}.eng", pivots)
    (out_dir / f"{pair_file.lang}.done").touch()
    return pair_file.lang


def encode_corpus(pair_files: Sequence[PairFile], codes: Path, vocab: Path,
                  dictionary: dict[str, int], out_dir: Path, workers: int = 1,
                  on_done: Callable[[], None] | None = None) -> None:
    """Token-id arrays of both sides of each language (languages already done are skipped)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    todo = [pf for pf in pair_files if not (out_dir / f"{pf.lang}.done").exists()]
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        jobs = [pool.submit(_encode_file, pf, codes, vocab, dictionary, out_dir) for pf in todo]
        for job in jobs:
            job.result()
            if on_done:
                on_done()
