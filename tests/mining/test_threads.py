"""`laser mine` writes the same bytes whatever the number of BLAS and OpenMP threads: the blocked
products only choose candidates, every similarity kept is re-scored in one fixed order."""
import os
import subprocess
import sys

import pytest

from conftest import MINING_FIXTURES, ROOT

CORPUS = MINING_FIXTURES / "main"
# Runs the CLI with FAISS's OpenMP threads set as well as the environment's.
RUN = """
import sys, faiss
faiss.omp_set_num_threads(int(sys.argv[1]))
from laser.cli import main
main(sys.argv[2:], prog_name="laser")
"""
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def mine_with_threads(threads: int, output, *options: str) -> bytes:
    env = {**os.environ, **{name: str(threads) for name in THREAD_VARIABLES}}
    args = ["mine", str(CORPUS / "src.txt"), str(CORPUS / "trg.txt"),
            "--src-embeddings", str(CORPUS / "src.npy"), "--trg-embeddings", str(CORPUS / "trg.npy"),
            "-o", str(output), *options]
    done = subprocess.run([sys.executable, "-c", RUN, str(threads), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return output.read_bytes()


@pytest.mark.parametrize("options", [[], ["--mode", "score"], ["--candidates", "-k", "6"],
                                     ["--retrieval", "intersect", "--margin", "distance"]],
                         ids=["mine", "score", "candidates", "intersect"])
def test_one_and_two_threads_write_the_same_bytes(tmp_path, options):
    one = mine_with_threads(1, tmp_path / "one.tsv", *options)
    two = mine_with_threads(2, tmp_path / "two.tsv", *options)
    assert one.count(b"\n") >= 300
    assert one == two
