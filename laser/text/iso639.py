"""The ISO 639 code table: every 639-3 and 639-2/B code with its 639-1 code, which both the
language resolution (`laser.text.languages`) and the FLORES-200 codes (`laser.text.flores`) read."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

# Codes of the LASER (Tatoeba) data that are not current ISO 639-3 codes: Berber's collective
# code (639-2/5), Coastal Kadazan's retired code and Tatoeba's Toki Pona.
DATA_CODES = ("ber", "kzj", "toki")


@lru_cache(maxsize=None)
def iso_table() -> dict[str, str]:
    """Every ISO 639 code we know, mapped to its 639-1 code ('' where it has none)."""
    text = resources.files("laser").joinpath("data/iso639.txt").read_text("ascii")
    table = {}
    for line in text.splitlines():
        three, _, two = line.partition(" ")
        table[three] = two
        if two:
            table[two] = two
    table.update((code, "") for code in DATA_CODES)
    return table
