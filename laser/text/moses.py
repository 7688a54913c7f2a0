"""The three Moses steps of LASER's tokenisation, as the perl scripts (RELEASE-4.0) compute them.

The official LASER pipeline ran the perl scripts; sacremoses, the usual Python port, follows a later
Moses version with Python's notion of Unicode and differs on real text (tests/data/parity/README.md).
These classes follow the perl scripts themselves, with Moses' non-breaking prefix files
(`laser/data/nonbreaking_prefixes/`), and no import of sacremoses, whose regexes cost ~0.3 s of
every command's start-up:

* character classes (`\\p{IsAlnum}`, `\\p{IsAlpha}`, `\\s`, ...) are Perl 5.36's own, so Devanagari
  virama/nukta are split off and Han/Hangul runs stay together in every language;
* `normalize-punctuation.perl` reads bytes, so `\\d`, `\\s` and `[a-z]` are ASCII only there, it sees
  the line's newline (so `."` is swapped at line end too), and it turns all of `‘ ‚ ’` into `"`;
* the `."` / `,"` swap applies to every language but en and cs;
* words are split on single spaces and the non-breaking-prefix rule sees the empty words between
  double spaces, as perl's `split(/\\s/)` does;
* only the 25 prefix files LASER installs exist; other languages fall back to English.
"""
from __future__ import annotations

import re
from functools import lru_cache
from re import _parser as re_parser  # how `re` parses a pattern: its required literals
from re._constants import LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN
from typing import NamedTuple

from importlib import resources

from .perl_classes import LazyPattern, char_class

# Languages whose non-breaking prefix files LASER's installer fetches from Moses.
LASER_PREFIX_LANGUAGES = frozenset(
    "ca cs de el en es fi fr ga hu is it lt lv nl pl pt ro ru sk sl sv ta yue zh".split())

NBSP = "\u00a0"
ASCII_SPACE = r"[\t\n\x0b\x0c\r ]"

_NON_PRINTING = LazyPattern(lambda: char_class("C"))


def remove_non_printing(line: str) -> str:
    """`remove-non-printing-char.perl`: every character of category C becomes a space. Python
    counts every such character as not printable (tested on every code point), so a printable
    line is left as it is without a search."""
    return line if line.isprintable() else _NON_PRINTING.sub(" ", line)


class PerlPunctNormalizer:
    """`normalize-punctuation.perl -l LANG` with the perl script's byte semantics: its
    substitutions in the script's order, then the language's quote-comma and number rules."""

    SQUEEZE_SPACES = (r"  +", " ")  # perl's `s/ +/ /g`, skipping the single spaces it leaves alone
    EXTRA_WHITESPACE = [
        (r"\r", ""), (r"\(", " ("), (r"\)", ") "), SQUEEZE_SPACES,
        (r"\) ([.!:?;,])", r")\1"), (r"\( ", "("), (r" \)", ")"),
        (r"([0-9]) %", r"\1%"), (r" :", ":"), (r" ;", ";"),
    ]
    NORMALIZE_UNICODE_IF_NOT_PENN = [(r"`", "'"), (r"''", ' " ')]
    NORMALIZE_UNICODE = [
        ("„", '"'), ("“", '"'), ("”", '"'), ("–", "-"), ("—", " - "), SQUEEZE_SPACES,
        ("´", "'"), ("([a-zA-Z])‘([a-zA-Z])", r"\1'\2"), ("([a-zA-Z])’([a-zA-Z])", r"\1'\2"),
        ("‘", '"'), ("‚", '"'), ("’", '"'), ("''", '"'), ("´´", '"'), ("…", "..."),
    ]
    FRENCH_QUOTES = [
        (f"{NBSP}«{NBSP}", ' "'), (f"«{NBSP}", '"'), ("«", '"'),
        (f"{NBSP}»{NBSP}", '" '), (f"{NBSP}»", '"'), ("»", '"'),
    ]
    HANDLE_PSEUDO_SPACES = [
        (f"{NBSP}%", "%"), (f"nº{NBSP}", "nº "), (f"{NBSP}:", ":"), (f"{NBSP}ºC", " ºC"),
        (f"{NBSP}cm", " cm"), (f"{NBSP}\\?", "?"), (f"{NBSP}!", "!"), (f"{NBSP};", ";"),
        (f",{NBSP}", ", "), SQUEEZE_SPACES,
    ]
    EN_QUOTATION_FOLLOWED_BY_COMMA = [(r'"([,.]+)', r'\1"')]
    OTHER_QUOTATION_FOLLOWED_BY_COMMA = [
        (r',"', '",'), (rf'(\.+)"({ASCII_SPACE}*[^<])', r'"\1\2'),
    ]
    COMMA_DECIMAL_LANGUAGES = ("de", "es", "cz", "cs", "fr")

    def __init__(self, lang: str = "en"):
        self.substitutions = [*self.EXTRA_WHITESPACE, *self.NORMALIZE_UNICODE_IF_NOT_PENN,
                              *self.NORMALIZE_UNICODE, *self.FRENCH_QUOTES,
                              *self.HANDLE_PSEUDO_SPACES]
        if lang == "en":
            self.substitutions += self.EN_QUOTATION_FOLLOWED_BY_COMMA
        elif lang not in ("cs", "cz"):
            self.substitutions += self.OTHER_QUOTATION_FOLLOWED_BY_COMMA
        separator = "," if lang in self.COMMA_DECIMAL_LANGUAGES else "."
        self.substitutions.append((f"([0-9]){NBSP}([0-9])", rf"\1{separator}\2"))
        self.compiled = _compile_all(self.substitutions)

    def normalize(self, text: str) -> str:
        """Normalise one line (without its newline), as perl sees it: with the newline."""
        return self.compiled.apply(text + "\n")[:-1]


