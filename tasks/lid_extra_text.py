#!/usr/bin/env python3
"""More language-ID training text from registries' packages, for the recipe's --extra: word
lines drawn from `wordfreq`'s frequency lists, the names of Unicode CLDR's locale data as `babel`
ships it (language, territory, script and currency names, months and days) and, with --debs, the
translated messages of Debian packages' gettext catalogues.

    python tasks/lid_extra_text.py OUT_DIR [--lines 3000] [--seed 2] [--debs DIR [--packages LIST ...]]

Writes OUT_DIR/wordfreq.tsv and OUT_DIR/cldr.tsv (and OUT_DIR/debian.tsv), `LABEL<TAB>LINE` a
line, labelled as the corpus is (laser.lid.corpus.label_of: the language's ISO 639-3 code and the
script of the line's letters). Needs `wordfreq` and `babel` (installed in .venv-lid by `make
lid-model`). Licences: wordfreq's code Apache-2.0, its word lists CC-BY-SA 4.0; babel
BSD-3-Clause, the CLDR data it ships under the Unicode License v3. The catalogues are those of the
packages that the --packages lists pin (default tasks/debian_l10n_packages*.txt, 569 packages of
Debian 12), downloaded into DIR with `apt-get download` where DIR lacks them (about 900 MB);
each package's translations carry its own free licence (its `/usr/share/doc/PACKAGE/copyright`).

A wordfreq line is 1 to 6 words (1 to 4 without spaces for Chinese and Japanese) drawn from
the language's 30,000 most frequent words with weights of the square root of their frequency; a
word more frequent in English than in the language is left out (a loanword such as "ok"), and a
one-word line only of a word that no other list holds. A CLDR name is kept only where no other
language's locale data holds it. A Debian message is kept translated (not its English once
normalised), without placeholders or markup, of 1 to 40 words and at most 250 characters, and
only where no other language's catalogues hold it; so is the English message it translates, as
English. Traditional-Chinese and English catalogues are left out (the corpus labels all
Mandarin `zho_Hans`; an English catalogue's messages are the English ones, respelt).
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

from laser.errors import LaserError
from laser.lid.corpus import PIVOT, label_of
from laser.text.flores import MACROLANGUAGES, flores_names
from laser.text.languages import iso_table

TOP_WORDS = 30_000
PACKAGE_LISTS = sorted(Path(__file__).parent.glob("debian_l10n_packages*.txt"))
NO_SPACES = {"zh", "ja"}
# wordfreq and CLDR codes that name no single language of the model (Serbo-Croatian).
AMBIGUOUS = {"sh"}
TRADITIONAL = {"TW", "HK", "MO"}


def iso3(code: str) -> str:
    """A wordfreq or CLDR code (`sk`, `fil`, `ar`) as the model's ISO 639-3 language."""
    if len(code) == 3:
        return MACROLANGUAGES.get(code, code)
    flores = {name.split("_")[0] for name in flores_names()}
    threes = sorted((three for three, two in iso_table().items() if two == code and len(three) == 3),
                    key=lambda three: (three not in flores, three))  # not a 639-2/B code (`bur`)
    macro = next((three for three in threes if three in MACROLANGUAGES), None)
    return MACROLANGUAGES[macro] if macro else (threes[0] if threes else code)


def wordfreq_lines(count: int, rng: random.Random) -> list[tuple[str, str]]:
    import wordfreq

    languages = sorted(set(wordfreq.available_languages("small")) - AMBIGUOUS)
    words = {language: wordfreq.top_n_list(language, TOP_WORDS) for language in languages}
    holders: dict[str, int] = defaultdict(int)
    for language_words in words.values():
        for word in set(language_words):
            holders[word] += 1
    english = wordfreq.get_frequency_dict("en")
    rows = []
    for language in languages:
        frequency = wordfreq.get_frequency_dict(language)
        kept = [word for word in words[language] if any(c.isalpha() for c in word) and (
            language == "en" or english.get(word, 0.0) <= frequency[word])]
        weights = [frequency[word] ** 0.5 for word in kept]
        singles = [word for word in kept if holders[word] == 1]
        rows += [(iso3(language), line) for line in word_lines(
            kept, weights, singles, language in NO_SPACES, count, rng)]
        print(f"wordfreq {language}: {len(kept)} words", file=sys.stderr)
    return rows


