#!/bin/bash
# GPU calls before teacher.sh, one per part, for a `pack.py --teacher use+e5` folder (carry
# .gpu/e5-K): keep the carried part of the e5 block in WORK/e5.   tools/gpu/stash.sh .gpu/e5-0
set -e
work=${2:-/tmp/gw}
mkdir -p "$work/e5"
cp "$1"/e5-*.npz "$work/e5/"
ls -la "$work/e5"