def nonbreaking_prefixes(lang: str) -> dict[str, int]:
    """Perl's `load_prefixes`: 1 for a plain prefix, 2 for one that only precedes numbers."""
    source = lang if lang in LASER_PREFIX_LANGUAGES else "en"
    prefix_file = resources.files("laser").joinpath(
        f"data/nonbreaking_prefixes/{source}.txt")
    table = {}
    for item in prefix_file.read_text("utf-8").split("\n"):
        if item in ("", "0") or item.startswith("#"):  # perl skips false-y lines
            continue
        numeric = re.match(r"(.*)\s+#NUMERIC_ONLY#", item)
        if numeric:
            table[numeric.group(1)] = 2
        else:
            table[item] = 1
    return table




class Rule(NamedTuple):
    """A substitution, the characters every match of it contains, and a run of text every match
    contains (empty when the pattern starts with no literal)."""

    pattern: re.Pattern
    replacement: str
    required: frozenset[str]
    needle: str


def _compile_all(rules: list[tuple[str, str]]) -> RuleList:
    return RuleList([Rule(re.compile(pattern), replacement, _required_characters(pattern),
                          _required_text(pattern)) for pattern, replacement in rules])


def _required_characters(pattern: str) -> frozenset[str]:
    """Literal characters outside any alternative or optional part of `pattern` (parsed as `re`
    parses it): a text lacking one of them cannot match."""
    def walk(items) -> set[str]:
        found = set()
        for op, value in items:
            if op is LITERAL:
                found.add(chr(value))
            elif op is SUBPATTERN:
                found |= walk(value[3])
            elif op in (MAX_REPEAT, MIN_REPEAT) and value[0] >= 1:
                found |= walk(value[2])
        return found
    return frozenset(walk(re_parser.parse(pattern)))


def _required_text(pattern: str) -> str:
    """The literal characters `pattern` starts with, one more if a repeated literal follows them
    (`  +` gives two spaces): a text that does not contain them cannot match."""
    text = ""
    for op, value in re_parser.parse(pattern):
        if op is LITERAL:
            text += chr(value)
            continue
        repeated = value[2] if op in (MAX_REPEAT, MIN_REPEAT) and value[0] >= 1 else []
        if len(repeated) == 1 and repeated[0][0] is LITERAL:
            text += chr(repeated[0][1])
        break
    return text


