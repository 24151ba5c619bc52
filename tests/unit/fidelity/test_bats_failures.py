"""bats writes TAP without the dash: ``not ok 4 works when paths contain spaces``.

Held-out set 29: aggressive kept the assertion lines of a 28-line ``bats tests/`` run and
dropped five of its eight failing test names (the gate knew ``not ok 4 - name`` only).
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

BATS = """1..6
ok 1 creates an archive containing the logs
not ok 2 keeps exactly KEEP archives
# (in test file tests/backup.bats, line 24)
#   `[ "$(ls "$DEST" | wc -l)" -eq 3 ]' failed
ok 3 missing source dir exits 2
not ok 4 works when paths contain spaces
# (in test file tests/backup.bats, line 38)
#   `[ "$(ls "$BATS_TEST_TMPDIR/my backups" | wc -l)" -eq 1 ]' failed
not ok 5 healthy service answers OK on first try
# (in test file tests/healthcheck.bats, line 12)
#   `[ "$output" = "OK http://127.0.0.1:36552/health" ]' failed
ok 6 prints usage # SKIP not on this host
"""

FAILED = [
    "not ok 2 keeps exactly KEEP archives",
    "not ok 4 works when paths contain spaces",
    "not ok 5 healthy service answers OK on first try",
]


def test_a_bats_failure_is_a_failing_test() -> None:
    failures = {line for kind, line in critical_lines(BATS, "tool_result", "bats tests/")}
    assert set(FAILED) <= failures
    assert "ok 1 creates an archive containing the logs" not in failures


def test_every_failing_name_stays_in_sight() -> None:
    for mode in ("standard", "aggressive"):
        out, _ = compress_soundly(tool_output(BATS, "bats tests/"), mode)
        for name in FAILED:
            assert name in out, (mode, out)


def test_each_failure_keeps_its_place() -> None:
    """Set 29: ``bats --print-output-on-failure`` dropped ``# (in test file
    tests/healthcheck.bats, line 30)`` as a line like the one of the failure above."""
    places = {
        line for kind, line in critical_lines(BATS, "tool_result", "bats") if kind == "location"
    }
    assert places == {
        "# (in test file tests/backup.bats, line 24)",
        "# (in test file tests/backup.bats, line 38)",
        "# (in test file tests/healthcheck.bats, line 12)",
    }
