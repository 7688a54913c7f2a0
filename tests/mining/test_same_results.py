"""With one file a side `laser mine` writes, byte for byte, what it wrote before a side could be
many files (tests/data/mining/laser-b16560b.json: the sha256 of each output, written by the code
of commit b16560b, for the texts of the `main` fixture corpus with `sign_embeddings`); a side of
many compressed files, with its embeddings in several files, writes the same bytes too.

The embeddings are +-1 (every cosine a multiple of 1/16, exact in float32 whatever order a CPU's
BLAS sums in), so the recorded bytes hold on any machine."""
import bz2
import gzip
import hashlib
import json
import lzma

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.io.sources import zstd_module

from conftest import MINING_FIXTURES

CORPUS = MINING_FIXTURES / "main"
SIDES = {"src": 600, "trg": 700}
RECORDED = json.loads((MINING_FIXTURES / "laser-b16560b.json").read_text())
COMPRESS = [gzip.compress, lzma.compress, bz2.compress, zstd_module().compress]
CUTS = [0, 150, 151, 380, 600]


def sign_embeddings(count: int, salt: str) -> np.ndarray:
    """Rows of 16: eight +1, then the eight bits of BLAKE2b(salt, row number) as +-1."""
    digests = b"".join(hashlib.blake2b(f"{salt} {i}".encode(), digest_size=1).digest()
                       for i in range(count))
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8)[:, None], axis=1)
    return np.hstack([np.ones((count, 8), np.float32), bits.astype(np.float32) * 2 - 1])


@pytest.fixture(scope="module")
def embeddings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("embeddings")
    for side, count in SIDES.items():
        np.save(folder / f"{side}.npy", sign_embeddings(count, side))
    return folder


def mined_digest(folder, src, trg, src_embeddings, trg_embeddings, options):
    out = folder / "out"
    result = CliRunner().invoke(main, ["mine", str(src), str(trg), "--src-embeddings",
                                       str(src_embeddings), "--trg-embeddings",
                                       str(trg_embeddings), "-o", str(out), *options])
    assert result.exit_code == 0, result.output
    return hashlib.sha256(out.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def sharded(tmp_path_factory, embeddings):
    """The source side in four differently compressed shards (one of a single line), its
    embeddings in four .npy files; the target side in @LIST of two shards."""
    folder = tmp_path_factory.mktemp("sharded")
    lines = (CORPUS / "src.txt").read_bytes().splitlines(keepends=True)
    rows = np.load(embeddings / "src.npy")
    (folder / "src").mkdir()
    for index, (start, stop) in enumerate(zip(CUTS, CUTS[1:])):
        (folder / "src" / f"{index}.part").write_bytes(
            COMPRESS[index](b"".join(lines[start:stop])))
        np.save(folder / f"src-{index}.npy", rows[start:stop])
    targets = (CORPUS / "trg.txt").read_bytes().splitlines(keepends=True)
    (folder / "trg-a.gz").write_bytes(gzip.compress(b"".join(targets[:333])))
    (folder / "trg-b.txt").write_bytes(b"".join(targets[333:]))
    (folder / "trg.list").write_text(f"{folder / 'trg-a.gz'}\n{folder / 'trg-b.txt'}\n")
    return folder


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_one_file_a_side_writes_what_it_wrote_before(tmp_path, embeddings, name):
    digest = mined_digest(tmp_path, CORPUS / "src.txt", CORPUS / "trg.txt",
                          embeddings / "src.npy", embeddings / "trg.npy",
                          RECORDED[name]["options"])
    assert digest == RECORDED[name]["sha256"]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_many_files_a_side_write_the_same_bytes(sharded, embeddings, name):
    digest = mined_digest(sharded, sharded / "src", f"@{sharded / 'trg.list'}",
                          sharded / "src-*.npy", embeddings / "trg.npy",
                          RECORDED[name]["options"])
    assert digest == RECORDED[name]["sha256"]
