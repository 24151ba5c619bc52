"""The project's own corpus: real program output wrapped as chat and tool-output records.

``build(path)`` runs real programs in a temporary directory and writes one JSONL
file of records in the three input shapes (OpenAI chat, Anthropic messages,
single tool outputs):

- git over this repository's own history (``git log --stat``, ``git show``,
  ``git diff`` between two commits, ``git status``) and over a small project
  the generator writes and commits (status and diff of uncommitted edits);
- pytest over that project (passing and failing tests, a traceback from a
  deeper frame), ruff and mypy on it, ``pip list`` / ``pip show``, ``ls -la``,
  ``find`` and ``cat`` of its files;
- a JSON API served by :mod:`http.server` on 127.0.0.1 (a thread, an
  ephemeral port), fetched with :mod:`urllib`;
- the log of a small Python program it runs (timestamps, many near-identical
  WARNING lines, ERROR lines with tracebacks);
- where the tool is on the PATH: gcc, ``go vet`` / ``go build``,
  ``cargo check`` (offline) and ``node`` on small broken sources, and the
  builds, linters, test runners and crash reports of
  :mod:`workers.bench.toolchains` (make, cmake, valgrind, AddressSanitizer,
  cargo clippy and test, go test -race, javac and java, ``mvn -B test`` and
  ``mvn -B compile`` with plugins from Maven Central, node --test). A
  missing tool is skipped.

Every program runs with a timeout, in an environment built from scratch (PATH,
HOME and locale only; no variable of the caller's environment besides those).
Record ids are deterministic; the texts hold what the programs printed, so
timestamps, temporary paths and the served port differ between builds.
``VERSION`` names the generator's output: a change of the records' content
rules bumps it, and the default file name carries it.

Run as ``python -m workers.bench.corpus [-o PATH] [--force]`` (what
``ctxpress corpus build`` calls): prints the corpus path on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from workers.bench.programs import Capture, Runner, clean_env, first_line, go_env
from workers.bench.toolchains import toolchain_captures
from workers.markers import has_marker

__all__ = [
    "VERSION",
    "Capture",
    "build",
    "captures",
    "clean_env",
    "default_path",
    "ensure",
    "main",
    "records",
]

VERSION = 9  # 9: Maven (surefire report, javac errors through the compiler plugin)
REPO = Path(__file__).resolve().parents[2]
DEFAULT_DIR = REPO / ".cache" / "corpus"
ID_PREFIX = f"ctxcorpus-v{VERSION}"
SYSTEM_PROMPT = (
    "You are a coding agent working in a Python repository. Use the tools to look before you "
    "answer; quote exact file paths, line numbers and test names. Never push to main. "
    "Do not edit files under tests/fixtures."
)


def default_path() -> Path:
    """Where the corpus of this ``VERSION`` lives: ``.cache/corpus/ctxpress-corpus-vN.jsonl``."""
    return DEFAULT_DIR / f"ctxpress-corpus-v{VERSION}.jsonl"


def _python_tool(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# -- the project the programs work on -----------------------------------------------------------

PROJECT_FILES: dict[str, str] = {
    "pyproject.toml": """\
        [project]
        name = "inventory"
        version = "0.3.1"
        requires-python = ">=3.11"

        [tool.ruff.lint]
        select = ["E", "F", "W", "I", "B", "UP", "SIM"]

        [tool.mypy]
        strict = true
        """,
    "README.md": """\
        # inventory

        Stock levels, prices and reorder reports for the warehouse service.
        Run `pytest -q` before every commit; never edit `tests/fixtures` by hand.
        """,
    "src/inventory/__init__.py": '''\
        """Stock levels, prices and reorder reports."""

        from inventory.models import Item, Warehouse
        from inventory.pricing import line_total, order_total

        __all__ = ["Item", "Warehouse", "line_total", "order_total"]
        ''',
    "src/inventory/models.py": '''\
        """Items and warehouses."""

        from __future__ import annotations

        from dataclasses import dataclass, field
        from decimal import Decimal


        @dataclass(frozen=True)
        class Item:
            sku: str
            name: str
            price: Decimal
            weight_kg: float = 0.0


        @dataclass
        class Warehouse:
            code: str
            stock: dict[str, int] = field(default_factory=dict)

            def level(self, sku: str) -> int:
                return self.stock[sku]

            def receive(self, sku: str, quantity: int) -> None:
                if quantity <= 0:
                    raise ValueError(f"quantity must be positive, got {quantity}")
                self.stock[sku] = self.stock.get(sku, 0) + quantity

            def ship(self, sku: str, quantity: int) -> None:
                left = self.level(sku) - quantity
                if left < 0:
                    raise RuntimeError(f"cannot ship {quantity} x {sku}: only {self.level(sku)} left")
                self.stock[sku] = left
        ''',
    "src/inventory/pricing.py": '''\
        """Prices, discounts and order totals."""

        from __future__ import annotations

        from decimal import ROUND_DOWN, Decimal

        VAT_RATE = Decimal("0.21")
        BULK_THRESHOLD = 10


        def line_total(price: Decimal, quantity: int, discount: Decimal = Decimal("0")) -> Decimal:
            """Price times quantity, minus the discount, rounded to cents."""
            gross = price * quantity
            if quantity >= BULK_THRESHOLD:
                discount = max(discount, Decimal("0.05"))
            # BUG: rounds down instead of half-up
            return (gross * (1 - discount)).quantize(Decimal("0.01"), rounding=ROUND_DOWN)


        def with_vat(amount: Decimal) -> Decimal:
            return (amount * (1 + VAT_RATE)).quantize(Decimal("0.01"))


        def order_total(lines: list[tuple[Decimal, int]], discount: Decimal = Decimal("0")) -> Decimal:
            return with_vat(sum((line_total(p, q, discount) for p, q in lines), Decimal("0")))
        ''',
    "src/inventory/report.py": '''\
        """Reorder reports."""

        import os, sys
        import json
        from typing import Optional

        from inventory.models import Warehouse


        def reorder(warehouse: Warehouse, minimum: int = 5) -> list[str]:
            low = []
            for sku, level in warehouse.stock.items():
                if level < minimum:
                    low.append(sku)
            return sorted(low)


        def render(warehouse: Warehouse, minimum: Optional[int] = None):
            skus = reorder(warehouse, minimum)
            if skus == []:
                return "nothing to reorder"
            return json.dumps({"warehouse": warehouse.code, "reorder": skus})


        def total_weight(items, stock: dict[str, int]) -> float:
            total: int = 0
            for item in items:
                total += item.weight_kg * stock.get(item.sku, 0)
            return total


        def load(path: str) -> Warehouse:
            with open(path) as handle:
                data = json.load(handle)
            l = data.get("stock")
            return Warehouse(code=data["code"], stock=l)
        ''',
    "tests/__init__.py": "",
    "tests/test_pricing.py": """\
        from decimal import Decimal

        import pytest

        from inventory.pricing import line_total, order_total, with_vat

        CASES = [(Decimal(f"{1 + i * 0.37:.2f}"), 1 + i % 13) for i in range(60)]


        @pytest.mark.parametrize(("price", "quantity"), CASES)
        def test_line_total_is_never_above_gross(price: Decimal, quantity: int) -> None:
            assert line_total(price, quantity) <= price * quantity


        @pytest.mark.parametrize("cents", range(1, 40))
        def test_with_vat_rounds_to_cents(cents: int) -> None:
            amount = Decimal(cents) / 100
            assert with_vat(amount).as_tuple().exponent == -2


        def test_bulk_discount_applies_from_ten() -> None:
            assert line_total(Decimal("2.00"), 10) == Decimal("19.00")


        def test_discount_rounds_half_up() -> None:
            assert line_total(Decimal("3.33"), 3, Decimal("0.15")) == Decimal("8.50")


        def test_order_total_with_vat() -> None:
            lines = [(Decimal("19.99"), 2), (Decimal("4.75"), 12)]
            assert order_total(lines, Decimal("0.10")) == Decimal("105.09")
        """,
    "tests/test_models.py": """\
        import pytest

        from inventory.models import Warehouse
        from inventory.report import load, reorder, render


        @pytest.fixture
        def warehouse() -> Warehouse:
            return Warehouse("ams-1", {"SKU-00017": 3, "SKU-00042": 12, "SKU-00108": 0})


        @pytest.mark.parametrize("quantity", [1, 2, 5, 8, 13, 21])
        def test_receive_adds_stock(warehouse: Warehouse, quantity: int) -> None:
            warehouse.receive("SKU-00042", quantity)
            assert warehouse.level("SKU-00042") == 12 + quantity


        def test_receive_rejects_zero(warehouse: Warehouse) -> None:
            with pytest.raises(ValueError, match="quantity must be positive"):
                warehouse.receive("SKU-00042", 0)


        def test_ship_unknown_sku(warehouse: Warehouse) -> None:
            warehouse.ship("SKU-99999", 1)


        def test_reorder_lists_low_stock(warehouse: Warehouse) -> None:
            assert reorder(warehouse) == ["SKU-00017", "SKU-00108"]


        def test_render_default_minimum(warehouse: Warehouse) -> None:
            assert "SKU-00017" in render(warehouse)


        def test_load_missing_file() -> None:
            assert load("does/not/exist.json").code == "ams-1"
        """,
    "tools/sync_worker.py": '''\
        """Pushes stock levels to the upstream catalogue; logs what happens."""

        import logging
        import sys

        log = logging.getLogger("inventory.sync")


        class UpstreamError(Exception):
            pass


        def push(batch: int) -> None:
            if batch % 97 == 41:
                raise UpstreamError(f"upstream returned 502 for batch {batch}: bad gateway")
            if batch % 131 == 7:
                payload = {"batch": batch}
                payload["items"].append(batch)


        def main(batches: int) -> int:
            logging.basicConfig(
                stream=sys.stdout,
                level=logging.INFO,
                format="%(asctime)s %(levelname)-7s %(name)s [%(process)d] %(message)s",
            )
            log.info("starting sync of %d batches to https://catalogue.example.com/v2/stock", batches)
            failed = 0
            for batch in range(1, batches + 1):
                if batch % 3 == 0:
                    log.warning(
                        "batch %d of %d: upstream slow (latency %d ms above the 250 ms budget), retrying",
                        batch, batches, 250 + (batch * 37) % 900,
                    )
                if batch % 25 == 0:
                    log.info("progress: %d/%d batches pushed, %d failed", batch, batches, failed)
                try:
                    push(batch)
                except UpstreamError:
                    failed += 1
                    log.exception("batch %d failed; it will be retried in the next run", batch)
                except KeyError:
                    failed += 1
                    log.exception("batch %d: malformed payload", batch)
            log.error("sync finished with %d failed batches out of %d", failed, batches)
            return 1 if failed else 0


        if __name__ == "__main__":
            sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 900))
        ''',
    "native/broken.c": """\
        #include <stdio.h>
        #include <string.h>

        struct header { char name[32]; int length; };

        static int checksum(const char *data, int n) {
            int sum = 0, unused_total;
            for (int i = 0; i <= n; i++) sum += data[i];
            return sum;
        }

        int main(int argc, char **argv) {
            struct header h;
            unsigned int count = argc;
            if (count < -1) printf("never\\n");
            strcpy(h.name, argv[1]);
            printf("%s has length %d\\n", h.name);
            h.length = parse_length(argv[2]);
            char *end = h.name + h.length
            return checksum(h.name, h.length);
        }
        """,
    "tools/service.py": """\
        \"\"\"A web service's day in miniature: its log interleaves several events.\"\"\"
        import logging
        import random
        import sys
        from pathlib import Path

        random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 11)
        Path("logs").mkdir(exist_ok=True)
        logging.basicConfig(format="%(asctime)s %(levelname)s [%(name)s] %(message)s",
                            level=logging.INFO, filename="logs/service.log", filemode="w")
        http, jobs = logging.getLogger("http"), logging.getLogger("jobs")
        db, pay = logging.getLogger("db"), logging.getLogger("payments")
        PATHS = ["/api/orders", "/api/orders/{}", "/api/cart", "/healthz", "/api/invoices/{}"]
        for _ in range(500):
            r = random.random()
            if r < 0.55:
                path = random.choice(PATHS).format(random.randint(1, 500))
                status = random.choices([200, 201, 204, 404, 500, 503], [70, 8, 6, 6, 2, 1])[0]
                http.info('10.0.%d.%d - "%s %s HTTP/1.1" %d %d %.1fms', random.randint(0, 3),
                          random.randint(1, 254), random.choice(["GET", "POST"]), path, status,
                          random.randint(80, 9000), random.uniform(0.5, 80))
            elif r < 0.7:
                jobs.info("job sync-%d finished in %.2fs (queue=%s, processed=%d)",
                          random.randint(1000, 9999), random.uniform(0.1, 5),
                          random.choice(["default", "emails"]), random.randint(1, 300))
            elif r < 0.8:
                db.info("pool stats: size=20 checked_out=%d overflow=%d", random.randint(0, 20),
                        random.randint(0, 3))
            elif r < 0.93:
                pay.warning("retrying payment sync for order 4711 (attempt %d of 5)",
                            random.randint(1, 5))
            elif r < 0.97:
                jobs.warning("slow query took %dms: SELECT * FROM orders WHERE customer_id = %d",
                             random.randint(500, 3000), random.randint(1, 900))
            else:
                try:
                    {}["missing_key_%d" % random.randint(1, 3)]
                except KeyError:
                    pay.exception("payment webhook failed for order %d", random.randint(1, 500))
        """,
    "native/gotest/go.mod": """\
        module example.com/pricing

        go 1.21
        """,
    "native/gotest/pricing.go": """\
        package pricing

        import "fmt"

        func Discount(p float64, pct int) float64 { return p - p*float64(pct)/100 }

        func Label(n int) string { return fmt.Sprintf("item-%d", n) }
        """,
    "native/gotest/pricing_test.go": """\
        package pricing

        import (
            "fmt"
            "testing"
        )
        """
    + "".join(
        (
            f"""
        func TestDiscountTable{i}(t *testing.T) {{
            cases := []struct {{
                p    float64
                pct  int
                want float64
            }}{{{{100, 10, 90}}, {{50, 20, 40}}, {{80, 25, 61}}}}
            for j, c := range cases {{
                t.Run(fmt.Sprintf("case_%d", j), func(t *testing.T) {{
                    t.Logf("checking %v", c)
                    if got := Discount(c.p, c.pct); got != c.want {{
                        t.Errorf("Discount(%v, %d) = %v, want %v", c.p, c.pct, got, c.want)
                    }}
                }})
            }}
        }}
        """
            if i % 6 == 0
            else f"""
        func TestLabel{i}(t *testing.T) {{
            t.Logf("label for {i}: %s", Label({i}))
            if Label({i}) != "item-{i}" {{
                t.Fatal("bad label")
            }}
        }}
        """
        )
        for i in range(24)
    ),
    "native/go/go.mod": """\
        module example.com/stockcheck

        go 1.21
        """,
    "native/go/main.go": """\
        package main

        import (
            "fmt"
            "os"
            "strings"
        )

        type Item struct {
            SKU   string
            Count int
        }

        func lowStock(items []Item, minimum int) []string {
            var low []string
            for _, it := range items {
                if it.Count < minimum {
                    low = append(low, it.SKU)
                }
            }
            return low
        }

        func main() {
            items := []Item{{"SKU-00017", 3}, {"SKU-00042", 12}}
            total := 0
            fmt.Printf("low stock: %d\\n", lowStock(items, 5))
            var count int = "two"
            fmt.Println(strings.Join(lowStock(items, 5), ","), undefinedLimit)
        }
        """,
    "native/rust/Cargo.toml": """\
        [package]
        name = "stockcheck"
        version = "0.1.0"
        edition = "2021"

        [dependencies]
        """,
    "native/rust/src/main.rs": """\
        use std::collections::HashMap;

        struct Item {
            sku: String,
            count: u32,
        }

        fn low_stock(items: &[Item], minimum: u32) -> Vec<&str> {
            items.iter().filter(|i| i.count < minimum).map(|i| i.sku.as_str()).collect()
        }

        fn main() {
            let unused = HashMap::<String, u32>::new();
            let items = vec![Item { sku: "SKU-00017".to_string(), count: 3 }];
            let minimum: u32 = "five";
            let low: Vec<String> = low_stock(&items, minimum);
            println!("{:?}", low);
        }
        """,
    "native/node/report.js": """\
        'use strict';

        function levels(warehouse) {
          return Object.entries(warehouse.stock).map(([sku, count]) => ({ sku, count }));
        }

        function reorder(warehouses, minimum) {
          const out = [];
          for (const w of warehouses) {
            for (const { sku, count } of levels(w)) {
              if (count < minimum) out.push(`${w.code}/${sku}`);
            }
          }
          return out;
        }

        const warehouses = [
          { code: 'ams-1', stock: { 'SKU-00017': 3, 'SKU-00042': 12 } },
          { code: 'fra-2' },
        ];
        console.log('checking', warehouses.length, 'warehouses');
        console.log(reorder(warehouses, 5).join('\\n'));
        """,
}


def write_project(root: Path) -> None:
    for rel, text in PROJECT_FILES.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        body = textwrap.dedent(text)
        if rel.endswith(".go"):  # gofmt indents with tabs
            body = re.sub(r"(?m)^(?:    )+", lambda m: "\t" * (len(m.group()) // 4), body)
        target.write_text(body, encoding="utf-8")
    (root / "tests" / "fixtures").mkdir(exist_ok=True)
    (root / "tests" / "fixtures" / "ams-1.json").write_text(
        json.dumps({"code": "ams-1", "stock": {"SKU-00017": 3, "SKU-00042": 12}}, indent=2) + "\n"
    )


# -- the JSON API -------------------------------------------------------------------------------


def api_items(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": 1000 + i,
            "sku": f"SKU-{i:05d}",
            "name": f"Widget {['small', 'medium', 'large', 'XL'][i % 4]} {i}",
            "price": f"{4.5 + (i * 37) % 90 / 10:.2f}",
            "currency": "EUR",
            "in_stock": i % 9 != 0,
            "warehouse": ["ams-1", "fra-2", "lhr-1"][i % 3],
            "updated_at": f"2024-05-{1 + i % 28:02d}T{(i * 7) % 24:02d}:{(i * 13) % 60:02d}:00Z",
            "status": "error: sync failed (upstream 502)" if i in (17, 133) else "ok",
        }
        for i in range(n)
    ]


def api_orders(n: int) -> dict[str, Any]:
    return {
        "data": [
            {
                "order_id": f"ORD-2024-{5000 + i}",
                "customer": {"id": 700 + i % 23, "country": ["NL", "DE", "GB", "FR"][i % 4]},
                "lines": [
                    {"sku": f"SKU-{(i * 7 + k) % 300:05d}", "quantity": 1 + (i + k) % 6}
                    for k in range(1 + i % 3)
                ],
                "total": f"{19.99 + i * 3.15:.2f}",
                "state": ["paid", "shipped", "cancelled", "paid"][i % 4],
            }
            for i in range(n)
        ],
        "page": {"number": 1, "size": n, "total_pages": 4, "next": "/api/v1/orders?page=2"},
    }


def api_health() -> dict[str, Any]:
    """A nested status document (no table in it): what jsonminify is for."""
    return {
        "status": "degraded",
        "version": "2.14.3",
        "checked_at": "2024-05-06T10:00:00Z",
        "services": {
            name: {
                "status": "error: connection refused" if name == "catalogue" else "ok",
                "latency_ms": {"p50": 12 + i * 3, "p99": 140 + i * 31},
                "endpoint": f"http://{name}.internal:{8080 + i}/health",
                "checks": {"db": i % 3 != 2, "cache": True, "queue_depth": i * 17},
            }
            for i, name in enumerate(["orders", "catalogue", "stock", "billing", "search"])
        },
        "limits": {"max_batch": 500, "rate_per_s": 250.0, "retry": {"max": 5, "backoff_s": 1.5}},
    }


@contextmanager
def json_api() -> Iterator[str]:
    """A JSON API on 127.0.0.1 (ephemeral port) in a thread; yields its base URL."""
    routes = {
        "/api/v1/items": json.dumps(api_items(300)).encode(),
        "/api/v1/items?pretty=1": json.dumps(api_items(120), indent=2).encode(),
        "/api/v1/orders": json.dumps(api_orders(80), indent=2).encode(),
        "/api/v1/health": json.dumps(api_health(), indent=4).encode(),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = routes.get(self.path)
            status = 200 if body is not None else 404
            if body is None:
                body = json.dumps({"error": "not found", "path": self.path}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        body: bytes = response.read()
    return body.decode("utf-8")


# -- the captures -------------------------------------------------------------------------------


def _lines_matching(text: str, *needles: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(n in line for n in needles)]


def _numstat_lines(text: str) -> int:
    total = 0
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
            total += int(parts[0]) + int(parts[1])
    return total


def failed_tests(pytest_output: str) -> list[str]:
    """The test ids of pytest's short summary ``FAILED tests/x.py::name - reason`` lines."""
    return [
        line.split()[1]
        for line in pytest_output.splitlines()
        if line.startswith("FAILED ") and len(line.split()) > 1
    ]


