#!/usr/bin/env python3
"""BUCC 2018 parallel sentence mining F1, on the official BUCC file layout.

    python tasks/bucc.py BUCC_DIR --pair de-en [--embeddings-dir E | --model M]
                         [--train-split training] [--test-split test] [--extracted pairs.tsv]

BUCC_DIR holds PAIR/PAIR.SPLIT.{xx,en,gold} (`id<TAB>sentence` files and gold id pairs). The
threshold that maximises F1 on the training split is applied to the test split; the protocol is in
docs/evaluation.md. Same as `laser eval bucc`.
"""
import sys

from laser.cli import main

if __name__ == "__main__":
    main(["eval", "bucc", *sys.argv[1:]], prog_name="tasks/bucc.py")
