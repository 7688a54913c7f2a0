"""Topic-grouped batches (`laser train --topic-clusters`): the teacher's clusters are found and
cached, and the sampler only reorders its pools so that a batch holds few topics."""
import json

import numpy as np
import pytest

from laser.errors import LaserError
from laser.training.batches import BatchSampler, LanguagePairs, TokenArrays
from laser.training.distill import TeacherTargets
from laser.training.topics import (TopicGrouping, cluster_targets, group_by_topic,
                                   occurrence_rank, topic_labels)

from conftest import PARITY_MODEL
from test_training import invoke, read_log, tiny_corpus  # noqa: F401  (the shared fixture)


def clustered_cache(per_cluster=40, clusters=3, dim=16, seed=0):
    """Rows scattered tightly around `clusters` random directions, and each row's true cluster."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)) * 5
    truth = np.repeat(np.arange(clusters), per_cluster)
    rows = centres[truth] + rng.standard_normal((len(truth), dim)) * 0.3
    order = rng.permutation(len(truth))
    return rows[order].astype(np.float16), truth[order]


def same_partition(a, b):
    return all(len(set(b[a == label])) == 1 for label in set(a)) and len(set(a)) == len(set(b))


def test_occurrence_rank_counts_earlier_copies():
    np.testing.assert_array_equal(occurrence_rank(np.array([7, 3, 7, 7, 3, 9])),
                                  [0, 0, 1, 2, 1, 0])


def test_group_by_topic_sorts_each_band_by_topic_then_length():
    rng = np.random.default_rng(1)
    lengths = rng.integers(3, 30, size=100)
    topics = rng.integers(0, 5, size=100)
    english = np.arange(100)  # no English sentence repeated
    order = np.lexsort((rng.random(100), lengths))
    grouped = group_by_topic(order, lengths, topics, english, band_size=25)
    assert sorted(grouped) == list(range(100))
    for start in range(0, 100, 25):
        band = grouped[start:start + 25]
        assert set(band) == set(order[start:start + 25])  # pairs never leave their length band
        keys = list(zip(topics[band], lengths[band]))
        assert keys == sorted(keys)
    np.testing.assert_array_equal(group_by_topic(order, lengths, topics, english, 1), order)


def test_copies_of_an_english_sentence_go_to_later_rounds_of_the_band():
    # pairs 0-3 share one English sentence (a multi-way sentence in four languages)
    english = np.array([0, 0, 0, 0, 1, 2, 3, 4])
    topics = np.array([1, 1, 1, 1, 1, 0, 1, 0])
    lengths = np.full(8, 10)
    grouped = group_by_topic(np.arange(8), lengths, topics, english, band_size=8)
    np.testing.assert_array_equal(grouped, [5, 7, 0, 4, 6, 1, 2, 3])
    first_batch = grouped[:4]
    assert len(set(english[first_batch])) == 4


def test_clusters_of_the_targets_recover_the_topics():
    cache, truth = clustered_cache()
    labels = cluster_targets(TeacherTargets(cache), 3, seed=1)
    assert labels.dtype == np.int32 and labels.shape == truth.shape
    assert same_partition(labels, truth)


def test_more_clusters_than_sentences_is_refused():
    cache, _ = clustered_cache(per_cluster=2)
    with pytest.raises(LaserError, match="--topic-clusters 7: needs 1 to 6"):
        cluster_targets(TeacherTargets(cache), 7, seed=1)


def test_labels_are_cached_and_refused_for_other_targets(tmp_path):
    cache, truth = clustered_cache()
    targets = TeacherTargets(cache)
    labels = topic_labels(targets, 3, 1, tmp_path, "hash")
    saved = tmp_path / "hash.topics-3.npy"
    written = saved.stat().st_mtime_ns
    np.testing.assert_array_equal(topic_labels(targets, 3, 1, tmp_path, "hash"), labels)
    assert saved.stat().st_mtime_ns == written
    assert json.loads(saved.with_suffix(".json").read_text())["clusters"] == 3
    other = TeacherTargets(clustered_cache(seed=5)[0])
    with pytest.raises(LaserError, match="clusters of another teacher cache or seed"):
        topic_labels(other, 3, 1, tmp_path, "hash")
    with pytest.raises(LaserError, match="clusters of another teacher cache or seed"):
        topic_labels(targets, 3, 2, tmp_path, "hash")


def sampler_pairs(sentences=240, rows=2000, seed=0):
    """Two languages of pairs with random lengths, whose English sides are `rows` cache rows."""
    rng = np.random.default_rng(seed)
    pairs = []
    for lang in ("aaa", "bbb"):
        sides = []
        for _ in range(2):
            lengths = rng.integers(2, 12, size=sentences)
            offsets = np.concatenate([[0], np.cumsum(lengths)])
            sides.append(TokenArrays(rng.integers(4, 50, size=offsets[-1]), offsets))
        pairs.append(LanguagePairs(lang, *sides, teacher_rows=rng.integers(0, rows, sentences)))
    return pairs


def test_topic_batches_reorder_the_same_pool_into_fewer_topics_per_batch():
    pairs = sampler_pairs()
    topics = np.random.default_rng(3).integers(0, 8, size=2000)
    plain = BatchSampler(pairs, 16, 0.5, seed=4, max_length=48, pool_batches=8)
    grouped = BatchSampler(pairs, 16, 0.5, seed=4, max_length=48, pool_batches=8,
                           topics=TopicGrouping(topics, band_batches=4))

    def drawn(sampler):
        return [sampler.indices(step) for step in range(8)]

    def topics_per_batch(batches):
        return np.mean([len({topics[pairs[lang].teacher_rows[row]] for lang, row in batch})
                        for batch in batches])

    def as_set(batches):
        return sorted(map(tuple, np.concatenate(batches)))

    assert as_set(drawn(grouped)) == as_set(drawn(plain))
    assert topics_per_batch(drawn(grouped)) < 0.6 * topics_per_batch(drawn(plain))
    again = BatchSampler(pairs, 16, 0.5, seed=4, max_length=48, pool_batches=8,
                         topics=TopicGrouping(topics, band_batches=4))
    np.testing.assert_array_equal(again.indices(5), grouped.indices(5))


def test_a_larger_pool_gives_batches_of_closer_lengths():
    pairs = sampler_pairs(sentences=2000)

    def padding(pool_batches):
        sampler = BatchSampler(pairs, 16, 0.5, seed=4, max_length=48, pool_batches=pool_batches)
        batches = [sampler.batch(step) for step in range(32)]
        return sum(b.tokens.numel() for b in batches) / sum(b.lengths.sum().item() for b in batches)

    assert padding(32) < padding(8) < padding(1)


def test_topic_clusters_need_a_teacher(tiny_corpus, tmp_path):
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "m", 2, "--topic-clusters", "4")
    assert result.exit_code == 1 and not (tmp_path / "work").exists()
    assert result.output.strip() == ("laser: error: --topic-clusters needs a --teacher "
                                     "(its embeddings are clustered)")


def test_a_band_larger_than_the_pool_is_refused(tiny_corpus, tmp_path):
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "m", 2, "--teacher",
                    str(PARITY_MODEL), "--topic-clusters", "4", "--topic-band", "8",
                    "--pool-batches", "4")
    assert result.exit_code == 1 and not (tmp_path / "work").exists()
    assert result.output.strip() == ("laser: error: --topic-band 8 is more than --pool-batches 4: "
                                     "a band is cut from one pool")


def test_a_run_with_topic_batches_clusters_once_and_exports(tiny_corpus, tmp_path):
    work = tmp_path / "work"
    args = ("--teacher", str(PARITY_MODEL), "--topic-clusters", "5", "--topic-band", "2",
            "--pool-batches", "3")
    result = invoke(tiny_corpus, work, tmp_path / "student", 4, *args)
    assert result.exit_code == 0, result.output
    saved = list((work / "teacher").glob("*.topics-5.npy"))
    assert len(saved) == 1 and set(np.load(saved[0])) == set(range(5))
    written = saved[0].stat().st_mtime_ns
    result = invoke(tiny_corpus, work, tmp_path / "student", 6, *args)
    assert result.exit_code == 0, result.output
    assert saved[0].stat().st_mtime_ns == written
    log = read_log(work)
    assert log[-1]["step"] == 6
    starts = [r for r in log if r.get("event") == "start"]
    assert [(r["topic_clusters"], r["topic_band"], r["pool_batches"]) for r in starts] == [(5, 2, 3)] * 2
    assert (tmp_path / "student" / "tiny.pt").exists()
