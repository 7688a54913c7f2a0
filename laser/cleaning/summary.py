"""What the cleaning stage did to an input: documents, paragraphs and sentences read, what each
filter removed, sentences kept; as a line for stderr and a record for the JSON sidecar."""
from __future__ import annotations

from dataclasses import dataclass

from .filters import DESCRIPTIONS, FILTERS


@dataclass(frozen=True)
class CleaningSummary:
    name: str
    counts: dict

    def removed(self) -> dict[str, int]:
        return {name: int(self.counts.get(f"removed_{name}", 0)) for name in FILTERS}

    def record(self) -> dict:
        counts = {key: int(self.counts.get(key, 0))
                  for key in ("documents", "empty_documents", "paragraphs", "sentences", "kept")}
        return {**counts, "removed": self.removed()}

    def line(self) -> str:
        """`NAME: D documents (E empty), P paragraphs, S sentences; removed: ...; kept K`."""
        record = self.record()
        removed = ", ".join(f"{count} by {DESCRIPTIONS[name]}"
                            for name, count in self.removed().items() if count) or "none"
        return (f"{self.name}: {record['documents']} documents ({record['empty_documents']} "
                f"empty), {record['paragraphs']} paragraphs, {record['sentences']} sentences; "
                f"removed {removed}; kept {record['kept']}")
