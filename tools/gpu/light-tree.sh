#!/bin/bash
# Before and after the GPU calls: `on` takes models/ and tests/ (22 and 15 MB) out of the git
# index and ignores them, so the working tree that travels with each call stays small enough
# for the packed data (64 MiB a call); `off` puts them back. Commit nothing in between.
set -e
cd "$(git rev-parse --show-toplevel)"
exclude=.git/info/exclude
case "$1" in
  on)
    git diff --cached --quiet || { echo "staged changes: commit or unstage them first"; exit 1; }
    git rm -r -q --cached models tests
    printf '/models/\n/tests/\n' >> "$exclude"
    echo "models/ and tests/ out of the index: run tools/gpu/light-tree.sh off after the calls" ;;
  off)
    git reset -q -- models tests
    grep -v -x -e '/models/' -e '/tests/' "$exclude" > "$exclude.new" || true
    mv "$exclude.new" "$exclude"
    git status --short | head -5 ;;
  *)
    echo "usage: tools/gpu/light-tree.sh on|off"; exit 2 ;;
esac
