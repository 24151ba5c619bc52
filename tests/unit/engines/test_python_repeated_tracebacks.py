"""A service log's Python tracebacks: the frames of one that a traceback above had go.

Held-out set 29: ``grep -v "msg=request" logs/relayd.log`` (1,351 lines) was a log of
``msg="unhandled error" req_id=... path=/orders/N`` lines, each followed by the same one of
two tracebacks; standard kept every traceback whole (27,172 -> 11,617 tokens).  A JVM or
JavaScript stack of ``at`` frames as one above already went (``repeated stack frames``);
a Python traceback's ``File`` lines with their code and caret lines now do too.  Each
request's log line stays; a traceback with other frames stays.
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output

COMMAND = 'grep -v "msg=request" logs/relayd.log'

VALUE_ERROR = [
    "Traceback (most recent call last):",
    '  File "/srv/relayd/server.py", line 46, in do_GET',
    "    code, body = reserve(sku, qty, req_id)",
    "                 ^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/srv/relayd/server.py", line 16, in reserve',
    "    n = int(qty)",
    "        ^^^^^^^^",
    "ValueError: invalid literal for int() with base 10: 'abc'",
]
KEY_ERROR = [
    "Traceback (most recent call last):",
    '  File "/srv/relayd/server.py", line 46, in do_GET',
    "    code, body = reserve(sku, qty, req_id)",
    "                 ^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/srv/relayd/stock.py", line 9, in lookup',
    "    return STOCK[sku]",
    "           ~~~~~^^^^^",
    "KeyError: 'SKU-0042'",
]


def _log(count: int) -> str:
    lines = ['ts=2026-12-07T20:23:30.265Z level=info logger=relayd msg="relayd listening"']
    for k in range(count):
        lines.append(
            f"ts=2026-12-07T20:23:{31 + k // 10:02d}.{k % 10}00Z level=error logger=relayd "
            f'msg="unhandled error" req_id={k:012x} path=/orders/{12000 + k}'
        )
        lines += KEY_ERROR if k % 4 == 3 else VALUE_ERROR
    return "\n".join(lines) + "\n"


def test_a_traceback_seen_above_keeps_only_its_log_line() -> None:
    text = _log(24)
    out, saved = compress_soundly(tool_output(text, COMMAND), "standard")
    shown = out.splitlines()
    assert shown.count('  File "/srv/relayd/server.py", line 16, in reserve') == 1
    assert shown.count('  File "/srv/relayd/stock.py", line 9, in lookup') == 1
    assert "ValueError: invalid literal for int() with base 10: 'abc'" in shown
    assert "KeyError: 'SKU-0042'" in shown
    for k in range(24):  # each request's log line stays (its path is what failed)
        assert f"path=/orders/{12000 + k}" in out
    assert "repeated stack frames" in out
    assert saved > 0.4  # 31 % when every traceback stayed whole


def test_a_traceback_with_other_frames_stays() -> None:
    text = _log(3)  # three ValueErrors, no KeyError yet
    other = [
        "Traceback (most recent call last):",
        '  File "/srv/relayd/server.py", line 46, in do_GET',
        "    code, body = reserve(sku, qty, req_id)",
        '  File "/srv/relayd/server.py", line 21, in reserve',
        "    raise Timeout(upstream)",
        "relayd.errors.Timeout: upstream 127.0.0.1:36551 did not answer in 0.8 s",
    ]
    text += (
        'ts=2026-12-07T20:23:40.000Z level=error logger=relayd msg="unhandled error" '
        "req_id=00000000ffff path=/orders/99\n" + "\n".join(other) + "\n"
    )
    out, _ = compress_soundly(tool_output(text, COMMAND), "standard")
    assert '  File "/srv/relayd/server.py", line 21, in reserve' in out
    assert "relayd.errors.Timeout: upstream 127.0.0.1:36551 did not answer in 0.8 s" in out
