"""Test-runner reports and compiler diagnostics captured once from real programs.

``python -m tests.support.runner_samples`` writes tiny projects into a
temporary folder, runs this machine's toolchains on them (pytest, unittest,
go test -v, go vet, cargo test, cargo build, node --test, vitest, jest,
mocha, tsc, eslint, ctest, gcc, javac; each only when it is installed) and
writes what they printed to ``runner_samples.json`` beside this file, with
the temporary folder's path replaced by ``/home/dev/proj``.  The tests read
the JSON only: the repository stands alone.

Each sample: ``name``, ``family`` (``report`` or ``diagnostics``), the
``command`` it ran (the tests also feed it under a command nobody wrote a
filter for), its ``output`` and ``facts``: the lines (stripped) that must
stay visible after standard and aggressive compression (failing test ids,
assertion lines, locations, headlines, summaries), picked by the
per-runner patterns below.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from workers.bench.programs import go_env

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "runner_samples.json"
JS_TOOLS = Path(os.environ.get("CTX_JS_TOOLS", "/tmp/t13/js/node_modules"))
PROJ = "/home/dev/proj"


def load() -> list[dict[str, Any]]:
    """The captured samples (the checked-in JSON)."""
    data: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


# -- the projects --------------------------------------------------------------------------------

PY_MOD = """\
def price(qty, unit):
    return round(qty * unit, 2)


def discount(total, pct):
    if pct > 50:
        raise ValueError(f"discount {pct}% too high")
    return total * (100 - pct) // 100
"""

PY_TESTS = (
    "import unittest\n\nfrom shop import discount, price\n\n\n"
    + "".join(
        f"def test_price_{i:02d}():\n    assert price({i}, 2) == {i * 2}\n\n\n" for i in range(40)
    )
    + "def test_discount_rounding():\n    total = price(3, 19.99)\n"
    "    assert discount(total, 10) == 53.97\n\n\n"
    "def test_discount_limit():\n    assert discount(100, 60) == 40\n"
)

PY_UNITTEST = (
    "import unittest\n\nfrom shop import discount, price\n\n\n"
    "class PriceTest(unittest.TestCase):\n"
    + "".join(
        f"    def test_price_{i:02d}(self):\n        self.assertEqual(price({i}, 2), {i * 2})\n\n"
        for i in range(40)
    )
    + "    def test_discount_rounding(self):\n"
    "        self.assertEqual(discount(price(3, 19.99), 10), 53.97)\n\n"
    "    def test_discount_limit(self):\n        self.assertEqual(discount(100, 60), 40)\n\n\n"
    "if __name__ == '__main__':\n    unittest.main()\n"
)

GO_MOD = "module example.com/shop\n\ngo 1.21\n"
GO_SRC = """package shop

import "fmt"

func Discount(total, pct int) int {
	if pct >= 40 {
		return total * (100 - pct - 1) / 100
	}
	return total * (100 - pct) / 100
}

func Label(n int) string {
	return fmt.Sprintf("%d items", n)
}

func Report(n int) string {
	return fmt.Sprintf("%d items %s", n)
}
"""
GO_TEST = """package shop

import (
	"fmt"
	"testing"
)

func TestDiscount(t *testing.T) {
	for pct := 0; pct < 45; pct += 1 {
		pct := pct
		t.Run(fmt.Sprintf("case_%d", pct), func(t *testing.T) {
			want := 200 * (100 - pct) / 100
			if got := Discount(200, pct); got != want {
				t.Errorf("Discount(200, %d) = %d, want %d", pct, got, want)
			}
		})
	}
}