def _git_log_capture(run: Runner, repo: Path, oldest: list[str]) -> Capture | None:
    """``git log --stat -n 30`` ending at the 30th commit of the history: the same log on
    every build (the newest commits change with every commit, and a commit message that
    quotes ctxpress's own marker syntax makes the pipeline leave the whole text alone; a
    window holding one moves on to later commits)."""
    if not oldest:
        return None  # a repository without commits
    for end in range(min(29, len(oldest) - 1), len(oldest), 10):
        rev = oldest[end]
        log = run.run(["git", "log", "--stat", "-n", "30", rev], repo)
        if not log:
            return None
        if has_marker(log):
            continue
        head = first_line(log, "commit ")
        return Capture(
            "git-log",
            f"git log --stat -n 30 {rev[:12]}",
            log,
            "What happened in this repository up to that commit? Summarise the commits.",
            f"The newest entry is {head}; the log lists the files each of the 30 commits touched.",
        )
    return None


def git_repo_captures(run: Runner, repo: Path) -> list[Capture]:
    """git over this repository's history; nothing when it is not a git checkout."""
    if run.run(["git", "rev-parse", "--git-dir"], repo) is None or not (repo / ".git").exists():
        return []
    out: list[Capture] = []
    # the oldest commits first: what they show never changes as the history grows (newest
    # first within the window, so a diff goes from an older to a newer commit)
    oldest = (run.run(["git", "rev-list", "--reverse", "--no-merges", "HEAD"], repo) or "").split()
    log_capture = _git_log_capture(run, repo, oldest)
    if log_capture is not None:
        out.append(log_capture)
    revs = oldest[:60][::-1]
    for rev in revs:
        size = _numstat_lines(run.run(["git", "show", "--numstat", "--format=", rev], repo) or "")
        if 40 <= size <= 2500:
            shown = run.run(["git", "show", rev], repo)
            if shown and has_marker(shown):
                continue  # this repository's own marker syntax: the pipeline leaves it alone
            if shown:
                subject = first_line(shown, "    ", default=rev).strip()
                out.append(
                    Capture(
                        "git-show",
                        f"git show {rev[:12]}",
                        shown,
                        f"Show me commit {rev[:12]} and explain what it changes.",
                        f"Commit {rev[:12]} ({subject}) changes the files listed in its diff.",
                        meta={"commit": rev},
                    )
                )
            break
    picked = None
    for span in (5, 4, 3, 2):
        for i in range(0, min(20, max(0, len(revs) - span))):
            new, old = revs[i], revs[i + span]
            numstat = run.run(["git", "diff", "--numstat", old, new, "--", "*.py"], repo) or ""
            if 150 <= _numstat_lines(numstat) <= 4000:
                picked = (old, new, [line.split("\t")[2] for line in numstat.splitlines()])
                break
        if picked:
            break
    if picked:
        old, new, paths = picked
        full = run.run(["git", "diff", old, new, "--", "*.py"], repo) or ""
        if has_marker(full):
            # ctxpress's own marker syntax in its sources: the pipeline leaves such a text
            # alone, so the conversations get the files whose diff holds none
            paths = [
                path
                for path in paths
                if not has_marker(run.run(["git", "diff", old, new, "--", path], repo) or "")
            ]
            command = f"git diff {old[:12]} {new[:12]} -- {' '.join(paths)}"
        else:
            paths, command = ["*.py"], f"git diff {old[:12]} {new[:12]} -- '*.py'"
        diff = run.run(["git", "diff", old, new, "--", *paths], repo) if paths else None
        if diff:
            files = _lines_matching(diff, "diff --git")
            out.append(
                Capture(
                    "git-diff",
                    command,
                    diff,
                    f"What changed in the Python code between {old[:12]} and {new[:12]}?",
                    f"{len(files)} Python files changed; the first is "
                    f"{files[0].split(' b/')[-1] if files else '?'}.",
                    meta={"commit": new},
                )
            )
    status = run.run(["git", "status"], repo)
    if status:
        out.append(
            Capture(
                "git-status-repo",
                "git status",
                status,
                "Is my working tree clean?",
                first_line(status, "On branch", "HEAD detached", default="git status is above."),
            )
        )
    return out


