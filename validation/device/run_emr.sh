#!/usr/bin/env bash
# One call on the lent machine whose host CPU is a 16-vCPU Emerald Rapids (AMX) guest: probe and
# validate with 16 and with 4 threads, results under $OUT. See README.md beside this file.
set -uo pipefail
: "${OUT:?run this through the device tool: it sets OUT}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --target /tmp/site . || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 ROOFLINE_CACHE_DIR=/tmp/roofline-cache
rl() { python3 -m roofline "$@"; }
lscpu > "$OUT/lscpu.txt"
for t in 16 4; do
  rl probe --threads "$t" -o "$OUT/emr-${t}t-probe.toml" > "$OUT/emr-${t}t-probe.txt" 2>&1
  rl validate --model bert-large --quick --threads "$t" --json "$OUT/emr-${t}t-bert-large-quick.json" \
    > "$OUT/emr-${t}t-bert-large-quick.txt" 2>&1
done
# the full runs last: each 24-layer compile took 40-60 s there
rl validate --model bert-base --threads 16 --json "$OUT/emr-16t-bert-base.json" > "$OUT/emr-16t-bert-base.txt" 2>&1
tail -n 30 "$OUT"/emr-16t-bert-large-quick.txt
