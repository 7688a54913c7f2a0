#!/bin/bash
# GPU call 2 (carry .gpu/data), after teacher.sh on the same warm machine: train the variants
# NAME:DROPOUT:EMBEDDING_DROPOUT:LR side by side for SECONDS each; the logs and the best two
# models (split under 16 MiB) come back in $OUT; at most three variants (8 files come back).   tools/gpu/train.sh 360 A:0.05:0.2:3e-4 ...
# $TRAIN_OPTIONS goes to every variant (e.g. "--recipe FILE", "--max-length 128", or "--device cpu"
# for a dry run).
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .gpu/data/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
seconds=$1; shift
[ -f /tmp/gw/teacher.done ] || { echo "no teacher cache: run tools/gpu/teacher.sh first"; exit 1; }
python3 tools/gpu/train.py unpack .gpu/data /tmp/gw || exit 1
names=()
for variant in "$@"; do
  IFS=: read -r name dropout embedding lr <<< "$variant"
  names+=("$name")
  python3 tools/gpu/train.py run .gpu/data /tmp/gw "$name" --dropout "$dropout" \
    --embedding-dropout "$embedding" --lr "$lr" --seconds "$seconds" $TRAIN_OPTIONS \
    > "$OUT/$name.txt" 2>&1 &  # in $OUT: it comes back even if the call runs out of time
done
wait
for name in "${names[@]}"; do
  tail -n 3 "$OUT/$name.txt"; cp "/tmp/gw/run-$name/log.jsonl" "/tmp/gw/$name.log.jsonl"
done
(cd /tmp/gw && tar -czf "$OUT/logs.tgz" ./*.log.jsonl)
for name in $(cd /tmp/gw && grep -H . best-*.txt | sed 's/best-\(.*\)\.txt:\(.*\)/\2 \1/' | sort -g | head -2 | cut -d' ' -f2); do
  split -b 15M -d "/tmp/gw/out-$name/laser-candidate.pt" "$OUT/$name.pt."
done
ls -la "$OUT"
