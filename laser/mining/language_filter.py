"""`laser mine --lid-filter`: mined pairs whose sides are not the expected languages dropped, as
CCMatrix and NLLB filter mined bitext."""
from __future__ import annotations

import numpy as np

from ..lid.check import LanguagePair
from .retrieval import Pairs


def language_filter(languages: LanguagePair):
    """The `keep` of `write_pair_chunks`: pairs whose two lines are identified as their sides'
    languages."""
    def keep(pairs: Pairs, src_texts: list, trg_texts: list) -> np.ndarray:
        return np.array(languages.matches(src_texts, trg_texts), dtype=bool)
    return keep