class RuleList:
    """Substitutions applied in turn to a text. A rule is skipped when the text lacks a character
    or the literal run each of its matches needs, which changes nothing: most rules need a rare
    character (`‘`, `«`). Which rules a text may need depends only on which of the rules' required
    characters it has, so that list is computed once per such set and kept."""

    MAX_PLANS = 4096

    def __init__(self, rules: list[Rule]):
        self.rules = rules
        self.triggers = frozenset().union(*(rule.required for rule in rules))
        self._plans: dict[tuple[frozenset[str], int], list[tuple[int, Rule]]] = {}

    def apply(self, text: str) -> str:
        """`text` after each rule in turn."""
        start = 0
        while start < len(self.rules):
            for index, rule in self._plan(self.triggers.intersection(text), start):
                if rule.needle in text:
                    changed = rule.pattern.sub(rule.replacement, text)
                    if changed != text:  # the text may now have other characters: plan again
                        text, start = changed, index + 1
                        break
            else:
                return text
        return text

    def _plan(self, present: frozenset[str], start: int) -> list[tuple[int, Rule]]:
        """The rules from `start` on whose required characters are all `present`."""
        plan = self._plans.get((present, start))
        if plan is None:
            if len(self._plans) >= self.MAX_PLANS:
                self._plans.clear()
            plan = self._plans[present, start] = [
                (index, rule) for index, rule in enumerate(self.rules)
                if index >= start and rule.required <= present]
        return plan


# Moses puts spaces around every character but letters, digits, spaces and .'`,-
SPECIAL_CHARACTERS = LazyPattern(
    lambda: "(" + char_class("IsAlnum", "Space", also=".'`,-", negate=True) + ")")


class MarkRule(NamedTuple):
    """Perl's `s/(LEFT)MARK(RIGHT)/$1REPLACEMENT$2/g` for one-character classes LEFT and RIGHT
    (None: the pattern has no context on that side): MARK becomes REPLACEMENT where both fit.

    A regex would try the classes at every position of the line; the mark is rare, so it is
    found with `str.find` and only its neighbours are tested, with the substitution's own rule
    that matches do not overlap (a neighbour taken by one match cannot serve the next).
    """

    mark: str
    left: re.Pattern | LazyPattern | None
    right: re.Pattern | LazyPattern | None
    replacement: str

    def apply(self, text: str) -> str:
        pieces, copied, free = [], 0, 0  # free: the first position the next match may start at
        position = text.find(self.mark, 1 if self.left else 0)
        while position != -1:
            start = position - 1 if self.left else position
            end = position + 2 if self.right else position + 1
            if start >= free and end <= len(text) and self._context_fits(text, position):
                pieces += [text[copied:position], self.replacement]
                copied, free = position + 1, end
            position = text.find(self.mark, position + 1)
        return "".join(pieces) + text[copied:] if pieces else text

    def _context_fits(self, text: str, position: int) -> bool:
        return ((self.left is None or self.left.match(text, position - 1) is not None)
                and (self.right is None or self.right.match(text, position + 1) is not None))


def apply_rules(rules: list[MarkRule], text: str) -> str:
    """`text` after each rule in turn."""
    for rule in rules:
        text = rule.apply(text)
    return text


ALPHA_CHAR = LazyPattern(lambda: char_class("IsAlpha"))
NOT_ALPHA_CHAR = LazyPattern(lambda: char_class("IsAlpha", negate=True))
NUM_CHAR = LazyPattern(lambda: char_class("IsN"))
NOT_NUM_CHAR = LazyPattern(lambda: char_class("IsN", negate=True))
_APOSTROPHE_LEFT = [
    MarkRule("'", NOT_ALPHA_CHAR, NOT_ALPHA_CHAR, " ' "),
    MarkRule("'", NOT_ALPHA_CHAR, ALPHA_CHAR, " ' "),
    MarkRule("'", ALPHA_CHAR, NOT_ALPHA_CHAR, " ' "),
    MarkRule("'", ALPHA_CHAR, ALPHA_CHAR, "' "),
]
APOSTROPHE_RULES = {
    "en": [
        MarkRule("'", NOT_ALPHA_CHAR, NOT_ALPHA_CHAR, " ' "),
        MarkRule("'", LazyPattern(lambda: char_class("IsAlpha", "IsN", negate=True)), ALPHA_CHAR,
                 " ' "),
        MarkRule("'", ALPHA_CHAR, NOT_ALPHA_CHAR, " ' "),
        MarkRule("'", ALPHA_CHAR, ALPHA_CHAR, " '"),
        MarkRule("'", NUM_CHAR, re.compile("s"), " '"),
    ],
    "fr": _APOSTROPHE_LEFT, "it": _APOSTROPHE_LEFT, "ga": _APOSTROPHE_LEFT,
}
APOSTROPHE_DEFAULT = [MarkRule("'", None, None, " ' ")]
COMMA_RULES = [MarkRule(",", NOT_NUM_CHAR, None, " , "), MarkRule(",", None, NOT_NUM_CHAR, " , ")]


