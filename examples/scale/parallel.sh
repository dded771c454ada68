#!/bin/sh
# A suite run as 4 shards by GNU parallel (on one machine here; with
# --sshlogin, on several that share the folder), then merged. Run it from the
# repository root:  sh examples/scale/parallel.sh
set -e
mkdir -p results
parallel -j4 --retries 3 evalpipe run examples/scale/suite/evalpipe.yaml --shard {}/4 --out results/scores-{}.ndjson --record results/record-{}.json --cache-dir results/cache-{} --resume ::: 1 2 3 4
evalpipe merge results/record-*.json --record results/run.json > results/scores.ndjson