GIT_PROJECT = [
    "git",
    "-c",
    "user.name=Corpus Builder",
    "-c",
    "user.email=corpus@example.invalid",
    "-c",
    "init.defaultBranch=main",
]
GIT_DATES = {
    "GIT_AUTHOR_DATE": "2024-05-06T10:00:00+00:00",
    "GIT_COMMITTER_DATE": "2024-05-06T10:00:00+00:00",
}


def project_git_captures(run: Runner, project: Path) -> list[Capture]:
    """Commit the project, then edit, add and delete files: status and diff of that."""
    if run.run([*GIT_PROJECT, "init", "-q"], project) is None:
        return []
    run.run([*GIT_PROJECT, "add", "-A"], project)
    run.run([*GIT_PROJECT, "commit", "-q", "-m", "inventory 0.3.1"], project, env=GIT_DATES)
    pricing = project / "src/inventory/pricing.py"
    pricing.write_text(
        pricing.read_text()
        .replace("ROUND_DOWN", "ROUND_HALF_UP")
        .replace("    # BUG: rounds down instead of half-up\n", "")
    )
    models = project / "src/inventory/models.py"
    models.write_text(
        models.read_text().replace("return self.stock[sku]", "return self.stock.get(sku, 0)")
    )
    (project / "src/inventory/discounts.py").write_text(
        '"""Seasonal discounts."""\n\nSUMMER = {"SKU-00017": "0.10", "SKU-00042": "0.15"}\n'
    )
    (project / "README.md").unlink()
    out: list[Capture] = []
    status = run.run(["git", "status"], project)
    if status:
        out.append(
            Capture(
                "git-status-project",
                "git status",
                status,
                "What have I changed so far?",
                "Modified pricing.py and models.py, deleted README.md, and "
                "src/inventory/discounts.py is untracked.",
            )
        )
    diff = run.run(["git", "diff"], project)
    if diff:
        out.append(
            Capture(
                "git-diff-project",
                "git diff",
                diff,
                "Show me the uncommitted diff.",
                "pricing.py now rounds half-up; models.py returns 0 for unknown SKUs; "
                "README.md is deleted.",
            )
        )
    # back to the committed state for the other programs (the failing tests need the bug)
    run.run(["git", "checkout", "-q", "--", "."], project)
    (project / "src/inventory/discounts.py").unlink()
    return out


