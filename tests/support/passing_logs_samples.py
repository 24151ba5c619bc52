"""Real test runs whose passing tests print, for the test-report structure.

``python -m tests.support.passing_logs_samples`` writes two small projects into
a temporary folder and runs them, writing what they printed into
``tests/data/passing-logs/``:

- ``go-test-v.txt``: ``go test -v ./...`` over a Go package (a price table test
  with four subtests, one failing, every fifth test; plain tests that call
  ``t.Logf`` and pass);
- ``jest.txt``: ``jest`` over six test files whose tests call ``console.log``
  (one failing test in every other file), with the jest of
  :data:`tests.support.runner_samples.JS_TOOLS` (skipped when it is missing).

Neither prints the temporary folder's path (both print paths relative to the
project).  The tests read the files only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.runner_samples import JS_TOOLS

DATA = Path(__file__).resolve().parent.parent / "data" / "passing-logs"

_SHOP = """package shop

import "fmt"

func Discount(p float64, pct int) float64 { return p - p*float64(pct)/100 }

func Label(n int) string { return fmt.Sprintf("item-%d", n) }
"""

_TABLE = """func TestDiscountTable{i}(t *testing.T) {{
	cases := []struct {{
		p    float64
		pct  int
		want float64
	}}{{{{100, 10, 90}}, {{50, 20, 40}}, {{10, 5, 9.5}}, {{80, 25, 61}}}}
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

_PLAIN = """func TestLabel{i}(t *testing.T) {{
	t.Logf("label for {i}: %s", Label({i}))
	if Label({i}) != "item-{i}" {{
		t.Fatal("bad label")
	}}
}}
"""


def _tests(count: int) -> str:
    parts = ['package shop\n\nimport (\n\t"fmt"\n\t"testing"\n)\n']
    for i in range(count):
        parts.append((_TABLE if i % 5 == 0 else _PLAIN).format(i=i))
    return "\n".join(parts)


def capture_go(count: int = 30) -> str:
    go = shutil.which("go")
    if go is None:
        raise SystemExit("go is not on the PATH")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "go.mod").write_text("module example.com/shop\n\ngo 1.21\n", encoding="utf-8")
        (root / "shop.go").write_text(_SHOP, encoding="utf-8")
        (root / "shop_test.go").write_text(_tests(count), encoding="utf-8")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tmp,
            "GOCACHE": str(root / ".gocache"),
            "GOFLAGS": "-mod=mod",
            "GOPROXY": "off",
            "LC_ALL": "C.UTF-8",
        }
        done = subprocess.run(
            [go, "test", "-v", "-count=1", "./..."],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
            env=env,
            timeout=300,
        )
        return done.stdout


def _jest_file(f: int) -> str:
    body = ["const { total } = require('../order');", "", f"describe('order suite {f}', () => {{"]
    for i in range(12):
        want = i + 2 + (1 if i == 7 and f % 2 == 0 else 0)
        body += [
            f"  test('computes total {f}-{i}', () => {{",
            f"    console.log('checking order', {i});",
            f"    expect(total([{i}, 2])).toBe({want});",
            "  });",
        ]
    return "\n".join([*body, "});", ""])


def capture_jest() -> str | None:
    jest = JS_TOOLS / ".bin" / "jest"
    if not jest.exists() or shutil.which("node") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "orders").mkdir()
        (root / "package.json").write_text(
            '{"name": "orders", "private": true}\n', encoding="utf-8"
        )
        (root / "order.js").write_text(
            "exports.total = (xs) => xs.reduce((a, b) => a + b, 0);\n", encoding="utf-8"
        )
        for f in range(6):
            (root / "orders" / f"order{f}.test.js").write_text(_jest_file(f), encoding="utf-8")
        done = subprocess.run(
            [str(jest), "--ci", "--rootDir", ".", "orders"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "LC_ALL": "C.UTF-8"},
            timeout=300,
        )
        return done.stdout


if __name__ == "__main__":
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "go-test-v.txt").write_text(capture_go(), encoding="utf-8")
    print(f"wrote {DATA / 'go-test-v.txt'}")
    jest_output = capture_jest()
    if jest_output is not None:
        (DATA / "jest.txt").write_text(jest_output, encoding="utf-8")
        print(f"wrote {DATA / 'jest.txt'}")
