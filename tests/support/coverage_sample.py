"""A real ``npx jest --coverage`` report (istanbul's text table under the test results).

``python -m tests.support.coverage_sample`` writes a small JavaScript project (a cart module
whose tests fail three ways, and 30 small modules with one passing test each, so that the
coverage table has a row per file), installs jest 29.7.0 from the npm registry, runs
``npx jest --ci --coverage`` and writes what it printed (``2>&1``) to
``tests/data/coverage/jest-coverage.txt`` (the temporary folder's path replaced by
``/home/dev/shop``).  The tests read the file only.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "coverage" / "jest-coverage.txt"

CART = """\
function total(items) { return items.reduce((s, i) => s + i.price * i.qty, 0); }
function discount(t, code) { if (code === 'HALF') return t / 2; if (code === 'BAD') throw new TypeError('unknown code ' + code); return t; }
function parse(s) { return JSON.parse(s).items; }
module.exports = { total, discount, parse };
"""

CART_TEST = """\
const { total, discount, parse } = require('../src/cart');
describe('cart', () => {
  for (let i = 0; i < 8; i++) {
    test('total case ' + i, () => { expect(total([{ price: i, qty: 2 }])).toBe(i * 2); });
  }
  test('discount bad', () => { expect(discount(10, 'BAD')).toBe(10); });
  test('totals object', () => { expect({ sum: total([{ price: 3, qty: 3 }]), n: 1 }).toEqual({ sum: 10, n: 1 }); });
  test('parse broken', () => { expect(parse('{"items": [1,2,')).toEqual([1, 2]); });
});
"""


def _project(root: Path) -> None:
    (root / "src").mkdir()
    (root / "test").mkdir()
    (root / "package.json").write_text('{"name": "shop", "version": "1.0.0", "private": true}\n')
    (root / "src" / "cart.js").write_text(CART)
    (root / "test" / "cart.test.js").write_text(CART_TEST)
    for i in range(1, 31):
        (root / "src" / f"mod{i}.js").write_text(
            f"function f{i}(x) {{ if (x > {i}) {{ return x * 2; }} return x; }}\n"
            f"function g{i}(x) {{ return x - {i}; }}\n"
            f"module.exports = {{ f{i}, g{i} }};\n"
        )
        (root / "test" / f"mod{i}.test.js").write_text(
            f"const m = require('../src/mod{i}');\n"
            f"test('f{i}', () => {{ expect(m.f{i}({i + 1})).toBe({2 * (i + 1)}); }});\n"
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _project(root)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "jest@29.7.0"],
            cwd=root,
            check=True,
            capture_output=True,
            timeout=600,
        )
        run = subprocess.run(
            ["npx", "jest", "--ci", "--coverage"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # as a terminal shows them: 2>&1
            text=True,
            timeout=600,
        )
        text = run.stdout.replace(str(root), "/home/dev/shop")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
