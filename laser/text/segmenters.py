"""Word segmenters LASER runs after Moses (jieba for Chinese, MeCab for Japanese), loaded lazily."""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

from ..errors import LaserError


def _missing(package: str, language: str) -> LaserError:
    """jieba, mecab-python3 and ipadic are dependencies of laser-toolkit: one went missing."""
    return LaserError(f"{language} text needs the '{package}' package, a dependency of "
                      f"laser-toolkit that is not installed: pip install {package}")


@lru_cache(maxsize=None)
def jieba_segmenter() -> Callable[[str], str]:
    """`python3 -m jieba -d`: words joined by one space; existing spaces become space tokens."""
    try:
        import jieba
    except ImportError:
        raise _missing("jieba", "Chinese") from None
    jieba.setLogLevel(60)
    tokenizer = jieba.Tokenizer()
    return lambda line: " ".join(tokenizer.cut(line, cut_all=False, HMM=True))


@lru_cache(maxsize=None)
def mecab_segmenter() -> Callable[[str], str]:
    """`mecab -O wakati` with the IPA dictionary: every word followed by one space."""
    try:
        import MeCab
    except ImportError:
        raise _missing("mecab-python3", "Japanese") from None
    try:
        import ipadic
    except ImportError:
        raise _missing("ipadic", "Japanese") from None
    tagger = MeCab.Tagger(f"-O wakati {ipadic.MECAB_ARGS}")
    return lambda line: tagger.parse(line).rstrip("\n")


SEGMENTERS = {"jieba": jieba_segmenter, "mecab": mecab_segmenter}


def segmenter(name: str) -> Callable[[str], str]:
    return SEGMENTERS[name]()
