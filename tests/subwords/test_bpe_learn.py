"""BPE learning: the merge order, equality with a naive learner, and files fastBPE itself reads."""
import random
from collections import Counter

import pytest

from laser.subwords.fastbpe import BPE, END_OF_WORD, fastbpe_available
from laser.subwords.bpe_learn import (count_words, learn_codes, subword_counts, write_codes,
                             write_vocab)


def naive_codes(word_counts, merges):
    """Recount every pair after each merge: slow, obviously right."""
    words = {w: list(w[:-1]) + [w[-1] + END_OF_WORD] for w in word_counts}
    codes = []
    for _ in range(merges):
        pairs = Counter()
        for word, symbols in words.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += word_counts[word]
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        codes.append((best[0], best[1], pairs[best]))
        for word, symbols in words.items():
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            words[word] = out
    return codes


def test_classic_example_merge_order():
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    codes = learn_codes(counts, 4)
    assert codes[:3] == [("e", "s", 9), ("es", "t</w>", 9), ("l", "o", 7)]


def test_incremental_learner_equals_naive_one():
    rng = random.Random(3)
    alphabet = "abcdeéß語"
    counts = Counter()
    for _ in range(400):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        counts[word] += rng.randint(1, 20)
    assert learn_codes(counts, 300) == naive_codes(counts, 300)


def test_stops_when_no_pair_repeats():
    assert learn_codes({"abc": 1, "xyz": 1}, 10) == []
    assert learn_codes({"aaaa": 1}, 10) == [("a", "a", 2)]


@pytest.mark.parametrize("backend", ["python", "fastbpe"])
def test_written_codes_and_vocab_apply_in_both_backends(tmp_path, backend):
    if backend == "fastbpe" and not fastbpe_available():
        pytest.skip("fastBPE not installed")
    lines = ["the lowest newer widest", "the newest lower", "new wide low"] * 5
    counts = count_words(lines)
    codes_path, vocab_path = tmp_path / "c.fcodes", tmp_path / "c.fvocab"
    write_codes(codes_path, learn_codes(counts, 12))
    bpe = BPE(codes_path, backend=backend)
    tokens = write_vocab(vocab_path, subword_counts(counts, bpe.apply_word))
    applied = BPE(codes_path, vocab_path, backend=backend).apply_line("the newest widest")
    assert applied.replace("@@ ", "") == "the newest widest"
    assert set(applied.split()) <= set(tokens)
    vocab_counts = [int(line.split()[1]) for line in vocab_path.read_text().splitlines()]
    assert vocab_counts == sorted(vocab_counts, reverse=True)
    assert sum(vocab_counts) >= sum(counts.values())


def test_vocab_min_count_drops_rare_tokens(tmp_path):
    tokens = write_vocab(tmp_path / "v", Counter({"a": 3, "b@@": 1, "c": 2}), min_count=2)
    assert tokens == ["a", "c"]
