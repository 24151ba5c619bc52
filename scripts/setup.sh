#!/usr/bin/env bash
# Installs everything ctxpress needs into ./.venv (idempotent, nothing by hand):
# Python deps from PyPI, and the Kafka jars from Maven Central (deploy/kafka/kafka.sh fetch).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

python_bin="${PYTHON:-python3}"
if ! "$python_bin" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
  echo "setup: Python 3.11+ is required ($python_bin is $("$python_bin" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$python_bin" -m venv .venv
fi
stamp=".venv/.ctxpress-install-stamp"
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ] || ! .venv/bin/python -c 'import workers, faust, aiokafka, tiktoken' 2>/dev/null; then
  echo "setup: installing Python packages (pip install -e .[dev])" >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  # setuptools warns on every editable install of a flat layout that a folder named like the
  # package may shadow it on import: true of any checkout, nothing to act on, so not shown
  PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install -q -e '.[dev]'
  echo "$want" > "$stamp"
fi
if [ "${CTXPRESS_SKIP_KAFKA_FETCH:-0}" != "1" ] && [ -x deploy/kafka/kafka.sh ]; then
  deploy/kafka/kafka.sh fetch
fi
echo "setup: ready (.venv/bin/ctxpress)" >&2
