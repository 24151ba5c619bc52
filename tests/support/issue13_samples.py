"""Issue 13's facts audit: outputs of real programs, and the fact each must keep visible.

``python -m tests.support.issue13_samples`` writes small projects into a
temporary folder, runs this machine's programs on them (cargo, go test -race,
go run, gcc -fsanitize=address, valgrind, cmake, find, python services, node;
each only when installed) and writes what they printed to
``tests/data/issue13/NAME.txt`` with ``manifest.json`` beside them (the
temporary folder's path replaced by ``/home/dev/proj``).  rspec and phpunit
are written by hand from their documented formats (ruby and php are not
installed here).  The tests read the files only: the repository stands alone.

Each manifest entry: ``command`` (what an agent would have run), ``item`` (the
issue's wording) and ``facts``: identifying parts (a path, a test id, a
``file:line``, a request) that standard and aggressive mode must leave
readable in the output, picked from the output by the patterns below.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from workers.bench.programs import go_env

DATA = Path(__file__).resolve().parent.parent / "data" / "issue13"
MANIFEST = DATA / "manifest.json"
PROJ = "/home/dev/proj"
JS_TOOLS = Path(os.environ.get("CTX_JS_TOOLS", "/tmp/t13/js/node_modules"))


def load() -> dict[str, dict[str, Any]]:
    """name -> {command, item, facts, output} from the checked-in files."""
    manifest: dict[str, dict[str, Any]] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    for name, entry in manifest.items():
        entry["output"] = (DATA / f"{name}.txt").read_text(encoding="utf-8")
    return manifest


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def _run(argv: list[str] | str, cwd: Path, env: dict[str, str] | None = None) -> str:
    full = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0", CI="1", TERM="dumb", LC_ALL="C")
    full.update(env or {})
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        shell=isinstance(argv, str),
    )
    return proc.stdout + proc.stderr


# -- Rust -----------------------------------------------------------------------------------------

CARGO_TOML = """
[package]
name = "report"
version = "0.1.0"
edition = "2021"

[dependencies]
"""

RUST_BROKEN_LIB = (
    "pub mod util;\n\n"
    + "".join(f"pub fn helper_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n" for i in range(6))
    + """
pub fn parse_count(s: &str) -> u32 {
    let n: u32 = "five";
    s.len() as u32 + n
}

pub fn total(items: &[u32]) -> u32 {
    let total: u32 = items.iter().sum();
    totl
}
"""
)
RUST_UTIL = "".join(
    f"pub fn step_{i}(v: u32) -> u32 {{\n    let tmp{i} = v * 2;\n    v + 1\n}}\n\n"
    for i in range(10)
)


def _rust_report() -> str:
    lines = [
        "pub fn share(part: u32, whole: u32) -> u32 {",
        "    if whole == 0 {",
    ]
    lines += [f"        // {i}" for i in range(56)]
    # line 59 is 'let pct = ...', line 60 col 23 holds the division
    lines += [
        "        let zero = whole;",
        "        return part * 100 / zero;",  # line 60: the division panics at col 16
        "    }",
        "    part * 100 / whole",
        "}",
        "",
        "pub fn bucket(values: &[u32], i: usize) -> u32 {",
        "    values[i]",  # line 67
        "}",
        "",
    ]
    return "\n".join(lines)


RUST_TESTS_LIB = (
    "pub mod report;\n\n#[cfg(test)]\nmod tests {\n    use super::report::*;\n\n"
    + "".join(
        f"    #[test]\n    fn share_case_{i:02d}() {{\n        assert_eq!(share({i}, 100), {i});\n    }}\n\n"
        for i in range(30)
    )
    + "    #[test]\n    fn share_of_empty_batch() {\n        assert_eq!(share(3, 0), 0);\n    }\n\n"
    "    #[test]\n    fn share_of_empty_order() {\n        assert_eq!(share(0, 0), 0);\n    }\n\n"
    "    #[test]\n    fn bucket_past_the_end() {\n        assert_eq!(bucket(&[1, 2, 3], 7), 0);\n    }\n\n"
    "    #[test]\n    fn bucket_rounding() {\n        assert_eq!(bucket(&[1, 2, 3], 1), 3);\n    }\n"
    "}\n"
)

# -- Go -------------------------------------------------------------------------------------------

GO_MOD = "module example.com/shop\n\ngo 1.21\n"
GO_SHOP = """
package shop

