"""Regenerate laser/data/iso639.txt from Debian's iso-codes JSON (run by hand, not at install)."""
import json
from pathlib import Path

ISO = Path("/usr/share/iso-codes/json")
# Individual languages whose Moses rules are those of their macrolanguage's ISO 639-1 code.
MACRO_MEMBERS = {
    "ar": "arb acm acq aeb afb ajp apc apd arq ars ary arz abv acw acx ayl ayh ayn ayp shu ssh",
    "zh": "cmn wuu yue lzh gan hak hsn cjy cdo cpx czh czo mnp",
    "fa": "pes prs", "sw": "swh swc", "ne": "npi", "or": "ory", "ps": "pbt pbu pst",
    "om": "gaz hae orc", "mn": "khk mvf", "et": "ekk vro", "lv": "lvs ltg", "ms": "zsm zlm max min",
    "az": "azj azb", "uz": "uzn uzs", "mg": "plt", "qu": "quy quz", "kr": "knc", "yi": "ydd yih",
    "sq": "aln als", "ku": "kmr ckb sdh", "no": "nob nno", "hr": "hrv", "sr": "srp", "bs": "bos",
    "lb": "ltz", "gn": "grn gug", "ff": "fuc fuv", "ay": "ayr", "kg": "kng ldi kwy",
    "tw": "twi", "ak": "aka twi fat", "iu": "ike ikt", "cr": "crk", "oj": "ojb ojg",
}


def main() -> None:
    codes = {}
    for entry in json.loads((ISO / "iso_639-3.json").read_text())["639-3"]:
        codes[entry["alpha_3"]] = entry.get("alpha_2", "")
    for entry in json.loads((ISO / "iso_639-2.json").read_text())["639-2"]:
        if "alpha_2" in entry:
            codes[entry.get("bibliographic", entry["alpha_3"])] = entry["alpha_2"]
            codes.setdefault(entry["alpha_3"], entry["alpha_2"])
    for two, members in MACRO_MEMBERS.items():
        for three in members.split():
            codes[three] = two
    lines = [f"{three} {two}".rstrip() for three, two in sorted(codes.items())]
    Path(__file__).parents[1].joinpath("laser/data/iso639.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
