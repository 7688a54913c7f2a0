#!/usr/bin/env python3
"""Parallel English-X sentences from the translation catalogues of Debian packages.

    python tasks/debian_l10n_pairs.py OUT --corpus ../shared/data/corpus \\
        [--packages tasks/debian_l10n_packages.txt [LIST ...]] [--debs DEBS] [--exclude FILE ...]
        [--share 0.5] [--seed 13]

Free software is translated message by message: each gettext catalogue (`.mo`) pairs an English
message with its translation. This task downloads the packages named in the --packages lists
(pinned `name=version` lines; `apt-get download` on a Debian system, kept in --debs, default
OUT/debs), reads every catalogue under a `LC_MESSAGES` folder with `dpkg-deb`, and keeps the
pairs of whole sentences: the English side 6-60 words and starting with a capital, both sides
at most 250 characters (the corpus's limit), no placeholders, markup, paths or ellipses, and a
plausible length ratio. A pair whose normalised English or foreign side is in the corpus's dev
split or in an --exclude file (any tab-separated cell: e.g. SIB-200's splits) is dropped, as the
corpus drops them.

OUT/train is the corpus's training split with, for each of its languages that the catalogues
cover, a random sample of the new pairs of at most --share times the language's own pair count
(so the new text never outweighs the old); OUT/dev links to the corpus's dev split. Train on it
with `laser train OUT ...`; docs/experiments/training-log.md ("Run L", "Run M", "Run M1") tells what it changed.
"""
from __future__ import annotations

import argparse
import gettext
import gzip
import io
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator, Mapping

from tqdm import tqdm

from laser.errors import LaserError
from laser.training.corpus import find_pair_files, read_pairs

PACKAGES = Path(__file__).with_name("debian_l10n_packages.txt")
# the corpus's codes where ISO 639-3 has a macrolanguage or another code (its MANIFEST's folds)
CORPUS_CODES = {"fas": "pes", "msa": "zsm", "swa": "swh", "lav": "lvs", "nep": "npi", "pus": "pbt",
                "zho": "cmn", "nor": "nob", "orm": "gaz", "fil": "tgl"}
UNSAFE = re.compile(r"%[-+ #0-9.]*[a-zA-Z(]|[{}<>\\|\[\]@$=/~^*#`]|https?:|\.\.\.$|…|\t|&[a-z]+;")
MNEMONIC = re.compile(r"(?<![\w&])[_&](?=\w)")  # _File, &File


@dataclass(frozen=True)
class PairRules:
    """Which catalogue pairs count as parallel sentences."""
    min_words: int = 6
    max_words: int = 60
    max_chars: int = 250
    min_ratio: float = 0.15  # foreign characters per English character
    max_ratio: float = 4.0


def normalised(text: str) -> str:
    """The corpus's matching key: NFKC, lower case, no punctuation, separators or controls."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] not in "PZC")


def iso639_3(two_letter: Mapping[str, str], locale: str) -> str:
    """The ISO 639-3 code of a gettext locale (`pt_BR`, `sr@latin`, `zh_TW`, `ast`)."""
    base = re.split(r"[_@.-]", locale)[0].lower()
    code = two_letter.get(base, base)
    return CORPUS_CODES.get(code, code)


def two_letter_codes() -> dict[str, str]:
    """ISO 639-1 -> 639-3 from Debian's iso-codes package."""
    path = Path("/usr/share/iso-codes/json/iso_639-3.json")
    if not path.exists():
        raise LaserError(f"{path}: missing; install Debian's iso-codes package")
    return {entry["alpha_2"]: entry["alpha_3"]
            for entry in json.loads(path.read_text(encoding="utf-8"))["639-3"]
            if "alpha_2" in entry}