def python_captures(run: Runner, project: Path) -> list[Capture]:
    py = sys.executable
    out: list[Capture] = []
    src_env = {"PYTHONPATH": str(project / "src")}
    if _python_tool("pytest"):
        verbose = run.run(
            [py, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"], project, env=src_env
        )
        if verbose:
            failed = failed_tests(verbose)
            out.append(
                Capture(
                    "pytest-verbose",
                    "python -m pytest -v tests",
                    verbose,
                    "Run the test suite and tell me what fails. Do not change the tests.",
                    f"{len(failed)} tests fail: {', '.join(failed)}.",
                    meta={"failed": failed},
                )
            )
        quiet = run.run(
            [
                py,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--tb=long",
                "tests/test_models.py",
            ],
            project,
            env=src_env,
        )
        if quiet:
            out.append(
                Capture(
                    "pytest-quiet",
                    "python -m pytest -q --tb=long tests/test_models.py",
                    quiet,
                    "Run only the model tests with full tracebacks.",
                    first_line(quiet, " failed", " passed", default="pytest output above."),
                )
            )
    if _python_tool("ruff"):
        ruff = run.run(
            [py, "-m", "ruff", "check", "--no-cache", "--output-format=full", "."], project
        )
        if ruff:
            out.append(
                Capture(
                    "ruff",
                    "ruff check --output-format=full .",
                    ruff,
                    "Lint the project with ruff.",
                    first_line(ruff, "Found ", default="ruff findings above."),
                )
            )
        concise = run.run(
            [py, "-m", "ruff", "check", "--no-cache", "--output-format=concise", "."], project
        )
        if concise:
            out.append(
                Capture(
                    "ruff-concise",
                    "ruff check --output-format=concise .",
                    concise,
                    "Just the list of ruff findings, one per line.",
                    first_line(concise, "Found ", default="ruff findings above."),
                )
            )
    if _python_tool("mypy"):
        mypy = run.run(
            [py, "-m", "mypy", "--cache-dir", str(run.work / "mypy-cache"), "src"],
            project,
            env=src_env,
            timeout=120,
        )
        if mypy:
            out.append(
                Capture(
                    "mypy",
                    "mypy src",
                    mypy,
                    "Type-check src with mypy (strict is on in pyproject).",
                    first_line(mypy, "Found ", "Success", default="mypy output above."),
                )
            )
    pip_list = run.run([py, "-m", "pip", "list"], project)
    if pip_list:
        out.append(
            Capture(
                "pip-list",
                "python -m pip list",
                pip_list,
                "Which packages are installed in this environment?",
                f"{max(0, len(pip_list.splitlines()) - 2)} packages are installed.",
            )
        )
    pip_show = run.run([py, "-m", "pip", "show", "pip", "orjson", "pytest"], project)
    if pip_show:
        out.append(
            Capture(
                "pip-show",
                "python -m pip show pip orjson pytest",
                pip_show,
                "Which versions of pip, orjson and pytest do we have, and what needs them?",
                "; ".join(_lines_matching(pip_show, "Version:")) or "pip show output above.",
            )
        )
    log = run.run([py, "tools/sync_worker.py", "900"], project)
    if log:
        errors = _lines_matching(log, " ERROR ")
        out.append(
            Capture(
                "app-log",
                "python tools/sync_worker.py 900",
                log,
                "The stock sync keeps failing. Run it and tell me why.",
                f"{len(errors)} ERROR lines; the last says: "
                f"{errors[-1].split(' [')[-1] if errors else '?'}",
            )
        )
    if run.run([py, "tools/service.py", "11"], project) is not None:
        tail = run.run(["tail", "-n", "200", "logs/service.log"], project)
        if tail:
            out.append(
                Capture(
                    "service-log",
                    "tail -n 200 logs/service.log",
                    tail,
                    "Payments look flaky in the service log. What is failing?",
                    "; ".join(_lines_matching(tail, " ERROR ")[:3]) or "the log above.",
                )
            )
    return out


def png_bytes(width: int, height: int, seed: int = 7) -> bytes:
    """A real PNG (RGB, seeded noise), written with zlib: a chart as a browser would get it."""
    import random
    import struct
    import zlib

    rng = random.Random(seed)
    rows = b"".join(
        b"\x00" + bytes(rng.randrange(256) for _ in range(width * 3)) for _ in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def coverage_page() -> str:
    """An HTML coverage report with its chart inline as a data URI."""
    import base64

    chart = base64.b64encode(png_bytes(48, 32)).decode("ascii")
    return (
        "<!doctype html>\n<html><head><title>Coverage report</title></head><body>\n"
        "<h1>inventory: 87% line coverage</h1>\n"
        "<table><tr><th>file</th><th>lines</th><th>missed</th></tr>\n"
        "<tr><td>src/inventory/pricing.py</td><td>41</td><td>3</td></tr>\n"
        "<tr><td>src/inventory/report.py</td><td>28</td><td>6</td></tr></table>\n"
        f'<img alt="coverage by file" src="data:image/png;base64,{chart}">\n'
        "</body></html>\n"
    )


def filesystem_captures(run: Runner, project: Path) -> list[Capture]:
    out: list[Capture] = []
    listing = run.run(["ls", "-la", "src/inventory", "tests", "native"], project)
    if listing:
        out.append(
            Capture(
                "ls",
                "ls -la src/inventory tests native",
                listing,
                "What is in the source, test and native folders?",
                "The listing shows each file with its size and permissions.",
            )
        )
    report = project / "build" / "coverage.html"
    report.parent.mkdir(exist_ok=True)
    report.write_text(coverage_page(), encoding="utf-8")
    page = run.run(["cat", "build/coverage.html"], project)
    if page:
        out.append(
            Capture(
                "cat-coverage-html",
                "cat build/coverage.html",
                page,
                "What does the coverage report say?",
                "Line coverage is 87%; the chart is an inline PNG.",
            )
        )
    found = run.run(["find", ".", "-not", "-path", "./.git/*"], project)
    if found:
        out.append(
            Capture(
                "find",
                "find . -not -path './.git/*'",
                found,
                "List every file of the project.",
                f"{len(found.splitlines())} paths, outside .git.",
            )
        )
    return out


def api_captures(base: str) -> list[Capture]:
    out = []
    for key, path, ask in (
        ("api-items", "/api/v1/items", "List the inventory items from the API."),
        ("api-items-pretty", "/api/v1/items?pretty=1", "Fetch the items again, pretty-printed."),
        ("api-orders", "/api/v1/orders", "Show the first page of orders."),
        ("api-health", "/api/v1/health", "Is every service healthy?"),
    ):
        body = fetch(base + path)
        errors = body.count("error: sync failed")
        out.append(
            Capture(
                key,
                f"curl -s '{base}{path}'",
                body,
                ask,
                f"The response is a JSON document of {len(body)} bytes"
                + (f"; {errors} items report 'error: sync failed'." if errors else "."),
            )
        )
    return out


def native_captures(run: Runner, project: Path) -> list[Capture]:
    """gcc, go (vet, build, and ``go test -v`` of tests that log), cargo and node on broken
    sources, each only when it is on the PATH."""
    out: list[Capture] = []
    native = project / "native"
    if run.have("gcc"):
        gcc = run.run(
            ["gcc", "-Wall", "-Wextra", "-std=c11", "-c", "broken.c", "-o", os.devnull], native
        )
        if gcc:
            out.append(
                Capture(
                    "gcc",
                    "gcc -Wall -Wextra -std=c11 -c broken.c",
                    gcc,
                    "Why does native/broken.c not compile?",
                    first_line(gcc, "error:", default="gcc output above."),
                )
            )
    if run.have("go"):
        offline = go_env(run.work)
        for key, argv in (
            ("go-vet", ["go", "vet", "./..."]),
            ("go-build", ["go", "build", "./..."]),
        ):
            text = run.run(argv, native / "go", env=offline, timeout=120)
            if text:
                out.append(
                    Capture(
                        key,
                        " ".join(argv),
                        text,
                        f"Run `{' '.join(argv)}` on the stock checker.",
                        first_line(text, "main.go:", default="go output above."),
                    )
                )
        text = run.run(["go", "test", "-v", "-count=1", "./..."], native / "gotest", env=offline)
        if text:
            out.append(
                Capture(
                    "go-test-v",
                    "go test -v ./...",
                    text,
                    "Which pricing tests fail, and why?",
                    first_line(text, ", want ", default="go test output above."),
                )
            )
    if run.have("cargo"):
        cargo = run.run(
            ["cargo", "check", "--offline", "--color", "never"],
            native / "rust",
            env={"CARGO_TARGET_DIR": str(run.work / "target"), "CARGO_TERM_COLOR": "never"},
            timeout=120,
        )
        if cargo:
            out.append(
                Capture(
                    "cargo-check",
                    "cargo check --offline",
                    cargo,
                    "Does the Rust stock checker build?",
                    first_line(cargo, "error[", "error:", default="cargo output above."),
                )
            )
    if run.have("node"):
        node = run.run(["node", "report.js"], native / "node")
        if node:
            out.append(
                Capture(
                    "node",
                    "node report.js",
                    node,
                    "Run the reorder report script.",
                    first_line(node, "TypeError", "Error", default="node output above."),
                )
            )
    return out


def captures(work: Path, repo: Path = REPO) -> tuple[list[Capture], Runner]:
    """Write the project under ``work``, run every program, return what they printed."""
    project = work / "inventory"
    write_project(project)
    run = Runner(work)
    found: list[Capture] = []
    found += git_repo_captures(run, repo)
    found += project_git_captures(run, project)
    found += python_captures(run, project)
    found += filesystem_captures(run, project)
    with json_api() as base:
        found += api_captures(base)
    found += native_captures(run, project)
    found += toolchain_captures(run, work / "toolchains")
    cat = run.run(["cat", "src/inventory/pricing.py"], project)
    report = run.run(["cat", "src/inventory/report.py"], project)
    if cat is not None:
        found.append(Capture("cat-pricing", "cat src/inventory/pricing.py", cat, "", ""))
    if report is not None:
        found.append(Capture("cat-report", "cat src/inventory/report.py", report, "", ""))
    pricing = project / "src/inventory/pricing.py"
    pricing.write_text(pricing.read_text().replace("ROUND_DOWN", "ROUND_HALF_UP"))
    edited = run.run(["cat", "src/inventory/pricing.py"], project)
    if edited is not None:
        found.append(Capture("cat-pricing-edited", "cat src/inventory/pricing.py", edited, "", ""))
    return found, run


# -- records ------------------------------------------------------------------------------------


def _call_id(record_id: str, n: int, prefix: str = "call_") -> str:
    return prefix + hashlib.sha256(f"{record_id}/{n}".encode()).hexdigest()[:24]


Turn = tuple[str, list[Capture], str]  # (user text, tool runs, assistant answer)


def openai_record(rid: str, turns: Sequence[Turn]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    n = 0
    for ask, runs, answer in turns:
        if ask:
            messages.append({"role": "user", "content": ask})
        for c in runs:
            n += 1
            call = _call_id(rid, n)
            messages.append(
                {
                    "role": "assistant",
                    "content": f"Running `{c.command}`.",
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {
                                "name": c.tool,
                                "arguments": json.dumps({"command": c.command}),
                            },
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call, "content": c.output})
        messages.append({"role": "assistant", "content": answer})
    return {"id": rid, "messages": messages}


def anthropic_record(rid: str, turns: Sequence[Turn]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    n = 0
    for ask, runs, answer in turns:
        if ask:
            messages.append({"role": "user", "content": [{"type": "text", "text": ask}]})
        for c in runs:
            n += 1
            call = _call_id(rid, n, "toolu_")
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"I'll run `{c.command}`."},
                        {
                            "type": "tool_use",
                            "id": call,
                            "name": c.tool,
                            "input": {"command": c.command},
                        },
                    ],
                }
            )
            messages.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call, "content": c.output}],
                }
            )
        messages.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return {"id": rid, "format": "anthropic", "system": SYSTEM_PROMPT, "messages": messages}


