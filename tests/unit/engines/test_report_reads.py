"""Reads of files that hold what a tool wrote (held-out set 8: ``cat target/surefire-reports/X.txt``,
3,231 tokens, and ``cat /tmp/haproxy.log``, 5,566 tokens, both saved 0 % in standard).

A read of a file that is no source code and holds a test report, diagnostics or a crash is
filtered as the output it is; a read of source code stays whole.  A request log in HAProxy's
layout (the client's ``ip:port``, then ``[06/Dec/2026:21:12:11.685]``) is a log: its lines
fold, the client's ephemeral port is a measure, the status comes from the line and every 5xx
request stays visible."""

from __future__ import annotations

import json

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines._logs import is_log_line, is_marked_log_line, mask, reads_a_log
from workers.fidelity.facts import critical_lines
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, openai_record

_FRAMEWORK = [
    "org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)",
    "org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:182)",
    "org.junit.jupiter.engine.execution.MethodInvocation.proceed(MethodInvocation.java:60)",
    "org.junit.platform.launcher.core.DefaultLauncher.execute(DefaultLauncher.java:132)",
    "org.apache.maven.surefire.booter.ForkedBooter.main(ForkedBooter.java:495)",
]


def _surefire_report() -> str:
    """A Maven Surefire ``.txt`` report of one failing and one erroring test."""
    lines = [
        "-" * 79,
        "Test set: com.acme.inv.WarehouseTest",
        "-" * 79,
        "Tests run: 5, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.243 s <<< FAILURE! "
        "-- in com.acme.inv.WarehouseTest",
        "com.acme.inv.WarehouseTest.lowStockInclusive -- Time elapsed: 0.015 s <<< FAILURE!",
        "org.opentest4j.AssertionFailedError: expected: <[A-1, B-2]> but was: <[B-2]>",
        *(f"\tat {frame}" for frame in _FRAMEWORK[:2]),
        "\tat com.acme.inv.WarehouseTest.lowStockInclusive(WarehouseTest.kt:15)",
        *(f"\tat {frame}" for frame in _FRAMEWORK[2:] * 14),
        "",
        "com.acme.inv.WarehouseTest.parsesLine -- Time elapsed: 0.001 s <<< ERROR!",
        "java.lang.IndexOutOfBoundsException: Index 2 out of bounds for length 2",
        "\tat com.acme.inv.Warehouse.parseLine(Stock.kt:21)",
        "\tat com.acme.inv.WarehouseTest.parsesLine(WarehouseTest.kt:17)",
        *(f"\tat {frame}" for frame in _FRAMEWORK[2:] * 14),
        "",
    ]  # fmt: skip
    return "\n".join(lines)


def _run(mode: str, command: str, content: str, question: str) -> tuple[str, dict]:
    data = openai_record("r-1", ("user", question), ("tool", content), command=command)
    outcome = Pipeline(Settings(mode=mode)).run_raw(json.loads(json.dumps(data)))
    back = expanded_record(outcome)["messages"][-1]["content"]
    assert back.rstrip("\n") == content.rstrip("\n")
    return outcome.record["messages"][-1]["content"], outcome.stats


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_a_read_test_report_is_filtered_as_a_test_report(mode: str) -> None:
    report = _surefire_report()
    visible, _ = _run(
        mode,
        "cat target/surefire-reports/com.acme.inv.WarehouseTest.txt",
        report,
        "Why does lowStockInclusive fail?",
    )
    for fact in (
        "Tests run: 5, Failures: 1, Errors: 1, Skipped: 0",
        "com.acme.inv.WarehouseTest.lowStockInclusive -- Time elapsed: 0.015 s <<< FAILURE!",
        "org.opentest4j.AssertionFailedError: expected: <[A-1, B-2]> but was: <[B-2]>",
        "at com.acme.inv.WarehouseTest.lowStockInclusive(WarehouseTest.kt:15)",
        "java.lang.IndexOutOfBoundsException: Index 2 out of bounds for length 2",
        "at com.acme.inv.Warehouse.parseLine(Stock.kt:21)",
    ):
        assert fact in visible, (mode, fact)
    counter = TokenCounter()
    assert counter.count(visible) < counter.count(report) * 0.4


@pytest.mark.parametrize(
    "command",
    ["cat target/surefire-reports/*.txt", "tail -n 400 build/reports/*.txt", "cat a.txt b.log"],
)
def test_a_read_of_reports_by_pattern_or_several_files_is_filtered_too(command: str) -> None:
    """Set 20: ``cat shop-core/target/surefire-reports/*.txt`` (210 lines) had stayed whole:
    a read by pattern named no file, so it was not known to read no source code."""
    report = _surefire_report()
    visible, _ = _run("standard", command, report, "Why does lowStockInclusive fail?")
    assert "at com.acme.inv.WarehouseTest.lowStockInclusive(WarehouseTest.kt:15)" in visible
    counter = TokenCounter()
    assert counter.count(visible) < counter.count(report) * 0.4


@pytest.mark.parametrize("command", ["cat src/*.py", "cat src/*.{py,txt}", "cat t/*.py | head"])
def test_a_read_of_source_files_by_pattern_stays_whole(command: str) -> None:
    report = _surefire_report()
    content = '"""Fixture: a report as the test reads it."""\nREPORT = """\n' + report + '"""\n'
    visible, _ = _run("standard", command, content, "What does it hold?")
    assert visible == content


def test_a_read_of_source_code_holding_a_trace_stays_whole() -> None:
    report = _surefire_report()
    content = '"""Fixture: a report as the test reads it."""\nREPORT = """\n' + report + '"""\n'
    visible, _ = _run("standard", "cat tests/fixtures/report.py", content, "What does it hold?")
    assert visible == content