def read_package_list(path: Path) -> list[str]:
    """The `name=version` lines of a package list (blank lines and # comments skipped)."""
    lines = [line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    for number, line in enumerate(lines, 1):
        if line and "=" not in line:
            raise LaserError(f"{path}:{number}: expected name=version, got {line!r}")
    return [line for line in lines if line]


def read_package_lists(paths: list[Path]) -> list[str]:
    """The union of the lists' `name=version` lines, in their order."""
    return list(dict.fromkeys(package for path in paths for package in read_package_list(path)))


def download(packages: list[str], debs: Path) -> list[Path]:
    """The packages' .deb files in `debs`, downloaded with apt-get where missing."""
    debs.mkdir(parents=True, exist_ok=True)
    files = []
    for package in tqdm(packages, desc="packages", unit="pkg", disable=None):
        name, version = package.split("=", 1)
        pattern = f"{name}_{version.replace(':', '%3a')}_*.deb"
        found = sorted(debs.glob(pattern))
        if not found:
            if not shutil.which("apt-get"):
                raise LaserError(f"{debs}: no {pattern} and no apt-get to download {package}")
            done = subprocess.run(["apt-get", "download", package], cwd=debs,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise LaserError(f"apt-get download {package}: {done.stderr.strip()}")
            found = sorted(debs.glob(pattern))
        files += found
    return files


def catalogues(deb: Path) -> Iterator[tuple[str, dict]]:
    """(locale, message catalogue) of each .mo file under a LC_MESSAGES folder of the package."""
    with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
        try:
            yield from archive_catalogues(process.stdout)
        except tarfile.ReadError:
            pass  # dpkg-deb wrote no archive; its message follows
        message = process.stderr.read().decode(errors="replace").strip()
    if process.returncode:
        raise LaserError(f"{deb}: {message or 'dpkg-deb cannot read it'}".replace("\n", " "))


def archive_catalogues(stream: IO[bytes]) -> Iterator[tuple[str, dict]]:
    """(locale, catalogue) of the .mo files in a tar stream (those gettext cannot read skipped)."""
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            parts = member.name.split("/")
            if not (member.isfile() and member.name.endswith(".mo")
                    and "LC_MESSAGES" in parts[1:]):
                continue
            data = archive.extractfile(member).read()
            try:
                catalogue = gettext.GNUTranslations(io.BytesIO(data))._catalog
            except (OSError, LookupError, ValueError):
                continue  # a malformed header or a legacy encoding
            yield parts[parts.index("LC_MESSAGES") - 1], catalogue


def messages(catalogue: dict) -> Iterator[tuple[str, str]]:
    """(English, translation) of each message, the singular form of plural ones, lines paired
    when both sides have as many."""
    for key, translation in catalogue.items():
        if isinstance(key, tuple):
            if key[1] != 0:
                continue
            key = key[0]
        english = key.split("\x04")[-1]  # drop a msgctxt
        if not english:
            continue  # the catalogue's header
        english_lines = [line for line in english.split("\n") if line.strip()]
        foreign_lines = [line for line in translation.split("\n") if line.strip()]
        if len(english_lines) == len(foreign_lines):
            yield from zip(english_lines, foreign_lines)


def cleaned(text: str) -> str:
    return " ".join(MNEMONIC.sub("", text).split())


def is_sentence_pair(english: str, foreign: str, rules: PairRules) -> bool:
    if not foreign or not rules.min_words <= len(english.split()) <= rules.max_words:
        return False
    if max(len(english), len(foreign)) > rules.max_chars:
        return False
    if UNSAFE.search(english) or UNSAFE.search(foreign):
        return False
    if not english[0].isupper() or english.isupper():
        return False
    return rules.min_ratio <= len(foreign) / len(english) <= rules.max_ratio


def is_new(english: str, foreign: str, held_out: set[str]) -> bool:
    """A translated pair (the sides differ once normalised) with no side in `held_out`."""
    keys = normalised(english), normalised(foreign)
    return keys[0] != keys[1] and held_out.isdisjoint(keys)


def held_out_keys(dev_dir: Path, exclude: list[Path]) -> set[str]:
    """Normalised sentences no new pair may share: the dev split's both sides, every cell of
    the --exclude files."""
    keys = set()
    for pair_file in find_pair_files(dev_dir):
        for foreign, english in read_pairs(pair_file.path):
            keys.update((normalised(foreign), normalised(english)))
    for path in exclude:
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                keys.update(normalised(cell) for cell in line.rstrip("\n").split("\t"))
    return keys


def catalogue_pairs(debs: list[Path], languages: set[str], held_out: set[str],
                    rules: PairRules) -> dict[str, set[tuple[str, str]]]:
    """language -> {(foreign, English)} over the packages' catalogues."""
    two_letter = two_letter_codes()
    pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for deb in tqdm(debs, desc="catalogues", unit="pkg", disable=None):
        for locale, catalogue in catalogues(deb):
            lang = iso639_3(two_letter, locale)
            if lang not in languages:
                continue
            for english, foreign in messages(catalogue):
                english, foreign = cleaned(english), cleaned(foreign)
                if is_sentence_pair(english, foreign, rules) and is_new(english, foreign, held_out):
                    pairs[lang].add((foreign, english))
    return pairs


def write_corpus(corpus: Path, pairs: Mapping[str, set[tuple[str, str]]], out: Path,
                 share: float, seed: int) -> dict[str, int]:
    """OUT/train (the corpus's pairs, plus a sample of the new ones) and OUT/dev; the new pair
    count per language."""
    (out / "train").mkdir(parents=True, exist_ok=True)
    if not (out / "dev").exists():
        (out / "dev").symlink_to((corpus / "dev").resolve())
    rng, added = random.Random(seed), {}
    for pair_file in find_pair_files(corpus / "train"):
        target = out / "train" / pair_file.path.name
        if target.exists() or target.is_symlink():
            target.unlink()
        if pair_file.lang not in pairs:
            target.symlink_to(pair_file.path.resolve())
            continue
        new = {f"{f}\t{e}" for f, e in pairs[pair_file.lang]}
        partial = target.with_name(target.name + ".part")
        with gzip.open(partial, "wt", encoding="utf-8") as sink:
            corpus_pairs = 0
            for foreign, english in read_pairs(pair_file.path):  # streamed, written unchanged
                line = f"{foreign}\t{english}"
                sink.write(line + "\n")
                new.discard(line)
                corpus_pairs += 1
            sample = sorted(new)
            rng.shuffle(sample)
            sample = sample[:int(share * corpus_pairs)]
            sink.write("".join(line + "\n" for line in sample))
        partial.rename(target)
        added[pair_file.lang] = len(sample)
    return added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpus", type=Path, required=True,
                        help="The corpus (train/ and dev/ of LANG-eng.tsv.gz).")
    parser.add_argument("--packages", type=Path, nargs="+", default=[PACKAGES],
                        help="Package lists (name=version lines); their union is read.")
    parser.add_argument("--debs", type=Path, help="Where the .deb files are (default OUT/debs).")
    parser.add_argument("--exclude", type=Path, nargs="*", default=[],
                        help="Files whose sentences no new pair may hold (tab-separated cells).")
    parser.add_argument("--share", type=float, default=0.5,
                        help="New pairs per language, at most this times its corpus pairs.")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    if not shutil.which("dpkg-deb"):
        sys.exit("debian_l10n_pairs: needs dpkg-deb (Debian's dpkg) to read the packages")
    try:
        debs = download(read_package_lists(args.packages), args.debs or args.out / "debs")
        languages = {pf.lang for pf in find_pair_files(args.corpus / "train")}
        pairs = catalogue_pairs(debs, languages, held_out_keys(args.corpus / "dev", args.exclude),
                                PairRules())
        added = write_corpus(args.corpus, pairs, args.out, args.share, args.seed)
    except LaserError as error:
        sys.exit(f"debian_l10n_pairs: {error}")
    english = {e for found in pairs.values() for _, e in found}
    print(f"{sum(added.values())} new pairs in {len(added)} languages "
          f"({len(english)} distinct English sentences found) -> {args.out / 'train'}")


if __name__ == "__main__":
    main()