func TestLabel(t *testing.T) {
	for n := 0; n < 20; n++ {
		n := n
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			if got := Label(n); got != fmt.Sprintf("%d items", n) {
				t.Fatalf("Label(%d) = %q", n, got)
			}
		})
	}
}
"""

CARGO_TOML = '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
RUST_LIB = (
    "pub fn fee(amount: u64, pct: u64) -> u64 {\n"
    "    if amount > 1000 { amount * pct / 100 + 1 } else { amount * pct / 100 }\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
    + "".join(
        f"    #[test]\n    fn fee_small_{i:02d}() {{\n        assert_eq!(fee({i * 10}, 10), {i});\n    }}\n\n"
        for i in range(30)
    )
    + "    #[test]\n    fn fee_large() {\n        assert_eq!(fee(5000, 10), 500);\n    }\n\n"
    "    #[test]\n    fn fee_overflow() {\n        let v: Vec<u64> = vec![1, 2];\n"
    "        assert_eq!(v[5], fee(1, 1));\n    }\n}\n"
)
RUST_BROKEN = (
    "pub fn total(items: &[u64]) -> u64 {\n"
    '    let n: u32 = "five";\n'
    "    items.iter().sum::<u64>() + n\n}\n\n"
    "pub fn count(items: &[u64]) -> usize {\n"
    + "".join(f"    let tmp{i} = items.len();\n" for i in range(10))
    + "    items.len()\n}\n\n"
    "pub fn unused_helper(x: i32) -> i32 {\n    let y = 3;\n    x\n}\n"
)

NODE_TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n\n"
    "function slug(s) { return s.toLowerCase().replace(/ +/g, '-'); }\n\n"
    + "".join(
        f"test('slug keeps word {i}', () => {{ assert.strictEqual(slug('W{i}'), 'w{i}'); }});\n"
        for i in range(30)
    )
    + "test('slug trims spaces', () => { assert.strictEqual(slug(' A b '), 'a-b'); });\n"
    "test('slug of dots', () => { assert.deepStrictEqual(slug('a.b').split('.'), ['a', 'c']); });\n"
)
JS_SRC = "export function slug(s) { return s.toLowerCase().replace(/ +/g, '-'); }\n"
JS_CJS = (
    "function slug(s) { return s.toLowerCase().replace(/ +/g, '-'); }\nmodule.exports = { slug };\n"
)


def _js_suite(imp: str, describe: str) -> str:
    body = "".join(
        f"  it('keeps word {i}', () => {{ expect(slug('W{i}')).toBe('w{i}'); }});\n"
        for i in range(30)
    )
    return (
        f"{imp}\n\n{describe}('slug', () => {{\n{body}"
        "  it('trims spaces', () => { expect(slug(' A b ')).toBe('a-b'); });\n"
        "  it('splits dots', () => { expect(slug('a.b').split('.')).toEqual(['a', 'c']); });\n"
        "});\n"
    )


MOCHA_TEST = (
    "const assert = require('node:assert');\nconst { slug } = require('./slug.cjs');\n\n"
    "describe('slug', function () {\n"
    + "".join(
        f"  it('keeps word {i}', function () {{ assert.strictEqual(slug('W{i}'), 'w{i}'); }});\n"
        for i in range(30)
    )
    + "  it('trims spaces', function () { assert.strictEqual(slug(' A b '), 'a-b'); });\n"
    "  it('splits dots', function () { assert.deepStrictEqual(slug('a.b').split('.'), ['a', 'c']); });\n"
    "});\n"
)

TS_SRC = (
    "interface Order { id: number; total: number; }\n\n"
    + "".join(
        f"export function f{i}(o: Order): string {{ return o.total{' + 1' if i % 2 else ''}; }}\n"
        for i in range(8)
    )
    + "export const o: Order = { id: '7', total: 3 };\n"
    "export function g(x: number) { return x.lenght; }\n"
)

ESLINT_CONFIG = (
    "module.exports = [{ rules: { 'no-unused-vars': 'warn', 'no-undef': 'error', "
    "semi: ['error', 'always'] }, languageOptions: { sourceType: 'commonjs', "
    "globals: { require: 'readonly', module: 'writable' } } }];\n"
)
ESLINT_SRC = (
    "".join(f"const unused{i} = require('./m{i}')\n" for i in range(9))
    + "function run() { return missing + 1; }\nmodule.exports = { run };\n"
)

CMAKE = (
    "cmake_minimum_required(VERSION 3.10)\nproject(vec C)\nenable_testing()\n"
    "add_executable(check check.c)\n"
    + "".join(f"add_test(NAME vec_case_{i:02d} COMMAND check {i})\n" for i in range(25))
)
CHECK_C = (
    "#include <stdio.h>\n#include <stdlib.h>\n"
    "int main(int argc, char **argv) {\n    int n = atoi(argv[1]);\n"
    '    if (n == 7 || n == 19) { fprintf(stderr, "check.c:6: case %d: expected 3, got 4\\n", n); return 1; }\n'
    "    return 0;\n}\n"
)

GCC_SRC = (
    "#include <stdio.h>\n\n"
    + "".join(f"static int helper{i}(int x) {{ int unused{i}; return x; }}\n" for i in range(6))
    + 'int main(void) {\n    int count = "three";\n    printf("%d\\n", count);\n'
    "    return undefined_total + helper0(1);\n}\n"
)

JAVA_SRC = (
    "import java.util.List;\n\npublic class Ledger {\n"
    "    public int total(List<Integer> xs) {\n        int sum = 0;\n"
    "        for (int x : xs) sum += x;\n        return sum;\n    }\n"
    '    public String label() { return count + " items"; }\n'
    "    public int size() { String s = 5; return s; }\n}\n"
)


POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>shop</groupId><artifactId>ledger</artifactId><version>1.0</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source>
    <maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId>
      <version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
</project>
"""
JAVA_LEDGER = """package shop;

public class Ledger {
    public static int fee(int amount, int pct) {
        return amount > 1000 ? amount * pct / 100 + 1 : amount * pct / 100;
    }
}
"""
JAVA_TEST = (
    "package shop;\n\nimport static org.junit.Assert.assertEquals;\nimport org.junit.Test;\n\n"
    "public class LedgerTest {\n"
    + "".join(
        f"    @Test public void feeSmall{i:02d}() {{ assertEquals({i}, Ledger.fee({i * 10}, 10)); }}\n"
        for i in range(30)
    )
    + "    @Test public void feeLarge() { assertEquals(500, Ledger.fee(5000, 10)); }\n"
    "    @Test public void feeNegative() { assertEquals(0, Ledger.fee(-5, 10) + 1); }\n}\n"
)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> str:
    full = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0", CI="1", TERM="dumb")
    full.pop("PYTEST_ADDOPTS", None)
    full.update(env or {})
    proc = subprocess.run(
        argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout, check=False
    )
    return proc.stdout + proc.stderr


