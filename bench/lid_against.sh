#!/bin/bash
# `laser lid` end to end, this checkout against another commit, alternated: the CPU time of each
# run on LINES lines of corpus dev text (the first 1,000 of each language's dev file, cycled),
# one BLAS thread. Run from the project root:
#   bench/lid_against.sh BASE_COMMIT [CORPUS=../shared/data/corpus] [LINES=200000] [RUNS=3]
set -euo pipefail
base=$1 corpus=${2:-../shared/data/corpus} lines=${3:-200000} runs=${4:-3}
python=${PYTHON:-.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$base" laser setup.py README.md requirements.txt | tar -x -C "$work"
cp -r models "$work/"
(cd "$work" && "$OLDPWD/$python" setup.py -q build_ext --inplace >/dev/null 2>&1)
for path in "$corpus"/dev/*-eng.tsv.gz; do zcat "$path" | head -n 1000 | cut -f1; done \
  | tr -d '\r' > "$work/dev.txt"
awk -v n="$lines" '{line[NR] = $0} END {for (i = 0; i < n; i++) print line[i % NR + 1]}' \
  "$work/dev.txt" > "$work/lines.txt"
# each checkout's laser, not the virtualenv's editable one
launcher='import os, sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, os.environ["ROOT"])
from laser.cli import main
sys.argv[0] = "laser"
main()'
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
for run in $(seq "$runs"); do
  for side in "$base" this; do
    root=$([ "$side" = this ] && pwd || echo "$work")
    cpu=$( { /usr/bin/time -f "%U %S" env ROOT="$root" "$python" -c "$launcher" lid \
      "$work/lines.txt" -o "$work/out.tsv" -q; } 2>&1 | tail -1)
    echo "$side $cpu" | awk -v n="$lines" '{printf "%s: %.2f s CPU, %.0f lines/s a core\n", $1, $2 + $3, n / ($2 + $3)}'
  done
done