def tool_output_record(rid: str, c: Capture) -> dict[str, Any]:
    return {
        "id": rid,
        "kind": "tool_output",
        "command": c.command,
        "tool_name": c.tool,
        "content": c.output,
    }


ANTHROPIC_KEYS = frozenset(
    {"pytest-verbose", "git-diff", "api-items-pretty", "app-log", "mypy", "cargo-check"}
)


def records(found: Sequence[Capture]) -> list[dict[str, Any]]:
    """Every capture as a one-command OpenAI chat and a tool output (some also as Anthropic
    records), plus multi-turn sessions: a file read twice, a read after an edit, and a
    conversation mixing several programs."""
    by_key = {c.key: c for c in found}
    out: list[dict[str, Any]] = []
    singles = [c for c in found if c.ask]
    for c in singles:
        out.append(openai_record(f"{ID_PREFIX}-chat-{c.key}", [(c.ask, [c], c.answer)]))
        out.append(tool_output_record(f"{ID_PREFIX}-tool-{c.key}", c))
        if c.key in ANTHROPIC_KEYS:
            out.append(anthropic_record(f"{ID_PREFIX}-anthropic-{c.key}", [(c.ask, [c], c.answer)]))

    def have(*keys: str) -> list[Capture]:
        return [by_key[k] for k in keys if k in by_key]

    read = have("cat-pricing")
    if read and "pytest-verbose" in by_key:
        turns: list[Turn] = [
            ("Look at the pricing module first.", read, "line_total rounds with ROUND_DOWN."),
            (
                "Now run the tests.",
                have("pytest-verbose"),
                "test_discount_rounds_half_up fails: 8.47 instead of 8.50.",
            ),
            (
                "Show me pricing.py again before you change anything.",
                read,
                "Unchanged: the ROUND_DOWN on the return line of line_total is the bug.",
            ),
        ]
        out.append(openai_record(f"{ID_PREFIX}-session-read-twice", turns))
        out.append(anthropic_record(f"{ID_PREFIX}-session-read-twice-anthropic", turns))
        edited = have("cat-pricing-edited")
        if edited:
            out.append(
                openai_record(
                    f"{ID_PREFIX}-session-read-edit-read",
                    [
                        *turns,
                        ("Switch it to ROUND_HALF_UP and show the file.", edited, "Done."),
                        ("And the report module?", have("cat-report"), "report.py reads as above."),
                        ("Read pricing.py once more.", edited, "It now rounds half-up."),
                    ],
                )
            )
    mixed = [
        (
            "What is the state of my branch?",
            have("git-status-project", "git-diff-project"),
            "Two modified files, one deleted, one untracked.",
        ),
        (
            "Run the tests and the linters.",
            have("pytest-verbose", "ruff", "mypy"),
            "Tests fail in pricing and models; ruff and mypy report findings in report.py.",
        ),
        (
            "Check the API and the sync log.",
            have("api-items", "app-log"),
            "Item 1017 and 1133 report a failed sync; the sync worker logs ERROR lines for the same upstream 502.",
        ),
        (
            "Is the native code any better?",
            have("gcc", "go-build", "cargo-check", "node"),
            "Each of the native checkers fails to build or run; the first error of each is quoted above.",
        ),
    ]
    mixed_turns = [t for t in mixed if t[1]]
    if len(mixed_turns) >= 2:
        out.append(openai_record(f"{ID_PREFIX}-session-mixed", mixed_turns))
        out.append(anthropic_record(f"{ID_PREFIX}-session-mixed-anthropic", mixed_turns))
    history = [
        t
        for t in [
            (
                "Catch me up on the repository.",
                have("git-log", "git-show", "git-diff", "git-status-repo"),
                "The log, one commit in full and a diff across several commits are above.",
            )
        ]
        if t[1]
    ]
    if history:
        out.append(openai_record(f"{ID_PREFIX}-session-history", history))
    return out


