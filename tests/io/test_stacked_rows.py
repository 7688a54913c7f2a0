"""Several embedding files read as one matrix: any slice or list of rows is the concatenation's."""
import numpy as np
import pytest

from laser.errors import LaserError
from laser.io.embeddings import open_embeddings

SIZES = [5, 0, 1, 17, 3]


@pytest.fixture
def parts(tmp_path):
    rows = np.random.default_rng(2).standard_normal((sum(SIZES), 6)).astype(np.float32)
    starts = np.cumsum([0] + SIZES)
    for index, (start, stop) in enumerate(zip(starts, starts[1:])):
        np.save(tmp_path / f"part-{index}.npy", rows[start:stop])
    return rows, str(tmp_path / "part-*.npy")


def test_slices_and_row_lists_read_the_rows_of_the_concatenation(parts):
    rows, spec = parts
    stacked = open_embeddings(spec)
    assert stacked.shape == rows.shape and len(stacked) == len(rows)
    for start in range(len(rows) + 1):
        for stop in range(start, len(rows) + 2):
            assert np.array_equal(stacked[start:stop], rows[start:stop])
    assert np.array_equal(stacked[::3], rows[::3])
    picked = np.random.default_rng(3).integers(0, len(rows), size=50)
    assert np.array_equal(stacked[picked], rows[picked])
    assert np.array_equal(np.asarray(stacked), rows)


def test_files_of_two_dimensions_are_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((2, 4), np.float32))
    np.save(tmp_path / "b.npy", np.ones((2, 5), np.float32))
    with pytest.raises(LaserError, match=r"embedding files of different dimensions \(.*a\.npy: 4, "
                                         r".*b\.npy: 5\)"):
        open_embeddings(str(tmp_path))
