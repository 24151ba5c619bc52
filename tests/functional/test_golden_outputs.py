"""Outputs stay byte-identical unless a change means to move them (``tests/support/golden.py``).

Speed work (fast paths, shared classification, incremental counting) must not change what
ctxpress writes: every mode's output and stash for the bundled sample and every captured
program output under ``tests/data`` is compared with the committed digests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import golden


def test_golden_outputs_are_unchanged() -> None:
    want = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
    if want["versions"] != golden.versions():
        pytest.skip(
            "the tokenizer or tree-sitter packages differ from the ones the digests were made "
            f"with ({want['versions']}); rerun `.venv/bin/python -m tests.support.golden --update`"
        )
    got = golden.digests()
    assert set(got) == set(want["outputs"]), "the golden inputs changed: rerun with --update"
    moved = [
        f"{name} {mode}: tokens {old[1]} -> {new[1]} (before {new[0]})"
        for name, modes in sorted(got.items())
        for mode, new in modes.items()
        if (old := want["outputs"][name][mode]) != new
    ]
    assert not moved, (
        "outputs moved (if the change means to move them, run "
        "`.venv/bin/python -m tests.support.golden --update` and commit the file):\n"
        + "\n".join(moved)
    )


def test_the_golden_set_covers_every_mode_and_saves() -> None:
    """The digests are of real work: every input in every mode, and the lossy modes save."""
    outputs = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))["outputs"]
    assert len(outputs) >= 25
    for mode in golden.MODES:
        before = sum(o[mode][0] for o in outputs.values())
        after = sum(o[mode][1] for o in outputs.values())
        # the sample's two bad lines are dead letters on purpose; nothing else is
        dead = sorted(name for name, o in outputs.items() if o[mode][2] == "dead letter")
        assert dead == ["sample:7", "sample:8"], mode
        assert after < before, mode
    standard = [o["standard"] for o in outputs.values()]
    assert sum(o[1] for o in standard) < 0.6 * sum(o[0] for o in standard)


def test_the_update_command_writes_what_the_test_reads(tmp_path: Path) -> None:
    """The README's ``python -m tests.support.golden --update``, into another file."""
    target = tmp_path / "digests.json"
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.golden", "--update", "--file", str(target)],
        cwd=golden.ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = json.loads(target.read_text(encoding="utf-8"))
    assert written["versions"] == golden.versions()
    assert set(written["outputs"]) == {name for name, _ in golden.inputs()}