# per family: the lines that must stay visible (stripped)
FACTS: dict[str, str] = {
    "pytest": r"^(?:FAILED|ERROR) |^E   |^\S+\.py:\d+: \w*Error|^=+ .*(?:passed|failed).* =+$|^_{3,} test_\w+ _{3,}$",
    "unittest": r"^(?:FAIL|ERROR): |^\w*Error: |^Ran \d+ tests|^FAILED \(|^  File \"[^\"]*test_shop\.py\", line \d+",
    "go-test": r"--- FAIL: |_test\.go:\d+: |^FAIL\b|^ok\b",
    "cargo-test": r"^test \S+ \.\.\. FAILED|^---- .* stdout ----|panicked at|^  left: |^ right: |^test result: ",
    "node-test": r"^not ok |^# (?:pass|fail|tests) |location: |^\s+(?:expected|actual): ",
    "vitest": r"FAIL |AssertionError|Tests\s+\d|Test Files\s|❯ \S+\.test\.js:\d+:\d+|^\s+[-+] ",
    "jest": r"●|Tests:|Test Suites:|at Object\.<anonymous> \(\S+\.test\.js:\d+:\d+\)|^\s+(?:Expected|Received):",
    "mocha": r"\d+ passing|\d+ failing|^\s*\d+\) slug|AssertionError|slug\.test\.js:\d+:\d+",
    "mvn": r"<<< FAILURE!|^java\.lang\.AssertionError|at shop\.LedgerTest\.\w+\(|^Tests run: |BUILD FAILURE|^Failed tests:",
    "ctest": r"\*\*\*Failed|tests passed|tests failed|^\s+\d+ - vec_case_\d+ \(Failed\)",
    "cargo-build": r"^(?:error|warning)(?:\[E\d+\])?: |^\s*--> src/",
    "tsc": r"error.*TS\d+|^Found \d+ errors?",
    "gcc": r": (?:error|warning): ",
    "javac": r": error: |^\d+ errors?$",
    "go-vet": r"\.go:\d+:\d+: ",
    "eslint": r"^\s+\d+:\d+\s+(?:error|warning)\s|problems? \(|^/\S+\.js$",
}


