#!/usr/bin/env bash
# Builds Grafana's dashboard-linter (github.com/grafana/dashboard-linter) once into
# .cache/tools/ and runs it: scripts/dashboard-linter.sh lint --strict grafana/dashboards/X.json
#
# The version is pinned: a pseudo-version from before the linter pulled in Loki (AGPL) for its
# LogQL rules. `go install` takes it from the Go module proxy. Where the proxy does not serve
# it (this project's proxy answered "403 This module version is not available" for it, for
# v0.1.1 and for a commit hash), the refusal is remembered in .cache/tools/ so that the
# registry is asked once per checkout, and the script exits 69 with the proxy's message;
# DASHBOARD_LINTER_RETRY=1 asks again. Also exit 69 when Go is not installed.
# tests/integration/dashboard_lint.py checks the same rules in Python on every machine.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${DASHBOARD_LINTER_VERSION:-v0.0.0-20230622143601-02e2cd156626}"
tools="$repo/.cache/tools"
bin="$tools/dashboard-linter-$version"
refused="$tools/dashboard-linter-$version.unavailable"

if [ ! -x "$bin" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "dashboard-linter: Go is not installed (needed to build github.com/grafana/dashboard-linter@$version)" >&2
    exit 69
  fi
  mkdir -p "$tools"
  if [ -f "$refused" ] && [ "${DASHBOARD_LINTER_RETRY:-0}" != "1" ]; then
    cat "$refused" >&2
    exit 69
  fi
  build="$(mktemp -d)"
  trap 'rm -rf "$build"' EXIT
  if ! (cd "$build" && GOBIN="$build" GOFLAGS=-mod=mod go install "github.com/grafana/dashboard-linter@$version") >"$build/log" 2>&1; then
    {
      echo "dashboard-linter: go install github.com/grafana/dashboard-linter@$version failed:"
      tail -n 5 "$build/log"
    } | tee "$refused" >&2
    exit 69
  fi
  mv "$build/dashboard-linter" "$bin"
  rm -f "$refused"
fi
exec "$bin" "$@"
