"""node --test's spec reporter (the default on a terminal, and in recent Node everywhere) ends
with ``ℹ tests 41`` / ``ℹ pass 37`` / ``ℹ fail 4``: test summaries (zeros too:
``ℹ fail 0`` says none failed), as TAP's ``# tests 41`` are; vitest's ``Test Files  5 passed (5)`` and ``Tests  48 passed (48)`` too.  Aggressive
mode's aging stashed the spec reporter's totals of a long run.  The output is a real
``node --test --test-reporter=spec`` run of a test file written here (skipped without
``node``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines, is_user_frame

SLUG_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
function slug(s) { return s.toLowerCase().replace(/\\s+/g, '-'); }
for (let i = 0; i < 40; i++) {
  test(`slug keeps case ${i}`, () => {
    assert.strictEqual(slug(`A B ${i}`), i % 17 === 4 ? `A-B-${i}` : `a-b-${i}`);
  });
}
test('slug trims', () => { assert.strictEqual(slug(' x '), 'x'); });
"""


def test_the_spec_reporters_totals_stay(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine")
    (tmp_path / "slug.test.js").write_text(SLUG_TEST)
    run = subprocess.run(
        [node, "--test", "--test-reporter=spec", "slug.test.js"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    if "unknown" in run.stdout[:300] or "bad option" in run.stdout[:300]:
        pytest.skip("this node has no --test-reporter")
    text = run.stdout
    totals = ["ℹ tests 41", "ℹ pass 37", "ℹ fail 4", "ℹ todo 0"]
    assert "ℹ todo 0" in text
    facts = critical_lines(text, "tool_result", "node --test")
    for line in totals:
        assert ("test_summary", line) in facts
    assert ("test_summary", "ℹ todo 0") in facts  # a zero count too (``ℹ fail 0``: none failed)
    # a frame in one of node's own modules (``node:async_hooks``, not only ``node:internal/``)
    # is a library frame: no fact, and it goes with the other library frames
    builtin = [line for line in text.splitlines() if "(node:async_hooks:" in line]
    assert builtin and not is_user_frame(builtin[0])
    for mode in ("standard", "aggressive"):
        out, _ = compress_soundly(tool_output(text, "node --test"), mode)
        for line in totals:
            assert line in out, (mode, line)
        assert "(node:async_hooks:" not in out


@pytest.mark.parametrize(
    "line",
    [
        " Test Files  5 passed (5)",
        "      Tests  48 passed (48)",
        "Tests  2 failed | 30 passed (32)",
    ],
)
def test_vitest_totals_are_summaries(line: str) -> None:
    assert ("test_summary", line.strip()) in critical_lines(f"x\n{line}\n", "tool_result")
