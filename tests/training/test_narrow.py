"""Narrowing a trained BiLSTM (`laser train --init M --hidden-size H`, H below M's width): the
units nothing reads and the embedding dimensions that never vary go first, and dropping them
changes nothing else."""
import pytest
import torch

from laser.runtime.bilstm import BiLSTMEncoder
from laser.training.narrow import GATES, narrowed, unit_scores

HIDDEN = 6
DEAD_INNER = ([1, 4], [0, 5])   # per direction: layer-0 units whose outputs nothing reads
DEAD_LAST = ([2, 3], [1, 4])    # per direction: layer-1 units whose output is always 0


def model(layers=2):
    torch.manual_seed(0)
    return BiLSTMEncoder({"num_embeddings": 40, "embed_dim": 8, "hidden_size": HIDDEN,
                          "num_layers": layers, "bidirectional": True}).eval()


def sample(sentences=24, longest=9):
    generator = torch.Generator().manual_seed(1)
    lengths = torch.randint(2, longest + 1, (sentences,), generator=generator)
    tokens = torch.randint(4, 40, (sentences, longest), generator=generator)
    for row, length in enumerate(lengths):
        tokens[row, length:] = 1
    return tokens, lengths


def with_dead_units() -> BiLSTMEncoder:
    network = model()
    with torch.no_grad():
        for direction, units in enumerate(DEAD_INNER):
            network.layers[0][direction].weight_hh_l0[:, units] = 0
            for reader in network.layers[1]:
                reader.weight_ih_l0[:, [u + direction * HIDDEN for u in units]] = 0
        for lstm, units in zip(network.layers[1], DEAD_LAST):
            rows = [u + gate * HIDDEN for gate in range(GATES) for u in units]
            for name in ("weight_ih_l0", "weight_hh_l0"):
                getattr(lstm, name)[rows] = 0
            cell_gate = [u + 2 * HIDDEN for u in units]
            lstm.bias_ih_l0[cell_gate] = 0
            lstm.bias_hh_l0[cell_gate] = 0
    return network


def test_narrowing_to_the_full_width_is_the_same_network():
    network, (tokens, lengths) = model(), sample()
    same = narrowed(network, HIDDEN, tokens, lengths)
    assert torch.equal(same(tokens, lengths), network(tokens, lengths))


def test_units_nothing_reads_score_zero():
    scores = unit_scores(with_dead_units(), *sample())
    dead_inner = [u + d * HIDDEN for d, units in enumerate(DEAD_INNER) for u in units]
    dead_last = [u + d * HIDDEN for d, units in enumerate(DEAD_LAST) for u in units]
    assert (scores[0][dead_inner] == 0).all() and (scores[1][dead_last] == 0).all()
    alive = [i for i in range(2 * HIDDEN) if i not in dead_inner]
    assert (scores[0][alive] > 0).all()


def test_dropping_useless_units_keeps_every_other_output():
    network, (tokens, lengths) = with_dead_units(), sample()
    small = narrowed(network, HIDDEN - 2, tokens, lengths)
    kept = [u + d * HIDDEN for d, units in enumerate(DEAD_LAST)
            for u in range(HIDDEN) if u not in units]
    assert small.hidden_size == HIDDEN - 2 and small.output_dim == 2 * (HIDDEN - 2)
    torch.testing.assert_close(small(tokens, lengths), network(tokens, lengths)[:, kept],
                               rtol=0, atol=1e-6)
    held_out = sample(sentences=16, longest=12)
    torch.testing.assert_close(small(*held_out), network(*held_out)[:, kept], rtol=0, atol=1e-6)


def test_a_one_layer_model_keeps_its_most_varied_dimensions():
    network, (tokens, lengths) = model(layers=1), sample()
    small = narrowed(network, 3, tokens, lengths)
    spread = network(tokens, lengths).std(dim=0)
    for direction, (lstm, small_lstm) in enumerate(zip(network.layers[0], small.layers[0])):
        best = spread[direction * HIDDEN:(direction + 1) * HIDDEN].topk(3).indices.sort().values
        rows = torch.cat([best + gate * HIDDEN for gate in range(GATES)])
        assert torch.equal(small_lstm.weight_ih_l0, lstm.weight_ih_l0[rows])
        assert torch.equal(small_lstm.weight_hh_l0, lstm.weight_hh_l0[rows][:, best])
        assert torch.equal(small_lstm.bias_hh_l0, lstm.bias_hh_l0[rows])


def test_widening_is_refused():
    with pytest.raises(ValueError, match="cannot narrow 6 units to 8"):
        narrowed(model(), 8, *sample())