def _haproxy_log() -> tuple[str, list[str]]:
    lines = ["[WARNING]  (1842) : Server be_web/web2 is DOWN, reason: Layer4 connection problem."]
    errors = []
    for k in range(120):
        port = 45240 + 7 * k
        stamp = f"06/Dec/2026:21:12:{11 + k // 60:02d}.{(k * 15) % 1000:03d}"
        if k % 23 == 11:
            line = (
                f"127.0.0.1:{port} [{stamp}] fe_shop be_web/web1 0/0/0/1/1 500 232 - - ---- "
                f'1/1/0/0/0 0/0 "POST /pay/{1000 + k} HTTP/1.1"'
            )
            errors.append(line)
        else:
            line = (
                f"127.0.0.1:{port} [{stamp}] fe_shop be_web/web1 0/0/0/0/0 200 186 - - ---- "
                f'1/1/0/0/0 0/0 "GET /orders/{1000 + k % 40} HTTP/1.1"'
            )
        lines.append(line)
    return "\n".join(lines) + "\n", errors


def test_a_request_log_in_haproxy_layout_is_a_log() -> None:
    text, errors = _haproxy_log()
    line = errors[0]
    assert is_log_line(line) and is_marked_log_line(line)
    assert reads_a_log(text, marked=True)
    masked = mask(line)
    assert masked.status == 500
    kinds = {(f.kind, f.value, f.measure) for f in masked.fields}
    assert ("ip", "127.0.0.1", False) in kinds  # the host identifies ...
    assert any(kind == "port" and measure for kind, _, measure in kinds)  # ... its port does not
    # an address and port is no file and line: these are no compiler findings
    assert not {kind for kind, _ in critical_lines(text, "tool_result", "cat haproxy.log")} & {
        "finding"
    }


@pytest.mark.parametrize(
    ("address", "split"),
    [("10.0.0.7:32767", False), ("10.0.0.7:32768", True), ("10.0.0.7:60999", True),
     ("10.0.0.7:8080", False), ("10.0.0.7:5432", False), ("10.0.0.7", False)],
)  # fmt: skip
def test_only_an_ephemeral_port_is_a_measure(address: str, split: bool) -> None:
    fields = mask(f"2026-12-06T10:00:00Z INFO connect from {address} ok").fields
    assert any(f.kind == "port" for f in fields) is split
    assert [f.value for f in fields if f.kind == "ip"] == [
        address.rsplit(":", 1)[0] if split else address
    ]


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_a_read_request_log_keeps_every_5xx_request(mode: str) -> None:
    text, errors = _haproxy_log()
    visible, _ = _run(mode, "cat /tmp/haproxy.log", text, "Which requests failed?")
    for line in errors:
        assert line in visible, (mode, line)
    counter = TokenCounter()
    assert counter.count(visible) < counter.count(text) * 0.5


def test_a_file_and_line_still_is_a_finding() -> None:
    text = "src/pixel.c:21:44: warning: unused variable 'x' [-Wunused-variable]\n"
    assert {kind for kind, _ in critical_lines(text, "tool_result", "make")} & {
        "finding",
        "error_line",
    }
    data = "model.h5:12: error: bad weights\n"
    assert {kind for kind, _ in critical_lines(data, "tool_result", "train")} & {
        "finding",
        "error_line",
    }


def test_haproxy_5xx_like_their_200s_stay_visible() -> None:
    # the 500s share the 200s' template (same method and path): only the status tells them
    lines, failed = [], []
    for k in range(120):
        code = 500 if k % 24 == 5 else 200
        line = (
            f"127.0.0.1:{40000 + k} [06/Dec/2026:21:12:{k % 60:02d}.{k:03d}] fe_shop "
            f'be_web/web1 0/0/0/0/0 {code} 186 - - ---- 1/1/0/0/0 0/0 "GET /orders/{k} HTTP/1.1"'
        )
        lines.append(line)
        if code == 500:
            failed.append(line)
    text = "\n".join(lines) + "\n"
    assert {kind for kind, line in critical_lines(text, "tool_result", "cat x") if line in failed}
    for mode in ("standard", "aggressive"):
        visible, _ = _run(mode, "cat /tmp/access.log", text, "Which requests failed?")
        for line in failed:
            assert line in visible, (mode, line)


def test_a_client_port_leaves_the_host_in_its_place() -> None:
    one = mask("2026-12-06T10:00:00Z INFO connect from 10.0.0.7:45000 ok")
    other = mask("2026-12-06T10:00:01Z INFO connect from 10.0.0.9:51234 ok")
    assert (
        one.template == other.template == "\x00ts\x00 INFO connect from \x00ip\x00:\x00port\x00 ok"
    )


def test_a_guide_with_a_report_pasted_in_stays_whole() -> None:
    steps = "\n".join(
        f"Step {k}: configure widget {k} by editing settings.toml and restarting the service."
        for k in range(25)
    )
    report = "\n".join(
        ["=" * 29 + " test session starts " + "=" * 30, "collected 40 items", ""]
        + [f"tests/test_mod{k}.py::test_case_{k} PASSED" for k in range(40)]
        + ["", "=" * 32 + " 40 passed in 1.23s " + "=" * 32]
    )
    doc = f"# Troubleshooting\n\n{steps}\n\n```\n{report}\n```\n\n{steps}\n"
    visible, _ = _run("standard", "cat docs/TROUBLESHOOTING.md", doc, "How do I set it up?")
    assert visible == doc