def word_lines(words: list[str], weights: list[float], singles: list[str], no_spaces: bool,
               count: int, rng: random.Random) -> list[str]:
    """`count` lines of 1 to 6 (without spaces: 1 to 4) words drawn by `weights`."""
    lines = []
    longest = 4 if no_spaces else 6
    for _ in range(count):
        size = rng.randint(1, longest)
        if size == 1:
            if singles:
                lines.append(rng.choice(singles))
            continue
        drawn = rng.choices(words, weights, k=size)
        lines.append(("" if no_spaces else " ").join(drawn))
    return lines


def cldr_lines() -> list[tuple[str, str]]:
    from babel import Locale, localedata

    names_of: dict[str, set[str]] = defaultdict(set)
    for identifier in localedata.locale_identifiers():
        parts = identifier.split("_")
        if parts[0] in AMBIGUOUS or (len(parts) > 1 and not parts[1].istitle()):
            continue  # territory variants (`fr_BE`) repeat their language's names
        locale = Locale.parse(identifier)
        language = iso3(locale.language)
        for names in (locale.languages, locale.territories, locale.scripts,
                      locale.currencies, locale.months.get("format", {}).get("wide", {}),
                      locale.days.get("format", {}).get("wide", {})):
            names_of[language].update(str(name) for name in names.values() if name)
    holders: dict[str, int] = defaultdict(int)
    for names in names_of.values():
        for name in names:
            holders[name.lower()] += 1
    return [(language, name) for language in sorted(names_of)
            for name in sorted(names_of[language]) if holders[name.lower()] == 1]


def debian_lines(debs: list[Path]) -> list[tuple[str, str]]:
    """(language, message) of the translated messages in the catalogues of the .deb files."""
    from debian_l10n_pairs import UNSAFE, catalogues, cleaned, messages, normalised

    found: dict[str, set[str]] = defaultdict(set)
    for deb in debs:
        for locale, catalogue in catalogues(deb):
            language = debian_language(locale)
            if language is None:
                continue
            for english, translation in messages(catalogue):
                line, source = cleaned(translation), cleaned(english)
                if normalised(line) == normalised(source):
                    continue
                for code, text in ((language, line), (PIVOT, source)):
                    if is_message_line(text) and not UNSAFE.search(text):
                        found[code].add(text)
    holders: dict[str, int] = defaultdict(int)
    for lines in found.values():
        for k in {normalised(line) for line in lines}:
            holders[k] += 1
    print(f"debian: {len(found)} languages", file=sys.stderr)
    return [(language, line) for language in sorted(found)
            for line in sorted(found[language]) if holders[normalised(line)] == 1]


def debian_language(locale: str) -> str | None:
    """A gettext locale (`pt_BR`, `sr@latin`) as the model's language; None for English and
    traditional Chinese."""
    base, _, region = re.split(r"[@.]", locale)[0].partition("_")
    if base.lower() == "en" or (base.lower() == "zh" and region.upper() in TRADITIONAL):
        return None
    return iso3(base.lower()) if base.isalpha() else None


def is_message_line(line: str) -> bool:
    return 0 < len(line) <= 250 and len(line.split()) <= 40 and any(c.isalpha() for c in line)


def write(path: Path, rows: list[tuple[str, str]]) -> None:
    labelled = 0
    with path.open("w", encoding="utf-8") as out:
        for language, line in rows:
            label = label_of(language, line)
            if label and "\t" not in line:
                out.write(f"{label}\t{line}\n")
                labelled += 1
    print(f"{path}: {labelled} lines", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--lines", type=int, default=3000, help="wordfreq lines a language")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--debs", type=Path, help="where the .deb files whose catalogues to read are")
    parser.add_argument("--packages", type=Path, nargs="+", default=PACKAGE_LISTS,
                        help="package lists (name=version lines) for --debs; their union is read")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    write(args.out / "cldr.tsv", cldr_lines())
    write(args.out / "wordfreq.tsv", wordfreq_lines(args.lines, random.Random(args.seed)))
    if args.debs:
        try:
            write(args.out / "debian.tsv", debian_lines(pinned_debs(args.packages, args.debs)))
        except LaserError as error:
            sys.exit(f"lid_extra_text: {error}")


def pinned_debs(lists: list[Path], debs: Path) -> list[Path]:
    """The .deb files of the packages the lists pin, downloaded into `debs` where missing."""
    from debian_l10n_pairs import download, read_package_lists

    return download(read_package_lists(lists), debs)


if __name__ == "__main__":
    main()
