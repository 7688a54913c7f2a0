"""Word segmenters LASER runs after Moses (jieba for Chinese, MeCab for Japanese), loaded lazily."""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

from ..errors import LaserError


def _missing(package: str, language: str, extra: str) -> LaserError:
    return LaserError(f"{language} text needs the '{package}' package: "
                      f"pip install 'laser-toolkit[{extra}]'")


@lru_cache(maxsize=None)
def jieba_segmenter() -> Callable[[str], str]:
    """`python3 -m jieba -d`: words joined by one space; existing spaces become space tokens."""
    try:
        import jieba
    except ImportError:
        raise _missing("jieba", "Chinese", "zh") from None
    jieba.setLogLevel(60)
    tokenizer = jieba.Tokenizer()
    return lambda line: " ".join(tokenizer.cut(line, cut_all=False, HMM=True))


@lru_cache(maxsize=None)
def mecab_segmenter() -> Callable[[str], str]:
    """`mecab -O wakati` with the IPA dictionary: every word followed by one space."""
    try:
        import MeCab
    except ImportError:
        raise _missing("mecab-python3", "Japanese", "ja") from None
    try:
        import ipadic
    except ImportError:
        raise _missing("ipadic", "Japanese", "ja") from None
    tagger = MeCab.Tagger(f"-O wakati {ipadic.MECAB_ARGS}")
    return lambda line: tagger.parse(line).rstrip("\n")


SEGMENTERS = {"jieba": jieba_segmenter, "mecab": mecab_segmenter}


def segmenter(name: str) -> Callable[[str], str]:
    return SEGMENTERS[name]()
