"""`laser mine --lid-filter`: mined pairs whose sides are not the expected languages dropped, as
CCMatrix and NLLB filter mined bitext."""
from __future__ import annotations

import numpy as np

from ..io.text import line_texts
from ..lid.check import LanguagePair
from .corpus import Corpus
from .retrieval import Pairs


def language_filtered(pairs: Pairs, src: Corpus, trg: Corpus,
                      languages: LanguagePair) -> tuple[Pairs, int]:
    """The pairs (line numbers) whose two lines are identified as their sides' languages, and
    how many pairs were dropped."""
    src_text = line_texts(src.path, pairs.src)
    trg_text = line_texts(trg.path, pairs.trg)
    keep = np.array(languages.matches([src_text[line] for line in pairs.src.tolist()],
                                      [trg_text[line] for line in pairs.trg.tolist()]), dtype=bool)
    return Pairs(pairs.src[keep], pairs.trg[keep], pairs.score[keep]), int(len(keep) - keep.sum())
