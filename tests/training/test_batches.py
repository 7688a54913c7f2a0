"""Training batches: each row holds its pair's sentences cut to max_length (first tokens, then
</s>), pairs sharing a side are marked, the teacher rows follow the pairs, and prefetching gives
the sampler's own batches."""
from itertools import islice

import numpy as np
import torch

from laser.runtime.sequences import EOS, PAD
from laser.training.batches import (BatchSampler, LanguagePairs, TokenArrays, dev_sets,
                                    prefetched)


def token_arrays(sentences):
    lengths = [len(s) for s in sentences]
    return TokenArrays(np.array([t for s in sentences for t in s], dtype=np.int32),
                       np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


def cut(arrays, row, max_length):
    """Sentence `row`, cut as training cuts it: max_length - 1 tokens and </s>."""
    ids = arrays.tokens[arrays.offsets[row]:arrays.offsets[row + 1]].tolist()
    return ids if len(ids) <= max_length else ids[:max_length - 1] + [EOS]


def language(lang, count, seed):
    """`count` pairs of 1-14 tokens ending in </s>; every fifth foreign and every seventh English
    sentence repeats the first, so batches hold shared sides."""
    rng = np.random.default_rng(seed)
    sides = []
    for repeat in (5, 7):
        sentences = [list(rng.integers(4, 50, rng.integers(1, 14))) + [EOS] for _ in range(count)]
        sides.append([sentences[0] if i % repeat == 0 else s for i, s in enumerate(sentences)])
    rows = rng.permutation(10 * count)[:count]
    return LanguagePairs(lang, token_arrays(sides[0]), token_arrays(sides[1]), rows)


def test_batches_hold_the_cut_sentences_their_shared_sides_and_teacher_rows():
    pairs = [language("deu", 60, 0), language("fra", 25, 1), language("ell", 9, 2)]
    sampler = BatchSampler(pairs, 32, 0.5, seed=3, max_length=8, pool_batches=4)
    for step in (0, 1, 5, 9):
        batch, chosen = sampler.batch(step), sampler.indices(step)
        sources = [cut(pairs[lang].source, row, 8) for lang, row in chosen]
        english = [cut(pairs[lang].pivot, row, 8) for lang, row in chosen]
        assert batch.tokens.shape == (64, max(map(len, sources + english)))
        for i, sentence in enumerate(sources + english):
            assert batch.lengths[i] == len(sentence)
            assert batch.tokens[i, :len(sentence)].tolist() == sentence
            assert (batch.tokens[i, len(sentence):] == PAD).all()
        shared = torch.tensor([[i != j and (sources[i] == sources[j] or english[i] == english[j])
                                for j in range(32)] for i in range(32)])
        assert torch.equal(batch.duplicate, shared)
        assert batch.languages == [pairs[lang].lang for lang, _ in chosen]
        assert batch.teacher_rows.tolist() == [pairs[lang].teacher_rows[row]
                                               for lang, row in chosen]
    assert any(batch.duplicate.any() for batch in map(sampler.batch, range(8)))
    assert any(batch.lengths.max() == 8 and (batch.tokens[:, 7] == EOS).any()
               for batch in map(sampler.batch, range(8)))


def test_dev_sets_hold_the_first_pairs_whole():
    """Dev sentences are not cut to the training length: inference reads them whole."""
    pairs = [language("deu", 30, 0)]
    sources, english = dev_sets(pairs, limit=20)["deu"]
    assert sources == [whole(pairs[0].source, row) for row in range(20)]
    assert english == [whole(pairs[0].pivot, row) for row in range(20)]
    assert max(map(len, sources + english)) > 8  # longer than the batches' cut in these tests


def whole(arrays, row):
    return arrays.tokens[arrays.offsets[row]:arrays.offsets[row + 1]].tolist()


def test_prefetched_batches_are_the_samplers():
    pairs = [language("deu", 40, 0), language("fra", 30, 1)]
    sampler = BatchSampler(pairs, 16, 0.8, seed=1, max_length=10, pool_batches=3)
    fetched = list(islice(prefetched(sampler, 4), 5))
    again = BatchSampler(pairs, 16, 0.8, seed=1, max_length=10, pool_batches=3)
    for step, batch in zip(range(4, 9), fetched):
        expected = again.batch(step)
        assert torch.equal(batch.tokens, expected.tokens)
        assert torch.equal(batch.duplicate, expected.duplicate)
        assert batch.languages == expected.languages
