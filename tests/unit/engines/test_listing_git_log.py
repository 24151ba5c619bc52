"""``git log`` without file stats (a captured run over a generated shop repository: 14
commits by four authors, half of them with a message body): a view of its commits as the
``--stat`` view writes them: every commit id, date and subject line stays, an author line
stays unless it repeats the commit above, and the message bodies go to the stash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.core.tokens import TokenCounter
from workers.engines.listing import compact_listing

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "git-log.txt").read_text(encoding="utf-8")


def _commits() -> list[list[str]]:
    out: list[list[str]] = []
    for line in LOG.splitlines():
        if line.startswith("commit "):
            out.append([])
        out[-1].append(line)
    return out


def test_a_plain_log_is_a_git_log_view() -> None:
    view = compact_listing(LOG, TokenCounter(), "git-log", "git log -n 14")
    assert view is not None and view.kind == "git-log" and view.entries == 14


@pytest.mark.parametrize("command", ["git log -n 14", "./history.sh"])
def test_commit_date_and_subject_lines_stay(command: str) -> None:
    text, saved = compress_soundly(tool_output(LOG, command), "standard")
    shown = text.split("\n")
    previous_author = None
    for commit in _commits():
        assert commit[0] in shown
        assert next(line for line in commit if line.startswith("Date:")) in shown
        author = next(line for line in commit if line.startswith("Author:"))
        if author != previous_author:
            assert author in shown
        previous_author = author
        body = [line for line in commit if line.startswith("    ") and line.strip()]
        assert body[0] in shown  # the subject
    assert saved > 0.1


def _short_stat_log() -> str:
    out: list[str] = []
    for c in range(3):
        out += [f"commit {c:040x}", "Author: Dev <d@example.org>", f"Date:   Dec {c + 1} 2026", ""]
        out += [f"    routing: step {c}", ""]
        out += [f"    body line {k} explains why step {c} was needed here" for k in range(8)]
        out += ["", f" warehouse/routing.py | {c + 2} +{'+' * (c + 1)}"]
        out += [f" 1 file changed, {c + 2} insertions(+)", ""]
    return "\n".join(out)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_a_short_stat_log_keeps_its_stat_and_summary_lines_as_written(mode: str) -> None:
    text = _short_stat_log()
    after, _saved = compress_soundly(tool_output(text, "git log --stat -n 3"), mode)
    shown = after.split("\n")
    for c in range(3):
        assert f"commit {c:040x}" in shown
        assert f" 1 file changed, {c + 2} insertions(+)" in shown
        assert any(line.startswith(" warehouse/routing.py") for line in shown)
    assert "body line 5 explains why step 1 was needed here" not in after
