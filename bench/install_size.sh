#!/usr/bin/env bash
# The light install against the install with torch (CPU build), side by side in one run:
# environment size and install time of the wheel in a fresh virtualenv, `import laser`, and a
# 10-line `laser embed` with the default model's graph already cached (best of 5 runs each, wall
# clock / CPU time: on a busy machine the CPU time is the steadier figure).
# Versions are those of requirements.txt (as constraints); pip reads its local cache when it has
# the files. torch's default (CUDA) build is not installed here: it pulls gigabytes of nvidia-*
# packages. Run from the project root: bash bench/install_size.sh [PYTHON]
set -euo pipefail
PYTHON=${1:-python3}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$PYTHON" -m pip wheel --no-deps --no-build-isolation -q -w "$OUT/wheel" . >/dev/null
WHEEL=$(ls "$OUT"/wheel/laser_toolkit-*.whl)
for i in $(seq 10); do echo "The book number $i is on the table."; done > "$OUT/ten.txt"

best_of_5() {  # the fastest of 5 runs of a command: wall-clock seconds / CPU seconds (user+sys)
  local best="999 999" TIMEFORMAT='%R %U %S' run
  for _ in 1 2 3 4 5; do
    run=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
    best=$(echo "$run $best" | awk '{w = $1; c = $2 + $3; print (w < $4) ? w " " c : $4 " " $5}')
  done
  echo "$best" | awk '{printf "%.2f / %.2f", $1, $2}'
}

measure() {  # name, then what to pip install besides the wheel
  local name=$1; shift
  local venv="$OUT/$name"
  "$PYTHON" -m venv "$venv"
  local start end
  start=$(date +%s.%N)
  "$venv/bin/pip" install -q -c requirements.txt "$WHEEL" "$@"
  end=$(date +%s.%N)
  local size torch
  size=$(du -sm "$venv" | cut -f1)
  torch=$("$venv/bin/python" -c "import importlib.util as u; print('yes' if u.find_spec('torch') else 'no')")
  export LASER_HOME="$OUT/home-$name"
  "$venv/bin/laser" embed "$OUT/ten.txt" -o "$OUT/warm.npy" --lang en -q  # caches the graph
  printf '%-16s torch=%-3s  env %5s MB  install %6.1f s  import laser %s s  10-line embed %s s\n' \
    "$name" "$torch" "$size" "$(echo "$start $end" | awk '{print $2 - $1}')" \
    "$(best_of_5 "$venv/bin/python" -c 'import laser')" \
    "$(best_of_5 "$venv/bin/laser" embed "$OUT/ten.txt" -o "$OUT/ten.npy" --lang en -q)"
}

echo "$(nproc) cores, $("$PYTHON" --version), $(date -u +%Y-%m-%d)"
measure light
measure with-torch-cpu "torch==$(grep '^torch==' requirements.txt | cut -d= -f3)"
