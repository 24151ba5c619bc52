"""Which log lines of ``go test -v`` belong to a test that passed."""

from __future__ import annotations

from workers.fidelity.testlogs import passing_test_logs


def _passing(text: str) -> list[str]:
    lines = text.split("\n")
    return [lines[i] for i in sorted(passing_test_logs(lines))]


def test_a_passing_tests_lines_are_found_a_failing_tests_are_not() -> None:
    text = "\n".join(
        [
            "=== RUN   TestA",
            "    a_test.go:3: fine",
            "--- PASS: TestA (0.00s)",
            "=== RUN   TestB",
            "    b_test.go:9: got 1, want 2",
            "        second line of the message",
            "--- FAIL: TestB (0.00s)",
        ]
    )
    assert _passing(text) == ["    a_test.go:3: fine"]


def test_subtests_are_decided_by_their_own_result_after_the_parents() -> None:
    text = "\n".join(
        [
            "=== RUN   TestT",
            "=== RUN   TestT/case_0",
            "    t_test.go:5: checking 0",
            "=== RUN   TestT/case_1",
            "    t_test.go:5: checking 1",
            "    t_test.go:6: got 3, want 4",
            "--- FAIL: TestT (0.00s)",
            "    --- PASS: TestT/case_0 (0.00s)",
            "    --- FAIL: TestT/case_1 (0.00s)",
        ]
    )
    assert _passing(text) == ["    t_test.go:5: checking 0"]


def test_parallel_tests_switch_owner_with_cont_and_name() -> None:
    text = "\n".join(
        [
            "=== RUN   TestP",
            "=== PAUSE TestP",
            "=== RUN   TestQ",
            "=== PAUSE TestQ",
            "=== CONT  TestP",
            "    p_test.go:2: p runs",
            "=== NAME  TestQ",
            "    q_test.go:2: q breaks",
            "--- PASS: TestP (0.00s)",
            "--- FAIL: TestQ (0.00s)",
        ]
    )
    assert _passing(text) == ["    p_test.go:2: p runs"]


def test_lines_after_a_result_and_without_a_result_stay() -> None:
    # go test without -v prints a failure's messages under its result; a test cut
    # short (a panic, a truncated output) never gets one
    text = "\n".join(
        [
            "--- FAIL: TestOld (0.00s)",
            "    old_test.go:4: broke",
            "=== RUN   TestPanics",
            "    x_test.go:8: about to panic",
            "panic: boom",
        ]
    )
    assert _passing(text) == []


def test_coloured_lines_are_read_without_their_colour() -> None:
    text = "=== RUN   TestA\n    a_test.go:3: fine\n\x1b[32m--- PASS: TestA (0.00s)\x1b[0m"
    assert _passing(text) == ["    a_test.go:3: fine"]
