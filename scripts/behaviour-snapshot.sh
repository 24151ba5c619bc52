#!/usr/bin/env bash
# Writes a snapshot of ctxpress's observable behaviour into DIR: `compress` in
# every mode over the bundled sample (and ../shared/corpus when it is there),
# with timings zeroed; `expand` of each output; every command's --help; the
# `topics` listing.  Two snapshots of the same behaviour are byte-identical:
#   scripts/behaviour-snapshot.sh /tmp/before; ...; scripts/behaviour-snapshot.sh /tmp/after
#   diff -r /tmp/before /tmp/after
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: behaviour-snapshot.sh DIR}"
mkdir -p "$out"
cx="$repo/.venv/bin/ctxpress"
py="$repo/.venv/bin/python"
inputs=("$repo/samples/sample.jsonl")
[ -f "$repo/../shared/corpus/public.jsonl" ] && inputs+=("$repo/../shared/corpus/public.jsonl")
zero_timings='
import re, sys
for line in sys.stdin:
    sys.stdout.write(re.sub(r"(\"(?:duration_ms|ms|elapsed_ms|[a-z_]*_ms)\":)-?[0-9.eE+-]+", r"\g<1>0", line))
'
for input in "${inputs[@]}"; do
  name="$(basename "$input" .jsonl)"
  for mode in off lossless standard aggressive; do
    d="$out/$name/$mode"; mkdir -p "$d"
    "$cx" compress --mode "$mode" -i "$input" -o "$d/out.raw" --stats "$d/stats.raw" \
      --dead-letter "$d/dlq.raw" --offload "$d/stash" >"$d/stdout.raw" 2>"$d/stderr.raw" || echo "rc=$?" >"$d/rc"
    for f in out stats dlq; do "$py" -c "$zero_timings" <"$d/$f.raw" >"$d/$f.jsonl"; rm "$d/$f.raw"; done
    rm -f "$d/stdout.raw" "$d/stderr.raw"
    "$cx" expand --offload "$d/stash" -i "$d/out.jsonl" -o "$d/expanded.jsonl" >/dev/null 2>&1 || echo "expand rc=$?" >>"$d/rc"
  done
done
mkdir -p "$out/help"
"$cx" --help >"$out/help/ctxpress.txt"
for c in compress expand bench kafka topics worker produce consume dlq bench-kafka demo; do
  "$cx" "$c" --help >"$out/help/$c.txt" 2>&1 || true
done
"$cx" dlq --help 2>/dev/null | grep -oE '^    [a-z-]+' | while read -r s; do "$cx" dlq "$s" --help >"$out/help/dlq-$s.txt" 2>&1 || true; done
"$cx" kafka --help 2>/dev/null | grep -oE '^    [a-z-]+' | while read -r s; do "$cx" kafka "$s" --help >"$out/help/kafka-$s.txt" 2>&1 || true; done
"$cx" topics --help 2>/dev/null | grep -oE '^    [a-z-]+' | while read -r s; do "$cx" topics "$s" --help >"$out/help/topics-$s.txt" 2>&1 || true; done
"$cx" topics >"$out/topics.txt" 2>&1 || true
"$cx" topics list >"$out/topics-list.txt" 2>&1 || true
echo "snapshot: $out" >&2