def split_commas(text: str) -> str:
    """Perl's three comma rules: `,` split off unless between digits, and after a final number."""
    text = apply_rules(COMMA_RULES, text)
    # s/(\p{IsN})[,]$/$1 ,/
    if len(text) > 1 and text.endswith(",") and NUM_CHAR.match(text, len(text) - 2):
        text = text[:-1] + " ,"
    return text


# Where `PerlTokenizer._split_words` must split a line as a whole, how many words' pieces it keeps
# per tokenizer and place in the line (the cache is emptied when full), and the longest word it
# keeps (longer ones, such as a whole line of Chinese, seldom come again).
APOSTROPHES_MEET = "' '"
MULTIDOT_MARK = "MULTI"  # in every marker `replace_multidots` leaves
MULTIDOT_RUN = re.compile(r"\.{2,}")
MULTIDOT_MARKER = re.compile(r"(?:DOT)+MULTI")
WORD_CACHE_SIZE = 50_000
CACHED_WORD_LENGTH = 40


class PerlTokenizer:
    """`tokenizer.perl -l LANG -no-escape` of RELEASE-4.0 (no -a, no -x, no protected patterns).

    That version has no Finnish/Swedish colon, Catalan middle-dot or Somali glottal rules and does
    not force a period off the last word; only en and fr/it/ga split contractions specially.
    """

    SPACES = LazyPattern(lambda: f"{char_class('Space')}+")
    ASCII_JUNK = re.compile(r"[\000-\037]")
    ENDS_WITH_PERIOD = re.compile(r"^(\S+)\.$")
    HAS_ALPHA = ALPHA_CHAR
    STARTS_LOWER = LazyPattern(lambda: f"^{char_class('IsLower')}")
    STARTS_DIGIT = re.compile(r"^[0-9]+")
    TRAILING_DOT_QUOTE = re.compile(r"\.' ?$")

    def __init__(self, lang: str = "en"):
        self.lang = lang
        self.prefixes = nonbreaking_prefixes(lang)
        self.apostrophe_rules = APOSTROPHE_RULES.get(lang, APOSTROPHE_DEFAULT)
        # each word's pieces, by whether it starts and whether it ends the line
        self._word_pieces: dict[tuple[bool, bool], dict[str, str]] = {
            (first, last): {} for first in (False, True) for last in (False, True)}

    def tokenize_line(self, text: str) -> str:
        """Tokenise one line (no newline); blank lines come back unchanged, as in perl."""
        spaced = self.SPACES.sub(" ", f" {text} ")
        if spaced == " ":
            return text
        if not spaced.isprintable():  # a printable text has no control character to remove
            spaced = self.ASCII_JUNK.sub("", spaced)
        text = self._split_words(_squeeze_spaces(spaced))
        text = _squeeze_spaces(self._split_final_periods(text))
        if text.endswith("'"):
            text = self.TRAILING_DOT_QUOTE.sub(" . ' ", text, count=1)
        return self.restore_multidots(text) if MULTIDOT_MARK in text else text

    @staticmethod
    def replace_multidots(text: str) -> str:
        """Perl's `DOTMULTI` loop in one pass: a run of k dots becomes ` DOT...DOTMULTI` (k times
        DOT), followed by a space unless the run ends the text."""
        return MULTIDOT_RUN.sub(lambda run: _multidot_marker(run, len(text)), text)

    @staticmethod
    def restore_multidots(text: str) -> str:
        """The dots back from their markers: `DOT` k times and `MULTI` become k dots."""
        return MULTIDOT_MARKER.sub(lambda marker: "." * (len(marker.group()) // 3 - 1), text)

    def _split_words(self, text: str) -> str:
        """Special characters, runs of dots, commas and apostrophes split off (`text` has single
        spaces between words and none at its ends), word by word through a cache.

        Each of these perl substitutions looks at most one character beyond a word, which is a
        space (or nothing, at either end of the line), so a word's pieces depend only on the word
        and on whether it starts or ends the line. The one exception: where a word ends with an
        apostrophe and the next starts with one, a match of the first may take the space that a
        match of the second needs, so such a line is split as a whole.
        """
        if APOSTROPHES_MEET in text:
            return self._split_piece(text, True, True)
        words = text.split(" ")
        if len(words) == 1:
            return self._pieces(text, True, True)
        inner = self._word_pieces[False, False]
        middle = [inner.get(word) or self._pieces(word, False, False) for word in words[1:-1]]
        return " ".join([self._pieces(words[0], True, False), *middle,
                         self._pieces(words[-1], False, True)])

    def clear_word_cache(self) -> None:
        """Forget the words seen so far (a benchmark's cold start)."""
        for cache in self._word_pieces.values():
            cache.clear()

    def _pieces(self, word: str, first: bool, last: bool) -> str:
        """`_split_piece` of a word, from the cache when it was seen before."""
        cache = self._word_pieces[first, last]
        pieces = cache.get(word)
        if pieces is None:
            pieces = self._split_piece(word, first, last)
            if len(word) <= CACHED_WORD_LENGTH:
                if len(cache) >= WORD_CACHE_SIZE:
                    cache.clear()
                cache[word] = pieces
        return pieces

    def _split_piece(self, text: str, first: bool, last: bool) -> str:
        """The substitutions of `_split_words` on `text`, which starts the line or follows a
        space (`first`), and ends it or precedes a space (`last`)."""
        before, after = "" if first else " ", "" if last else " "
        text = SPECIAL_CHARACTERS.sub(r" \1 ", before + text + after)
        text = self.replace_multidots(text)
        text = split_commas(text)
        text = apply_rules(self.apostrophe_rules, text)
        return text[len(before):len(text) - len(after)]

    def _split_final_periods(self, text: str) -> str:
        """Perl's word loop: detach a final period unless the word is a known abbreviation. Its
        words are split on single white-space characters, of which `text` has only spaces."""
        text = text.rstrip(" ")
        if not text:
            return ""
        if "." in text:
            words = text.split(" ")
            for i, word in enumerate(words):
                match = word.endswith(".") and self.ENDS_WITH_PERIOD.match(word)
                if match and self._detaches_period(match.group(1), words, i):
                    words[i] = match.group(1) + " ."
            text = " ".join(words)
        return text + " "

    def _detaches_period(self, prefix: str, words: list[str], i: int) -> bool:
        following = words[i + 1] if i + 1 < len(words) else ""
        if ("." in prefix and self.HAS_ALPHA.search(prefix)) or self.prefixes.get(prefix) == 1 \
                or (following and self.STARTS_LOWER.match(following)):  # none after the last
            return False
        return not (self.prefixes.get(prefix) == 2 and self.STARTS_DIGIT.match(following))


def _multidot_marker(run: re.Match, text_length: int) -> str:
    marker = " " + "DOT" * len(run.group()) + MULTIDOT_MARK
    return marker + " " if run.end() < text_length else marker


def _squeeze_spaces(text: str) -> str:
    """`s/ +/ /g` and no space at either end."""
    return " ".join(filter(None, text.split(" ")))


@lru_cache(maxsize=None)
def normalizer(lang: str) -> PerlPunctNormalizer:
    return PerlPunctNormalizer(lang)


@lru_cache(maxsize=None)
def tokenizer(lang: str) -> PerlTokenizer:
    return PerlTokenizer(lang)