// Discount returns the discounted price in cents.
func Discount(cents int) int {
	if cents%5 == 0 && cents > 20 {
		return cents - cents/10 - 1
	}
	return cents - cents/10
}

// Counter counts hits from many goroutines (without a lock: a data race).
type Counter struct{ n int }

func (c *Counter) Hit() {
	c.n++
}

func (c *Counter) Value() int { return c.n }
"""
GO_TEST = """
package shop

import (
	"fmt"
	"sync"
	"testing"
)

func TestDiscount(t *testing.T) {
	for i := 0; i < 30; i++ {
		cents := i * 5
		t.Run(fmt.Sprintf("case_%d", i), func(t *testing.T) {
			want := cents - cents/10
			got := Discount(cents)
			if i == 5 || i == 17 {
				if got != want {
					t.Errorf("Discount(%d) = %d, want %d", cents, got, want)
				}
			}
		})
	}
}

func TestCounter(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Hit()
		}()
	}
	wg.Wait()
	if c.Value() == 0 {
		t.Fatal("no hits")
	}
}
""" + "".join(
    f'\nfunc TestPrice{i:02d}(t *testing.T) {{\n\tif Discount({i}) > {i} {{\n\t\tt.Fatal("up")\n\t}}\n}}\n'
    for i in range(20)
)
GO_PANIC = """
package main

import (
	"fmt"
	"os"
)

type order struct {
	id    int
	lines []int
}

func lineTotal(o order, i int) int {
	return o.lines[i] * 100
}

func main() {
	orders := []order{{1, []int{3, 4}}, {2, []int{5}}, {3, []int{1, 2, 3}}}
	for n := 0; n < 40; n++ {
		fmt.Fprintf(os.Stdout, "processing batch %d: %d orders\\n", n, len(orders))
	}
	for _, o := range orders {
		fmt.Printf("order %d total %d\\n", o.id, lineTotal(o, 1))
	}
}
"""

# -- C --------------------------------------------------------------------------------------------

VEC_C = """
#include <stdio.h>
#include <stdlib.h>

typedef struct { int *data; int len; int cap; } vec;

vec *vec_new(int cap) {
    vec *v = malloc(sizeof(vec));
    v->data = malloc(sizeof(int) * cap);
    v->len = 0;
    v->cap = cap;
    return v;
}

void vec_push(vec *v, int x) {
    v->data[v->len] = x;
    v->len++;
}

int main(void) {
    vec *v = vec_new(8);
    for (int i = 0; i < 40; i++) {
        printf("push %d (len %d, cap %d)\\n", i, v->len, v->cap);
        vec_push(v, i);
    }
    free(v->data);
    free(v);
    return 0;
}
"""
VEC_MAKEFILE = """
CFLAGS = -g -O0 -Wall

asan: test_vec

test_vec: vec.c
\tgcc $(CFLAGS) -fsanitize=address -fno-omit-frame-pointer -o test_vec vec.c
"""
LEAK_C = """
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

char *copy_name(const char *name) {
    char *out = malloc(strlen(name) + 1);
    strcpy(out, name);
    return out;
}

int *make_table(int n) {
    int *t = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) t[i] = i;
    return t;
}

int main(void) {
    for (int i = 0; i < 30; i++) {
        char *n = copy_name("customer");
        printf("loaded %s %d\\n", n, i);
        if (i % 2 == 0) free(n);
    }
    int *t = make_table(64);
    printf("table %d\\n", t[3]);
    return 0;
}
"""
CMAKE_LISTS = """
cmake_minimum_required(VERSION 3.16)
project(cvec C)

add_library(vec STATIC src/vec.c)
add_executable(app)
add_executable(bench bench/main.c)
target_link_libraries(bench vec)
"""

# -- Python services ------------------------------------------------------------------------------

SERVICE_PY = """
import logging
import random
import sys
import time

