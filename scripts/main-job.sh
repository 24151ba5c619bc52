#!/usr/bin/env bash
# The main job: set everything up, then run the whole service on this machine:
# local Kafka, topics, the worker in the background, the bundled sample pushed
# through it, and the savings read back from the output topics.
#   scripts/main-job.sh               leave the worker and the broker running
#   scripts/main-job.sh --stop-after  stop both at the end
#   .venv/bin/ctxpress demo --stop    stop both later
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
scripts/setup.sh
exec .venv/bin/ctxpress demo --mode standard "$@"
