"""A host's syslog (``tail -n 60 /var/log/syslog`` of a program that writes the rsyslog
traditional format from sshd, CRON, systemd, postgres and the kernel, seeded): the kernel's
OOM kill carries no error word, yet it is the line that explains the night; it stays in sight
in every lossy mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines, is_error_line

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
SYSLOG = (DATA / "syslog-oom.txt").read_text(encoding="utf-8")
OOM = next(line for line in SYSLOG.splitlines() if "Out of memory" in line)


def test_kernel_oom_kill_is_an_error_line() -> None:
    assert is_error_line(OOM)
    assert is_error_line("kernel: postgres invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER)")
    assert is_error_line("kernel: worker[812]: segfault at 0 ip 000055d0 sp 00007ffd error 4")
    assert ("error_line", OOM.strip()) in critical_lines(SYSLOG, "tool_result")


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_oom_kill_stays_visible(mode: str) -> None:
    text, saved = compress_soundly(tool_output(SYSLOG, "tail -n 60 /var/log/syslog"), mode)
    assert OOM in text
    assert saved > 0


def test_grep_of_one_log_reads_its_lines_as_a_log() -> None:
    # grep over one file prints no file name: its lines are the log's own, and their errors
    # are facts (a syslog line's ``Dec  3 02:13:12 host ...`` before its first colon is no
    # file name); a match under a file name still counts by its file
    command = "grep -v CRON /var/log/syslog"
    facts = critical_lines(SYSLOG, "tool_result", command)
    assert ("error_line", OOM.strip()) in facts
    assert not any(kind == "grep_file" for kind, _ in facts)
    text, _ = compress_soundly(tool_output(SYSLOG, command), "aggressive")
    assert OOM in text
    matches = "src/a.py:3:x = 1\nsrc/b.py:9:raise ValueError('x')\n"
    assert critical_lines(matches, "tool_result", "grep -rn x src") == {
        ("grep_file", "src/a.py"),
        ("grep_file", "src/b.py"),
    }
