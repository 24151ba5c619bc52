#!/usr/bin/env bash
# Sets everything up and runs the main job on the bundled sample.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
scripts/setup.sh
mkdir -p out
.venv/bin/ctxpress compress --mode lossless -i samples/sample.jsonl -o out/sample.compressed.jsonl \
  --stats out/sample.stats.jsonl --dead-letter out/sample.dead-letter.jsonl
