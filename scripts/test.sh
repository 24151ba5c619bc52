#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: lint, types, unit, property,
# functional, integration and end-to-end tests (the last two on a real local Kafka
# broker that the tests start from Maven jars and stop again).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
scripts/setup.sh
echo "== ruff" >&2
.venv/bin/ruff check workers tests samples
.venv/bin/ruff format --check workers tests samples
echo "== import contracts (import-linter)" >&2
.venv/bin/lint-imports
echo "== mypy (strict)" >&2
.venv/bin/mypy
echo "== pytest" >&2
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "test: pytest collected no tests; that is a failure here" >&2
  exit 1
fi
exit "$code"