logging.basicConfig(
    stream=sys.stdout,
    level=logging.INFO,
    format="[%(asctime)s] %(levelname)s in %(module)s: %(message)s",
)
log = logging.getLogger("app")
werkzeug = logging.getLogger("werkzeug")

INVOICES = {3: 120, 7: 88}


def render_invoice(order_id):
    total = INVOICES[order_id]
    return f"invoice {order_id}: {total}"


def handle(method, path):
    if path.endswith("/invoice"):
        order_id = int(path.split("/")[2])
        return render_invoice(order_id)
    return "ok"


random.seed(7)
for n in range(180):
    order = random.choice([3, 7, 12, 31, 3, 7, 3, 7, 5])
    path = random.choice([f"/orders/{order}", f"/orders/{order}/invoice", "/health", "/cart"])
    try:
        handle("GET", path)
        status = 200
    except Exception:
        log.exception("Exception on %s [GET]", path)
        status = 500
    werkzeug.info('127.0.0.1 - - "GET %s HTTP/1.1" %d -', path, status)
    if n % 30 == 0:
        log.warning("retrying payment sync (attempt %d of 5)", n // 30 + 1)
"""

IMPORT_JOB_PY = """
import json
import logging
import sys

logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s")
log = logging.getLogger("import_job")


class ImportFailed(RuntimeError):
    pass


def parse_row(raw):
    return json.loads(raw)


def load(rows):
    out = []
    for i, raw in enumerate(rows):
        try:
            out.append(parse_row(raw))
        except json.JSONDecodeError as exc:
            raise ImportFailed(f"row {i} of customers.jsonl is not JSON") from exc
        log.info("row %d imported", i)
    return out


rows = ['{"id": %d}' % i for i in range(120)] + ['{"id": 120,']
load(rows)
"""

NODE_SERVER = """
const orders = new Map([[1, { id: 1, lines: [3, 4] }], [2, { id: 2 }]]);

function lineCount(order) {
  return order.lines.length;
}

function summary(id) {
  const order = orders.get(id);
  return `order ${id}: ${lineCount(order)} lines`;
}

for (let i = 0; i < 60; i++) {
  console.log(`[worker] tick ${i}: queue depth ${i % 7}`);
}
console.log(summary(1));
console.log(summary(3));
"""

# -- hand-written reports (ruby and php are not installed) -------------------------------------


def _rspec() -> str:
    passing = "".join(f"    calculates the line total for {n} items\n" for n in range(2, 30))
    return (
        "Run options: include {:focus=>true}\n\n"
        "All examples were filtered out; ignoring {:focus=>true}\n\n"
        "Randomized with seed 40211\n\n"
        "Cart\n  #total\n" + passing + "    applies the coupon before tax (FAILED - 1)\n"
        "  #checkout\n    charges the card once\n"
        "    refuses an expired card (FAILED - 2)\n\n"
        "Failures:\n\n"
        "  1) Cart#total applies the coupon before tax\n"
        "     Failure/Error: expect(cart.total).to eq(90.0)\n\n"
        "       expected: 90.0\n"
        "            got: 99.0\n\n"
        "       (compared using ==)\n"
        "     # ./spec/cart_spec.rb:41:in `block (3 levels) in <top (required)>'\n\n"
        "  2) Cart#checkout refuses an expired card\n"
        "     Failure/Error: expect { cart.checkout(card) }.to raise_error(CardExpired)\n"
        "       expected CardExpired but nothing was raised\n"
        "     # ./spec/cart_spec.rb:77:in `block (3 levels) in <top (required)>'\n\n"
        "Finished in 0.04321 seconds (files took 0.21 seconds to load)\n"
        "31 examples, 2 failures\n\n"
        "Failed examples:\n\n"
        "rspec ./spec/cart_spec.rb:38 # Cart#total applies the coupon before tax\n"
        "rspec ./spec/cart_spec.rb:74 # Cart#checkout refuses an expired card\n\n"
        "Randomized with seed 40211\n"
    )


def _phpunit() -> str:
    return (
        "PHPUnit 10.5.20 by Sebastian Bergmann and contributors.\n\n"
        "Runtime:       PHP 8.3.6\n"
        "Configuration: /home/dev/proj/phpunit.xml\n\n" + "." * 63 + "  63 / 66 ( 95%)\n"
        "F.F                                                              66 / 66 (100%)\n\n"
        "Time: 00:00.052, Memory: 8.00 MB\n\n"
        "There were 2 failures:\n\n"
        "1) Tests\\CartTest::testCouponIsAppliedBeforeTax\n"
        "Failed asserting that 99.0 matches expected 90.0.\n\n"
        "/home/dev/proj/tests/CartTest.php:41\n\n"
        "2) Tests\\CartTest::testExpiredCardIsRefused\n"
        'Failed asserting that exception of type "App\\CardExpired" is thrown.\n\n'
        "/home/dev/proj/tests/CartTest.php:77\n\n"
        "FAILURES!\n"
        "Tests: 66, Assertions: 121, Failures: 2.\n"
    )


# -- generated logs and data ----------------------------------------------------------------------


def _access_log() -> str:
    """An nginx ``combined`` access log: 60 5xx requests, each to its own path, among 2xx."""
    rnd = random.Random(13)
    agents = [
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
        "python-requests/2.32.3",
        "curl/8.5.0",
    ]
    bad = sorted(rnd.sample(range(100, 999), 60))
    kinds = ["orders", "invoices", "carts"]
    out: list[str] = []
    second = 0
    for n in range(420):
        second += rnd.randint(0, 3)
        stamp = f"01/Dec/2026:14:{10 + second // 60:02d}:{second % 60:02d} +0000"
        ip = f"10.0.{rnd.randint(0, 3)}.{rnd.randint(2, 250)}"
        if n % 7 == 3 and bad:
            oid = bad.pop(0)
            path = f"/api/{kinds[oid % 3]}/{oid}"
            status = rnd.choice([500, 502, 503, 504])
            size = rnd.randint(150, 600)
        else:
            path = rnd.choice(
                ["/api/orders", "/api/cart", "/healthz", f"/api/orders/{rnd.randint(1, 99)}"]
            )
            status = rnd.choice([200, 200, 200, 201, 204])
            size = rnd.randint(200, 9000)
        method = "POST" if status == 201 else "GET"
        out.append(
            f'{ip} - - [{stamp}] "{method} {path} HTTP/1.1" {status} {size} "-" "{rnd.choice(agents)}"'
        )
    assert not bad
    return "\n".join(out) + "\n"


def _json_errors() -> str:
    rnd = random.Random(5)
    items: list[dict[str, Any]] = []
    for i in range(90):
        item: dict[str, Any] = {
            "id": 4000 + i,
            "shard": f"shard-{i % 12}",
            "started": f"2026-12-01T14:{i // 60 + 10:02d}:{i % 60:02d}Z",
            "rows": rnd.randint(900, 5000),
        }
        if i in (17, 52, 71):
            item["summary"] = f"{rnd.randint(2, 9)} failures while syncing {item['shard']}"
        else:
            item["summary"] = "synced"
        items.append(item)
    return json.dumps(items, indent=2) + "\n"


def _tree(root: Path) -> None:
    files = ["CMakeLists.txt", "README.md", "LICENSE"]
    files += [f"src/vec_{name}.c" for name in ("core", "grow", "iter", "sort", "find", "io")]
    files += [f"include/cvec/vec_{name}.h" for name in ("core", "grow", "iter", "sort")]
    files += [f"tests/test_{name}.c" for name in ("push", "pop", "grow", "sort", "bounds")]
    files += [f"bench/bench_{name}.c" for name in ("push", "sort")]
    files += ["docs/design.md", "docs/api.md", "scripts/fmt.sh", ".clang-format"]
    for name in files:
        path = root / "cvec" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"/* {name} */\n", encoding="utf-8")


# -- process dumps and shell lint (set 7's misses) -------------------------------------------------

# two threads that take two locks in opposite order, and a pool asleep: ``kill -3`` makes the JVM
# print every thread's stack and its deadlock report
LEDGER_JAVA = 'import java.util.concurrent.*;\n\npublic class Ledger {\n    static final Object accounts = new Object();\n    static final Object journal = new Object();\n\n    static void reconcile() throws InterruptedException {\n        synchronized (accounts) {\n            Thread.sleep(200);\n            synchronized (journal) {\n                System.out.println("reconciled");\n            }\n        }\n    }\n\n    static void post() throws InterruptedException {\n        synchronized (journal) {\n            Thread.sleep(200);\n            synchronized (accounts) {\n                System.out.println("posted");\n            }\n        }\n    }\n\n    public static void main(String[] args) throws Exception {\n        ExecutorService pool = Executors.newFixedThreadPool(4);\n        Thread a = new Thread(() -> { try { reconcile(); } catch (InterruptedException e) {} }, "ledger-reconciler");\n        Thread b = new Thread(() -> { try { post(); } catch (InterruptedException e) {} }, "journal-poster");\n        a.start(); b.start();\n        for (int i = 0; i < 4; i++) {\n            final int n = i;\n            pool.submit(() -> { try { Thread.sleep(60000); } catch (InterruptedException e) {} return n; });\n        }\n        Thread.sleep(60000);\n    }\n}\n'

# a goroutine that sleeps holding the lock three watchers wait for: ``kill -QUIT`` makes the Go
# runtime print ``SIGQUIT: quit`` and every goroutine's stack
MESHD_GO = 'package main\n\nimport (\n\t"fmt"\n\t"sync"\n\t"time"\n)\n\ntype Router struct {\n\tmu     sync.Mutex\n\troutes map[string]string\n\tevents chan string\n}\n\nfunc (r *Router) watch(name string) {\n\tfor ev := range r.events {\n\t\tr.mu.Lock()\n\t\tr.routes[name] = ev\n\t\tr.mu.Unlock()\n\t}\n}\n\nfunc (r *Router) syncPeers(wg *sync.WaitGroup) {\n\tdefer wg.Done()\n\tr.mu.Lock()\n\ttime.Sleep(time.Hour) // holds the lock: every watcher blocks\n\tr.mu.Unlock()\n}\n\nfunc main() {\n\tr := &Router{routes: map[string]string{}, events: make(chan string)}\n\tvar wg sync.WaitGroup\n\twg.Add(1)\n\tgo r.syncPeers(&wg)\n\tfor i := 0; i < 3; i++ {\n\t\tgo r.watch(fmt.Sprintf("peer-%d", i))\n\t}\n\ttime.Sleep(50 * time.Millisecond)\n\tgo func() { r.events <- "up" }()\n\twg.Wait()\n}\n'

DEPLOY_SH = '#!/bin/bash\nRELEASE=$1\nHOSTS="web1 web2"\nfor h in $HOSTS; do\n  echo Deploying $RELEASE to $h\n  scp build/$RELEASE.tar.gz deploy@$h:/tmp/\n  ssh deploy@$h "cd /srv/app && tar xzf /tmp/$RELEASE.tar.gz"\n  if [ $? != 0 ]; then\n    echo "failed on $h"\n  fi\ndone\ncd /srv/app/releases\nrm -rf $OLD_RELEASE/*\nfiles=$(ls *.tar.gz)\nfor f in $files; do\n  [ -f $f ] && echo "found $f"\ndone\nread line < config.txt\necho `date` >> deploy.log\n'

BACKUP_SH = '#!/bin/sh\nSRC=/var/lib/app\nDEST=/backup/$(date +%F)\nmkdir -p $DEST\ncp -r $SRC/* $DEST\nif [ "$1" == "--prune" ]; then\n  find /backup -mtime +14 -exec rm -rf {} \\;\nfi\necho "backup done: $DEST"\n'


def _signal_dump(argv: list[str], cwd: Path, signal_no: int, wait: float) -> str:
    """What a program prints when it gets ``signal_no`` after ``wait`` seconds (then it stops)."""
    import signal
    import time

    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    time.sleep(wait)
    proc.send_signal(signal_no)
    time.sleep(1.0)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    return out


def capture_dumps(work: Path) -> dict[str, tuple[str, str]]:
    """The JVM's thread dump, the Go runtime's SIGQUIT dump and shellcheck's tty report."""
    import signal

    have = shutil.which
    got: dict[str, tuple[str, str]] = {}
    if have("javac") and have("java"):
        jv = work / "ledger"
        _write(jv, {"Ledger.java": LEDGER_JAVA})
        _run(["javac", "Ledger.java"], jv)
        got["jvm-thread-dump-deadlock"] = (
            "kill -3 $(pgrep -f Ledger) && cat ledger.out",
            _signal_dump(["java", "-cp", ".", "Ledger"], jv, signal.SIGQUIT, 2.0),
        )
    if have("go"):
        gm = work / "meshd"
        _write(
            gm, {"go.mod": "module example.com/meshd\n\ngo 1.21\n", "cmd/meshd/main.go": MESHD_GO}
        )
        _run(["go", "build", "-o", "meshd", "./cmd/meshd"], gm, go_env(work))
        got["go-sigquit-dump"] = (
            "./meshd",
            _signal_dump(["./meshd"], gm, signal.SIGQUIT, 1.0),
        )
    if have("shellcheck"):
        sh = work / "scripts"
        _write(sh, {"deploy.sh": DEPLOY_SH, "backup.sh": BACKUP_SH})
        got["shellcheck-tty"] = (
            "shellcheck deploy.sh backup.sh",
            _run(["shellcheck", "deploy.sh", "backup.sh"], sh),
        )
    return got


# -- the facts ------------------------------------------------------------------------------------

# per sample: the wording and a pattern whose match (group 1, or the whole
# stripped line) is a fact that must stay readable
FACTS: dict[str, tuple[str, str]] = {
    "access-log-5xx": (
        "standard: HTTP 5xx access-log lines (each request path)",
        r'("(?:GET|POST) /\S+ HTTP/1\.1" 5\d\d)',
    ),
    "asan": (
        "standard: SUMMARY: AddressSanitizer line; headline and first user frame",
        r"^(SUMMARY: AddressSanitizer: .*)$|==\d+==ERROR: (AddressSanitizer: \S+)"
        r"|#\d+ 0x[0-9a-f]+ in (vec_push \S+vec\.c:\d+)",
    ),
    "cargo-test-panic": (
        "standard: Rust thread '...' panicked at src/report.rs:60:23: lines",
        r"^(thread '[^']+'(?: \(\d+\))? panicked at \S+:)$|^(test \S+ \.\.\. FAILED)$|^(test result: .*)$",
    ),
    "find-listing": (
        "standard: paths of a find listing",
        r"^(\./cvec/\S+)$",
    ),
    "go-test-race": (
        "standard: Go race report's first user frame; aggressive: --- FAIL: TestDiscount/case_5"
        " and file_test.go:18: lines",
        r"^\s*(--- FAIL: \S+)|^\s*(shop_test\.go:\d+: .*)$|^(WARNING: DATA RACE)$"
        r"|^(\s*\S+/shop\.go:\d+) \+0x|^(FAIL\s+example\.com/shop)",
    ),
    "json-error-items": (
        "standard: a JSON error item whose text says 'failures'",
        r'"(\d+ failures while syncing shard-\d+)"',
    ),
    "cargo-build": (
        "aggressive: Rust  --> src/lib.rs:28:13 locations",
        r"^\s*(--> src/lib\.rs:\d+:\d+)$|^(error\[E\d+\]: .*)$",
    ),
    "valgrind-leak": (
        "aggressive: valgrind definitely lost:",
        r"==\d+==\s+(definitely lost: .*)$|==\d+==\s+(\d+ bytes in \d+ blocks are definitely lost .*)$"
        r"|==\d+==\s+(ERROR SUMMARY: .*)$",
    ),
    "cmake-no-sources": (
        "aggressive: CMake Error / No SOURCES given",
        r"^(CMake Error at \S+ \(\w+\):)$|^\s+(No SOURCES given to target: \w+)$",
    ),
    "flask-log": (
        "aggressive: Flask ERROR in app: Exception on /orders/12/invoice lines",
        r"(ERROR in \w+: Exception on \S+ \[GET\])|^(KeyError: \d+)$",
    ),
    "go-panic": (
        "aggressive: Go panics (headline and first user frame)",
        r"^(panic: .*)$|^\s+(\S+/main\.go:\d+) \+0x",
    ),
    "python-exception": (
        "aggressive: exceptions (Python traceback: exception lines and innermost user frame)",
        r"^(\w+(?:\.\w+)*(?:Error|Failed): .*)$|^\s*(File \"\S+import_job\.py\", line \d+, in parse_row)$",
    ),
    "node-exception": (
        "aggressive: exceptions (Node TypeError and its first user frame)",
        r"^(TypeError: .*)$|^\s+(at lineCount \(\S+server\.js:\d+:\d+\))$",
    ),
    "rspec": (
        "test reports: rspec (failing ids, assertion lines, user frame, summary)",
        r"^\s*(\d\) Cart\S* .*)$|^\s*(expected: .*|got: .*)$|^(rspec \./spec/\S+)|^(\d+ examples, \d+ failures)$"
        r"|(\./spec/cart_spec\.rb:\d+)",
    ),
    "jvm-thread-dump-deadlock": (
        "set 7: a JVM thread dump's deadlock report (headline, threads, first user frames)",
        r"^(Found one Java-level deadlock:)$|^(Found \d+ deadlocks?\.)$|^(\"[\w-]+\":)$"
        r"|^\s+(which is held by \"[\w-]+\")$|^\s+at (Ledger\.(?:reconcile|post)\(Ledger\.java:\d+\))",
    ),
    "go-sigquit-dump": (
        "set 7: a Go SIGQUIT dump (headline, each goroutine's frames in user code)",
        # each goroutine's first frame in user code: main (40), syncPeers (26), watch (16, 17)
        r"^(SIGQUIT: quit)$|^\s+(\S+/cmd/meshd/main\.go:(?:40|26|16|17)) \+0x",
    ),
    "shellcheck-tty": (
        "set 7: shellcheck's tty report (each place and each finding)",
        r"^(In \S+ line \d+:)$|^\s*(\^-*\^? SC\d{4} \(\w+\): .*)$",
    ),
    "phpunit": (
        "test reports: phpunit (failing ids, assertion lines, location, summary)",
        r"^(\d\) Tests\\\S+)$|^(Failed asserting .*)$|^(/\S+Test\.php:\d+)$|^(Tests: .*)$",
    ),
}


def _facts(name: str, output: str) -> list[str]:
    rx = re.compile(FACTS[name][1])
    out: list[str] = []
    for line in output.splitlines():
        match = rx.search(line)
        if match is None:
            continue
        groups = [g for g in match.groups() if g]
        fact = (groups[0] if groups else match.group()).strip()
        if fact not in out:
            out.append(fact)
    return out


def capture(work: Path) -> dict[str, tuple[str, str]]:
    """name -> (command, output) for every program this machine has."""
    have = shutil.which
    got: dict[str, tuple[str, str]] = {}
    got["access-log-5xx"] = ("tail -n 420 /var/log/nginx/access.log", _access_log())
    got["json-error-items"] = ("curl -s http://127.0.0.1:8080/api/sync/jobs", _json_errors())
    got["rspec"] = ("bundle exec rspec", _rspec())
    got["phpunit"] = ("vendor/bin/phpunit", _phpunit())
    _tree(work)
    got["find-listing"] = ("find ./cvec -type f | sort", _run("find ./cvec -type f | sort", work))
    py = work / "py"
    _write(py, {"app.py": SERVICE_PY, "import_job.py": IMPORT_JOB_PY})
    got["flask-log"] = ("python3 app.py", _run([sys.executable, "app.py"], py))
    got["python-exception"] = ("python3 import_job.py", _run([sys.executable, "import_job.py"], py))
    if have("cargo"):
        env = {"CARGO_TARGET_DIR": str(work / "target"), "CARGO_TERM_COLOR": "never"}
        rb = work / "report"
        _write(
            rb, {"Cargo.toml": CARGO_TOML, "src/lib.rs": RUST_BROKEN_LIB, "src/util.rs": RUST_UTIL}
        )
        got["cargo-build"] = ("cargo build", _run(["cargo", "build", "--offline"], rb, env))
        rt = work / "report-tests"
        _write(
            rt,
            {
                "Cargo.toml": CARGO_TOML,
                "src/lib.rs": RUST_TESTS_LIB,
                "src/report.rs": _rust_report(),
            },
        )
        _run(["cargo", "test", "--offline", "--no-run"], rt, env)
        got["cargo-test-panic"] = ("cargo test", _run(["cargo", "test", "--offline"], rt, env))
    if have("go"):
        env = go_env(work)
        go = work / "shop"
        _write(go, {"go.mod": GO_MOD, "shop.go": GO_SHOP, "shop_test.go": GO_TEST})
        got["go-test-race"] = (
            "go test -race -v ./...",
            _run(["go", "test", "-race", "-vet=off", "-v", "./..."], go, env),
        )
        gp = work / "orders"
        _write(gp, {"go.mod": GO_MOD.replace("shop", "orders"), "main.go": GO_PANIC})
        got["go-panic"] = ("go run .", _run(["go", "run", "."], gp, env))
    if have("gcc"):
        c = work / "vec"
        _write(c, {"vec.c": VEC_C, "Makefile": VEC_MAKEFILE})
        got["asan"] = (
            "make asan && ./test_vec",
            _run("make asan && ./test_vec", c, {"ASAN_OPTIONS": "detect_leaks=0"}),
        )
        if have("valgrind"):
            lk = work / "leak"
            _write(lk, {"leak.c": LEAK_C})
            _run(["gcc", "-g", "-O0", "-o", "leak", "leak.c"], lk)
            got["valgrind-leak"] = (
                "valgrind --leak-check=full ./leak",
                _run(["valgrind", "--leak-check=full", "./leak"], lk),
            )
    if have("cmake"):
        cm = work / "cmake"
        _write(
            cm,
            {
                "CMakeLists.txt": CMAKE_LISTS,
                "src/vec.c": "int vec(void) { return 1; }\n",
                "bench/main.c": "int main(void) { return 0; }\n",
            },
        )
        got["cmake-no-sources"] = (
            "cmake -S . -B build && cmake --build build",
            _run("cmake -S . -B build && cmake --build build", cm),
        )
    if have("node"):
        nd = work / "node"
        _write(nd, {"server.js": NODE_SERVER})
        got["node-exception"] = ("node server.js", _run(["node", "server.js"], nd))
    return got


def _normalise(text: str, work: Path) -> str:
    text = text.replace(str(work), PROJ)
    text = re.sub(r"/tmp/[\w.-]+/", "/tmp/x/", text)
    # timing lines vary from run to run; keep them realistic but stable
    return text


def main() -> None:
    """Capture every sample, or (``--only NAME ...``) only those, merged into the manifest."""
    only = set(sys.argv[sys.argv.index("--only") + 1 :]) if "--only" in sys.argv else None
    DATA.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict[str, Any]] = {}
    if only is not None and MANIFEST.exists():
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="issue13-") as tmp:
        work = Path(tmp)
        captured = (
            capture_dumps(work) if only is not None else {**capture(work), **capture_dumps(work)}
        )
        for name, (command, output) in captured.items():
            if only is not None and name not in only:
                continue
            output = _normalise(output, work)
            (DATA / f"{name}.txt").write_text(output, encoding="utf-8")
            item, _ = FACTS[name]
            manifest[name] = {"command": command, "item": item, "facts": _facts(name, output)}
    MANIFEST.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for name, entry in sorted(manifest.items()):
        print(f"{name}: {len(entry['facts'])} facts")


if __name__ == "__main__":
    main()