def _facts(family: str, output: str) -> list[str]:
    rx = re.compile(FACTS[family])
    out: list[str] = []
    for line in output.splitlines():
        s = line.strip()
        if s and rx.search(line) and s not in out:
            out.append(s)
    return out


def capture(work: Path) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []

    def add(name: str, family: str, kind: str, command: str, output: str) -> None:
        output = output.replace(str(work), PROJ)
        output = re.sub(r"/tmp/[\w.-]+/", "/tmp/x/", output)
        if output.strip():
            samples.append(
                {
                    "name": name,
                    "family": kind,
                    "command": command,
                    "output": output,
                    "facts": _facts(family, output),
                }
            )

    have = shutil.which
    py = work / "py"
    _write(py, {"pt/shop.py": PY_MOD, "pt/test_shop.py": PY_TESTS, "ut/shop.py": PY_MOD})
    _write(py, {"ut/test_shop.py": PY_UNITTEST})
    env_py = {"PYTHONDONTWRITEBYTECODE": "1"}
    add(
        "pytest",
        "pytest",
        "report",
        "python -m pytest -v -p no:cacheprovider",
        _run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider"], py / "pt", env_py),
    )
    add(
        "unittest",
        "unittest",
        "report",
        "python -m unittest -v",
        _run([sys.executable, "-m", "unittest", "-v"], py / "ut", env_py),
    )
    if have("go"):
        go = work / "go"
        _write(go, {"go.mod": GO_MOD, "shop.go": GO_SRC, "shop_test.go": GO_TEST})
        env_go = go_env(work)
        add(
            "go-test-v",
            "go-test",
            "report",
            "go test -v ./...",
            _run(["go", "test", "-vet=off", "-v", "./..."], go, env_go),
        )
        add(
            "go-vet",
            "go-vet",
            "diagnostics",
            "go vet ./...",
            _run(["go", "vet", "./..."], go, env_go),
        )
    if have("cargo"):
        rs = work / "rs"
        _write(rs, {"Cargo.toml": CARGO_TOML, "src/lib.rs": RUST_LIB})
        env_rs = {"CARGO_TARGET_DIR": str(work / "target"), "CARGO_TERM_COLOR": "never"}
        _run(["cargo", "test", "--offline", "--no-run"], rs, env_rs)
        add(
            "cargo-test",
            "cargo-test",
            "report",
            "cargo test",
            _run(["cargo", "test", "--offline"], rs, env_rs),
        )
        rb = work / "rb"
        _write(
            rb, {"Cargo.toml": CARGO_TOML.replace("ledger", "totals"), "src/lib.rs": RUST_BROKEN}
        )
        add(
            "cargo-build",
            "cargo-build",
            "diagnostics",
            "cargo build",
            _run(["cargo", "build", "--offline"], rb, env_rs),
        )
    if have("node"):
        nd = work / "node"
        _write(nd, {"slug.test.js": NODE_TEST})
        add(
            "node-test",
            "node-test",
            "report",
            "node --test",
            _run(["node", "--test", "slug.test.js"], nd),
        )
    bins = JS_TOOLS / ".bin"
    if have("node") and bins.is_dir():
        js = work / "js"
        js.mkdir(parents=True)
        os.symlink(JS_TOOLS, js / "node_modules")
        _write(
            js,
            {
                "package.json": '{"name": "slug", "version": "1.0.0"}\n',
                "slug.js": JS_SRC,
                "slug.cjs": JS_CJS,
                "vitest/slug.test.js": _js_suite(
                    "import { describe, it, expect } from 'vitest';\nimport { slug } from '../slug.js';",
                    "describe",
                ),
                "jest/slug.test.js": _js_suite(
                    "const { slug } = require('../slug.cjs');", "describe"
                ),
                "mocha/slug.test.js": MOCHA_TEST.replace("./slug.cjs", "../slug.cjs"),
                "src/order.ts": TS_SRC,
                "lint/eslint.config.js": ESLINT_CONFIG,
                "lint/app.js": ESLINT_SRC,
            },
        )
        if (bins / "vitest").exists():
            add(
                "vitest",
                "vitest",
                "report",
                "npx vitest run",
                _run([str(bins / "vitest"), "run", "vitest"], js),
            )
        if (bins / "jest").exists():
            add(
                "jest",
                "jest",
                "report",
                "npx jest",
                _run([str(bins / "jest"), "--ci", "--rootDir", "jest"], js),
            )
        if (bins / "mocha").exists():
            add(
                "mocha",
                "mocha",
                "report",
                "npx mocha",
                _run([str(bins / "mocha"), "mocha/slug.test.js"], js),
            )
        if (bins / "tsc").exists():
            add(
                "tsc",
                "tsc",
                "diagnostics",
                "npx tsc --noEmit",
                _run([str(bins / "tsc"), "--noEmit", "--strict", "src/order.ts"], js),
            )
            add(
                "tsc-pretty",
                "tsc",
                "diagnostics",
                "npx tsc --noEmit --pretty",
                _run([str(bins / "tsc"), "--noEmit", "--pretty", "--strict", "src/order.ts"], js),
            )
        if (bins / "eslint").exists():
            add(
                "eslint",
                "eslint",
                "diagnostics",
                "npx eslint .",
                _run([str(bins / "eslint"), "."], js / "lint"),
            )
    if have("cmake") and have("ctest") and have("gcc"):
        ct = work / "ct"
        _write(ct, {"CMakeLists.txt": CMAKE, "check.c": CHECK_C})
        _run(["cmake", "-S", ".", "-B", "build"], ct)
        _run(["cmake", "--build", "build"], ct)
        add(
            "ctest",
            "ctest",
            "report",
            "ctest --test-dir build",
            _run(["ctest", "--test-dir", "build"], ct),
        )
    if have("gcc"):
        gc = work / "gcc"
        _write(gc, {"main.c": GCC_SRC})
        add(
            "gcc",
            "gcc",
            "diagnostics",
            "gcc -Wall -Wextra -c main.c",
            _run(
                ["gcc", "-Wall", "-Wextra", "-c", "main.c", "-o", os.devnull], gc, {"LC_ALL": "C"}
            ),
        )
    if have("javac"):
        jv = work / "java"
        _write(jv, {"Ledger.java": JAVA_SRC})
        add(
            "javac",
            "javac",
            "diagnostics",
            "javac Ledger.java",
            _run(["javac", "-d", str(work / "classes"), "Ledger.java"], jv),
        )
    if have("mvn"):  # offline: only when ~/.m2 already holds junit and surefire
        mv = work / "mvn"
        _write(
            mv,
            {
                "pom.xml": POM,
                "src/main/java/shop/Ledger.java": JAVA_LEDGER,
                "src/test/java/shop/LedgerTest.java": JAVA_TEST,
            },
        )
        text = _run(["mvn", "-B", "-o", "test"], mv)
        if "Tests run:" in text:
            add("mvn-test", "mvn", "report", "mvn -B test", text)
    return samples


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ctx-runners-") as tmp:
        samples = capture(Path(tmp))
    FIXTURE.write_text(json.dumps(samples, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for s in samples:
        print(f"{s['name']:12} {len(s['output']):7} chars {len(s['facts']):3} facts")


if __name__ == "__main__":
    main()
