"""What an alignment is made of (`Bead`) and the knobs of the aligner (`AlignOptions`)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import LaserError


@dataclass(frozen=True)
class Bead:
    """Sentences of the source (`src`) and target (`trg`) document that translate each other:
    0-based indices of consecutive sentences, () on the side of an insertion or deletion.
    `score` is the cosine of the two sides' embeddings (0 for an insertion or a deletion);
    `cost` what the bead cost the dynamic program (Vecalign's ladder writes it)."""

    src: tuple[int, ...]
    trg: tuple[int, ...]
    score: float
    cost: float = 0.0

    @property
    def kind(self) -> str:
        """'1-1', '2-1', '0-1'...: the sizes of the two sides."""
        return f"{len(self.src)}-{len(self.trg)}"


@dataclass(frozen=True)
class AlignOptions:
    """How `align_embeddings` aligns two documents (defaults tuned on Bleualign's dev document,
    docs/alignment.md).

    max_bead: the most sentences a bead holds, both sides together (1-4, 2-3, 3-2 and 4-1 with 5);
    size_penalty: the cost added per sentence beyond a 1-1 bead;
    length_weight: the weight of the length term, |log of the bead's character length ratio
      minus the documents' own|;
    deletion_percentile: the cost of a 1-0 or 0-1 bead, as this percentile of the costs of
      random sentence pairs of the two documents;
    samples: random sentences of the other document that normalise each embedding's costs;
    band: the cells searched on either side of the path found on documents halved in length;
    full_cells: the size of the full dynamic program (rows x columns) below which no halving
      is done;
    seed: the random samples' seed (the alignment is deterministic)."""

    max_bead: int = 5
    size_penalty: float = 0.25
    length_weight: float = 0.6
    deletion_percentile: float = 8.0
    samples: int = 20
    band: int = 8
    full_cells: int = 250_000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_bead < 2:
            raise LaserError(f"max_bead must be 2 or more (a 1-1 bead), not {self.max_bead}")
        if not 0 < self.deletion_percentile < 100:
            raise LaserError("deletion_percentile must lie between 0 and 100, not "
                             f"{self.deletion_percentile}")
        if self.band < 1 or self.samples < 1 or self.full_cells < 1:
            raise LaserError("band, samples and full_cells must be 1 or more")

    @property
    def longest_side(self) -> int:
        """The most sentences one side of a bead holds (the other has one or more)."""
        return self.max_bead - 1

    def bead_sizes(self) -> list[tuple[int, int]]:
        """The (source, target) sizes of every bead but insertions and deletions."""
        return [(a, b) for a in range(1, self.max_bead) for b in range(1, self.max_bead)
                if a + b <= self.max_bead]