# -- building -----------------------------------------------------------------------------------


def build(path: Path, repo: Path = REPO, log: Callable[[str], None] | None = None) -> Path:
    """Run the programs, write the records to ``path`` (atomically), return ``path``."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ctxpress-corpus-") as tmp:
        found, run = captures(Path(tmp), repo)
        rows = records(found)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")  # concurrent builds
    with open(partial, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    partial.replace(path)
    if log is not None:
        skipped = f"; skipped: {', '.join(run.skipped)}" if run.skipped else ""
        log(
            f"corpus: {len(rows)} records from {len(found)} program runs, "
            f"{path.stat().st_size / 1e6:.2f} MB in {time.monotonic() - started:.1f} s -> {path}"
            f"{skipped}"
        )
    return path


def ensure(
    path: Path | None = None, *, force: bool = False, log: Callable[[str], None] | None = None
) -> Path:
    """The corpus at ``path`` (default: :func:`default_path`), built when missing or forced.

    The default name carries ``VERSION``, so a new generator version builds a new file.
    """
    target = path or default_path()
    if force or not target.is_file():
        return build(target, log=log)
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.bench.corpus")
    parser.add_argument("-o", "--output", default=None)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    path = ensure(
        Path(args.output) if args.output else None,
        force=args.force,
        log=None if args.quiet else say,
    )
    print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
