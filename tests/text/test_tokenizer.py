"""Tokenisation parity with the official perl/jieba/MeCab/transliterate chain, line for line."""
import random
import re
import subprocess
import sys
import warnings

import pytest

from laser.errors import LaserError
from laser.text.languages import UnknownLanguage, resolve
from laser.text.moses import (_NON_PRINTING, APOSTROPHE_DEFAULT, APOSTROPHE_RULES,
                              COMMA_RULES, PerlPunctNormalizer, PerlTokenizer, _required_text,
                              apply_rules, remove_non_printing, split_commas)
from laser.text.perl_classes import _ranges, char_class
from laser.text.tokenizer import Tokenizer

from conftest import PARITY, PARITY_STEMS, ROOT, fixture_language, read_fixture_lines


@pytest.mark.parametrize("stem", PARITY_STEMS)
def test_tokenisation_matches_official_output(stem):
    lines = read_fixture_lines(PARITY / "inputs" / f"{stem}.txt")
    expected = read_fixture_lines(PARITY / "expected" / f"{stem}.tok")
    tokenizer = Tokenizer(fixture_language(stem))
    got = [tokenizer(line) for line in lines]
    assert len(got) == len(expected)
    mismatches = [(i + 1, e, g) for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    assert mismatches == []


@pytest.mark.parametrize("code, moses", [
    ("en", "en"), ("eng", "en"), ("deu", "de"), ("ger", "de"), ("zh", "zh"), ("cmn", "zh"),
    ("wuu", "zh"), ("yue", "zh"), ("zh-Hans", "zh"), ("cmn_Hani", "zh"), ("ja", "ja"),
    ("jpn", "ja"), ("el", "el"), ("ell", "el"), ("gre", "el"), ("FRA", "fr"), ("kab", "kab"),
])
def test_language_codes_resolve(code, moses):
    assert resolve(code).moses == moses


def test_segmenters_and_romanisation_follow_language():
    assert resolve("cmn").segmenter == "jieba"
    assert resolve("jpn").segmenter == "mecab"
    assert resolve("ell").romanize and not resolve("en").romanize


def test_unknown_language_is_an_error_suggesting_close_ones():
    with pytest.raises(UnknownLanguage, match=r"^xx-notalanguage: unknown language \(an ISO 639 "
                                              r"code, a FLORES-200 code or an English name\)"):
        Tokenizer("xx-notalanguage")
    with pytest.raises(UnknownLanguage, match=r"^frnch: unknown language \(did you mean fra "
                                              r"\(French\)\?\); `laser models --languages` "
                                              r"lists the supported languages$"):
        Tokenizer("frnch")


@pytest.mark.parametrize("code", ["ber", "kzj", "toki", "tlh", "ang", "en-US", "zh-Hant",
                                  "cmn_Hani", "Central Kurdish", "IGBO"])
def test_codes_of_the_laser_data_and_every_iso_code_stay_accepted(code):
    assert "world" in Tokenizer(code)("Hello, world!")


def test_non_printing_characters_become_spaces():
    assert remove_non_printing("a\tb\u200bc\u00add\x07e") == "a b c d e"
    assert remove_non_printing("\U0001F600\U000E0001\U0010FFFF x") == "\U0001F600   x"


EVERY_CODE_POINT = "".join(map(chr, range(0x110000)))


def _plain_set(names, also="", negate=False):
    """The one-bracket set `[...]` / `[^...]` of Perl's classes, as the tokenizer wrote it before."""
    spans = "".join(f"\\U{lo:08X}-\\U{hi:08X}" for name in names for lo, hi in _ranges()[name])
    return f"[{'^' * negate}{spans}{re.escape(also)}]"


@pytest.mark.parametrize("names, also, negate", [
    (("C",), "", False), (("IsAlpha",), "", True), (("IsAlpha", "IsN"), "", True),
    (("IsN",), "", False), (("Space",), "", False), (("IsLower",), "", False),
    (("IsAlnum", "Space"), ".'`,-", True),
])
def test_split_character_classes_match_the_plain_sets_on_every_code_point(names, also, negate):
    fast = re.compile(char_class(*names, also=also, negate=negate))
    plain = re.compile(_plain_set(names, also, negate))
    assert fast.findall(EVERY_CODE_POINT) == plain.findall(EVERY_CODE_POINT)


@pytest.mark.parametrize("lang, text, expected", [
    # perl swaps ." after every language but en and cs, also at the end of the line
    ("de", 'Er sagte "Ja."', 'Er sagte "Ja".'),
    ("cs", 'Řekl "Ano."', 'Řekl "Ano."'),
    ("en", 'He said "yes".', 'He said "yes."'),
    # all of ‘ ‚ ’ become " unless between ASCII letters
    ("en", "‘quoted’ and don’t", "\"quoted\" and don't"),
    # the byte-oriented perl script knows only ASCII digits
    ("ar", "\u0663 %", "\u0663 %"),
    ("en", "5\u00a0000", "5.000"),
    ("fr", "5\u00a0000", "5,000"),
])
def test_punctuation_normalisation_has_perl_semantics(lang, text, expected):
    assert PerlPunctNormalizer(lang).normalize(text) == expected


@pytest.mark.parametrize("lang, text, expected", [
    ("hi", "केंद्रीय", "केंद ् रीय"),                      # virama is not \p{IsAlnum} in perl
    ("en", "國葬 and 한국어", "國葬 and 한국어"),             # Han/Hangul runs stay together
    ("en", "Mr. Smith at 5 p.m.", "Mr. Smith at 5 p.m."),   # no forced split of the last word
    ("en", "It's John's.", "It 's John 's ."),
    ("fr", "l'homme", "l' homme"),
    ("ca", "l'home", "l ' home"),                            # ca had no contraction rule then
    ("en", "Wait... what?", "Wait ... what ?"),
    ("en", "   ", "   "),                                    # blank lines pass through unchanged
])
def test_tokenizer_has_perl_semantics(lang, text, expected):
    assert PerlTokenizer(lang).tokenize_line(text) == expected


def test_every_line_keeps_its_place():
    tokenizer = Tokenizer("en")
    lines = ["", " ", "one", "\t", "two words", "\u200b"]
    assert len(list(tokenizer.tokenize_lines(lines))) == len(lines)


def test_missing_segmenter_gives_install_hint(monkeypatch):
    import builtins
    from laser.text import segmenters
    real_import = builtins.__import__

    def no_jieba(name, *args, **kwargs):
        if name == "jieba":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    segmenters.jieba_segmenter.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_jieba)
    with pytest.raises(LaserError, match=r"a dependency of laser-toolkit that is not installed: pip install jieba$"):
        segmenters.jieba_segmenter()
    monkeypatch.undo()
    segmenters.jieba_segmenter.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert segmenters.jieba_segmenter()("我爱北京") == "我 爱 北京"


