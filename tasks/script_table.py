#!/usr/bin/env python3
"""Writes laser/lid/script_table.py: the runs of code points that are letters of one script,
read from this Python's Unicode database (laser.lid.scripts.unicode_ranges), which laser's
language ID reads at every start instead of the 1.1 million characters' names.

    python tasks/script_table.py [--out laser/lid/script_table.py]
"""
from __future__ import annotations

import argparse
import unicodedata
from pathlib import Path

from laser.io.atomic import atomic_text_output
from laser.lid.scripts import unicode_ranges

HEADER = '''"""The code points that are letters of each script (first, last, ISO 15924 code), generated
by tasks/script_table.py from Python's Unicode database {version}: do not edit."""

UNICODE_VERSION = "{version}"
RANGES = (
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="laser/lid/script_table.py", type=Path)
    args = parser.parse_args()
    with atomic_text_output(str(args.out)) as out:
        out.write(HEADER.format(version=unicodedata.unidata_version))
        for first, last, code in unicode_ranges():
            out.write(f"    (0x{first:05X}, 0x{last:05X}, \"{code}\"),\n")
        out.write(")\n")


if __name__ == "__main__":
    main()
