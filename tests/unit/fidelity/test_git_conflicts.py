"""git's conflict lines are facts: ``CONFLICT (content): Merge conflict in FILE`` names the file
to fix, ``Could not apply 3d375cd... msg`` the commit a rebase stopped at, ``Automatic merge
failed;`` the merge's outcome (held-out set 7: aggressive folded them).  The output is real git's,
on a repository made by the test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
        "HOME": str(cwd),
        "LC_ALL": "C",
        "PATH": "/usr/bin:/bin",
    }
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    return proc.stdout + proc.stderr


def _conflict(tmp_path: Path) -> str:
    if shutil.which("git") is None:
        pytest.skip("no git")
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "invoice.py").write_text("def tax(x):\n    return round(x * 0.2, 2)\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "init")
    _git(tmp_path, "checkout", "-qb", "feature")
    (tmp_path / "invoice.py").write_text("def tax(x):\n    return round(x * 0.21, 2)\n")
    _git(tmp_path, "commit", "-qam", "invoice: round tax half-up")
    _git(tmp_path, "checkout", "-q", "main")
    (tmp_path / "invoice.py").write_text("def tax(x):\n    return round(x * 0.19, 2)\n")
    _git(tmp_path, "commit", "-qam", "invoice: lower rate")
    return _git(tmp_path, "merge", "feature")


def test_conflict_lines_are_facts_and_stay(tmp_path: Path) -> None:
    text = _conflict(tmp_path)
    facts = {line for _, line in critical_lines(text, "tool_result", "git merge feature")}
    assert "CONFLICT (content): Merge conflict in invoice.py" in facts
    assert any(line.startswith("Automatic merge failed;") for line in facts)
    for mode in ("standard", "aggressive"):
        out, _ = compress_soundly(tool_output(text, "git merge feature"), mode)
        assert "CONFLICT (content): Merge conflict in invoice.py" in out
