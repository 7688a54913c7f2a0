#!/usr/bin/env python3
"""Tatoeba-style similarity search error over a folder of aligned files.

    python tasks/xsim.py DIR [--embeddings-dir E | --model M] [--margin absolute --margin ratio]

DIR holds tatoeba.xxx-eng.xxx / tatoeba.xxx-eng.eng pairs (line i of one translates line i of the
other). Prints, per language, the error (%) searching xxx in eng and eng in xxx; the protocol is in
docs/evaluation.md. Same as `laser eval tatoeba`.
"""
import sys

from laser.cli import main

if __name__ == "__main__":
    main(["eval", "tatoeba", *sys.argv[1:]], prog_name="tasks/xsim.py")
