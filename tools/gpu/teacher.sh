#!/bin/bash
# GPU call 1 (carry .gpu/teacher): the USE teacher cache into /tmp/gw, joined to the e5 block
# that stash.sh kept there for a use+e5 run.
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .gpu/teacher/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
timeout 300 python3 tools/gpu/teacher.py .gpu/teacher /tmp/gw
