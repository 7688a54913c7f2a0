"""What the boundary classifier sees of a candidate: the word before it and its punctuation,
the word after it, their shapes; for a bare space, the characters on either side, how far it
is from the ends of the line and whether the line has full stops; each feature once for every language and once for the text's own."""
from __future__ import annotations

from .candidates import CLOSERS, TERMINALS, Candidate

_TRAILING = TERMINALS + CLOSERS
_OPENERS = "\"'“‘„«‹([{「『（【〈《¿¡"
WINDOW = 10  # characters of a word kept as a feature


def shape(word: str) -> str:
    """The word's characters as classes, repeats collapsed: `Dr` -> `Xx`, `3.14` -> `d.d`."""
    classes = []
    for char in word:
        kind = ("X" if char.isupper() else "x" if char.islower() else "d" if char.isdigit()
                else "a" if char.isalpha() else char)
        if not classes or classes[-1] != kind:
            classes.append(kind)
    return "".join(classes)


def _bucket(length: int) -> int:
    """0, 1, 2, 3, 4, 5 or 6 for lengths up to 1, 3, 7, 15, 31, 63, and more."""
    return min(length.bit_length(), 6)


def candidate_features(line: str, candidate: Candidate, prefixes: dict[str, int],
                       stops: bool) -> list[str]:
    """The features of one candidate of a stripped line (`prefixes`: the language's Moses
    non-breaking prefixes; `stops`: whether the line has a candidate after punctuation)."""
    before = line[line.rfind(" ", 0, candidate.end) + 1:candidate.end]
    after_end = line.find(" ", candidate.start)
    after = line[candidate.start:after_end if after_end >= 0 else len(line)]
    if candidate.punctuated:
        return _punctuated(before, after, prefixes, candidate.start > candidate.end)
    span = (f"o{_bucket(candidate.end)}", f"e{_bucket(len(line) - candidate.start)}")
    return [*span, f"h{int(stops)}", *_spaced(before, after)]


def _punctuated(before: str, after: str, prefixes: dict[str, int], spaced: bool) -> list[str]:
    word = before.rstrip(_TRAILING)
    marks = before[len(word):]
    word_shape, next_shape = shape(word)[-4:], shape(after.lstrip(_OPENERS)[:4])
    known = prefixes.get(word, 0)
    if known == 2 and not after[:1].isdigit():
        known = 0
    return ["P", f"m{marks[-3:]}", f"s{int(spaced)}", f"w{word[-WINDOW:].lower()}",
            f"ws{word_shape}", f"wl{_bucket(len(word))}", f"k{known}",
            f"n2{'0' if after[:1].isdigit() else after[:2]}", f"ns{next_shape}", f"o{after[:1] in _OPENERS}",
            f"c{word_shape[-1:]}{marks[-1:]}{next_shape[:1]}", f"a{known}{next_shape[:1]}",
            f"w1{word[-1:]}{marks}", f"q{word_shape}{next_shape[:1]}{_bucket(len(word))}"]


def _spaced(before: str, after: str) -> list[str]:
    return ["S", f"l1{before[-1:]}", f"l2{before[-2:]}", f"l3{before[-3:]}",
            f"r1{after[:1]}", f"r2{after[:2]}", f"r3{after[:3]}", f"lw{before[-WINDOW:]}",
            f"rw{after[:WINDOW]}", f"ll{_bucket(len(before))}", f"rl{_bucket(len(after))}",
            f"x{before[-1:]}{after[:1]}"]


def keyed(features: list[str], lang: str) -> list[str]:
    """Each feature for all languages and for `lang`'s own."""
    return [*features, *(f"{lang}|{feature}" for feature in features)]
