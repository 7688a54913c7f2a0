"""Writing k-NN results: `query_id rank target_id score [query_text target_text]` TSV."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..io.atomic import atomic_text_output
from ..io.text import line_texts, read_lines
from .vectors import Neighbours


def write_neighbours(output: str, found: Neighbours, query_text: Optional[str] = None,
                     target_text: Optional[str] = None) -> None:
    """TSV `query_id rank target_id score [query_text target_text]`, ids 0-based, rank from 1."""
    targets = line_texts(target_text, found.ids[found.ids >= 0]) if target_text else {}
    queries = read_lines(query_text) if query_text else None
    ranks = np.arange(1, found.ids.shape[1] + 1).tolist()
    with atomic_text_output(output) as out:
        for query, (sims, ids) in enumerate(zip(found.sims.tolist(), found.ids.tolist())):
            suffix = ""
            if queries is not None:
                text = next(queries)
            for rank, sim, target in zip(ranks, sims, ids):
                if target < 0:
                    break
                if queries is not None:
                    suffix = f"\t{text}\t{targets[target]}"
                out.write(f"{query}\t{rank}\t{target}\t{sim:.6f}{suffix}\n")