def _regex_rules(rules):
    """Each mark rule as the perl substitution it stands for, run by `re`."""
    def pattern(rule):
        left = f"({rule.left.pattern})" if rule.left else "()"
        right = f"({rule.right.pattern})" if rule.right else "()"
        return re.compile(left + re.escape(rule.mark) + right)
    return [(pattern(rule), rule.replacement.replace("\\", "\\\\")) for rule in rules]


MARK_ALPHABET = "'',,,  aZé5٣x\u0301\U00010400\U0001D7CE.-"


@pytest.mark.parametrize("rules", [*APOSTROPHE_RULES.values(), APOSTROPHE_DEFAULT, COMMA_RULES])
def test_mark_rules_match_the_perl_substitutions_on_random_text(rules):
    generator = random.Random(13)
    texts = ["".join(generator.choices(MARK_ALPHABET, k=generator.randint(0, 12)))
             for _ in range(5000)] + ["''''", ",,,", "a'b'c", "5,5,a", "'", ","]
    for text in texts:
        expected = text
        for pattern, replacement in _regex_rules(rules):
            expected = pattern.sub(lambda m: m[1] + replacement + m[2], expected)
        assert apply_rules(rules, text) == expected, text


@pytest.mark.parametrize("text, expected", [
    # both of the first two rules fire on "a," (later steps squeeze the spaces)
    ("5,", "5 ,"), ("a,", "a  ,  "), (",", ","), ("1,000", "1,000"), ("x,5", "x  ,  5"),
    ("\U0001D7CE,", "\U0001D7CE ,"),  # an astral digit is a number too
])
def test_commas_split_as_perl_splits_them(text, expected):
    assert split_commas(text) == expected


def test_python_counts_every_perl_non_printing_character_as_not_printable():
    """`remove_non_printing` skips the search on printable lines: that needs this to hold."""
    assert not any(character.isprintable()
                   for character in _NON_PRINTING.findall(EVERY_CODE_POINT))


WORD_ALPHABET = "'''',,..  aZé5٣s\u0301(-\"$DOTMULTI"


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_words_split_through_the_cache_as_the_whole_line_splits(lang):
    """The word cache gives what the substitutions give on the whole line, for every line, on
    first sight of its words and from the cache."""
    generator = random.Random(7)
    tokenizer = PerlTokenizer(lang)
    texts = [" ".join("".join(generator.choices(WORD_ALPHABET, k=generator.randint(1, 12))).split())
             for _ in range(4000)] + ["a' 'b", "5, 'x", "'a b'", "x.. y", "a...", "...",
                                      "'" + "é" * 60 + ",5 x"]  # too long to be kept
    for text in texts * 2:  # the second time, from the cache
        assert tokenizer._split_words(text) == tokenizer._split_piece(text, True, True), text
    tokenizer.clear_word_cache()
    assert not any(tokenizer._word_pieces.values())


@pytest.mark.parametrize("lang", ["en", "fr", "cs"])
def test_normaliser_skipping_rules_changes_nothing(lang):
    generator = random.Random(11)
    alphabet = "„“”–—´‘’‚…«»\u00a0%º:;?!,.\"'`()  aZ5 nºcm\r"
    normalizer = PerlPunctNormalizer(lang)
    for _ in range(4000):
        text = "".join(generator.choices(alphabet, k=generator.randint(0, 16))) + "\n"
        expected = text
        for rule in normalizer.compiled.rules:
            expected = rule.pattern.sub(rule.replacement, expected)
        assert normalizer.compiled.apply(text) == expected, text


@pytest.mark.parametrize("pattern, needle", [
    ("  +", "  "), (r"\) ([.!:?;,])", ") "), ("nº\u00a0", "nº\u00a0"), (r'(\.+)"', ""),
    ("a*b", ""), ("ab+c", "ab"), ("ab*c", "a"),
])
def test_required_text_is_the_literal_start_of_every_match(pattern, needle):
    assert _required_text(pattern) == needle


def test_character_classes_are_compiled_only_when_text_needs_them():
    probe = ("from laser.text import moses\nfrom laser.text.perl_classes import LazyPattern\n"
             "from laser.text.tokenizer import Tokenizer\n"
             "Tokenizer('en')('The book is on the table.')\n"
             "print(sorted(name for name, value in vars(moses).items()\n"
             "             if isinstance(value, LazyPattern) and 'compiled' in vars(value)))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['SPECIAL_CHARACTERS']"  # no C, IsAlpha, IsN, IsLower yet
