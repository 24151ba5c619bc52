"""Fast paths of the log-line masker decide exactly like the plain rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.engines import _logs

# pieces of log lines: value shapes, separators, keys, partial stamps
PIECES = st.sampled_from(
    [
        "2026-12-01", " ", "09:29:24", ",718", ".123", "Z", "+02:00", " UTC", "INFO", "ERROR",
        "WARNING", "batch", "3", "900", "of", ":", "=", "key=", "status=", "503", "pid=",
        "latency_ms=", "12ms", "1.5s", "2m3s", "10KiB", "4k", "0x7f3a", "deadbeef1", "abc",
        "/", "/var/log/app.log", "./a/b", "~/x", "src/app.py:12:5", "a.py:3", "http://h/p?q=1",
        "https://x.example.com/v2", "10.0.0.1", "10.0.0.1:8080", "[", "]", "(", ")", "{", "}",
        "\"", "'", "`", "<", ">", ",", ";", "|", "\t", "-", "-1", "1e5", "1/3", "µs", "é", "_",
        "@", "#", "*", "!", "?", ".", "Dec", "Jan  2", "01/Dec/2026:09:29:24 +0000",
        "123e4567-e89b-12d3-a456-426614174000", "I0302 10:00:01.123456", "GET", "HTTP/1.1",
        "x9", "9x", "\u2028", "\x1c", "\xa0",
    ]
)  # fmt: skip
LINES = st.one_of(st.lists(PIECES, max_size=24).map("".join), st.text(max_size=60))
TOKENS = st.one_of(
    st.lists(PIECES, min_size=1, max_size=4).map("".join),
    st.text(alphabet="0123456789abcdefxABCDEF.:/-_=?&%@+~msKiBh", min_size=1, max_size=20),
)


@settings(max_examples=4000, deadline=None)
@given(TOKENS)
def test_one_pass_classifier_is_the_ordered_kinds(token: str) -> None:
    _logs._classify_memo.cache_clear()
    assert _logs._classify(token) == _logs._classify_plain(token)
    assert _logs._classify(token) == _logs._classify_plain(token)  # from the memo
    assert _logs._classify_one(token * 9) == _logs._classify_plain(token * 9)  # not kept


@pytest.mark.slow  # 6-16 s: thousands of drawn lines
@settings(max_examples=4000, deadline=None)
@given(LINES, st.integers(min_value=0, max_value=80))
def test_token_spans_are_the_token_regex(line: str, begin: int) -> None:
    begin = min(begin, len(line))
    expected = [m.span() for m in _logs._TOKEN.finditer(line, begin, len(line))]
    assert _logs._token_spans(line, begin, len(line)) == expected


def _plain_fields(line: str, begin: int, end_at: int) -> list[tuple[str, int, int]]:
    """``_fields`` as it was before the fast paths: ``_TOKEN`` and the kinds one by one."""
    found: list[tuple[str, int, int]] = []
    stamps = [m.span() for m in _logs._TS.finditer(line, begin, end_at)]
    stamps = [(a, b) for a, b in stamps if a == 0 or not line[a - 1].isalnum()]
    si = 0
    for match in _logs._TOKEN.finditer(line, begin, end_at):
        start, end = match.span()
        while si < len(stamps) and stamps[si][1] <= start:
            found.append(("ts", *stamps[si]))
            si += 1
        if si < len(stamps) and stamps[si][0] < end:
            continue
        token = match.group(0)
        if "=" in token and token[0] != "/" and "://" not in token.split("=", 1)[0]:
            cut = token.index("=") + 1
            start, token = start + cut, token[cut:]
            if _logs._CANDIDATE.search(token) is None:
                continue
        lead = len(token) - len(token.lstrip(_logs._EDGE))
        token = token.strip(_logs._EDGE)
        if not token:
            continue
        start += lead
        found.append((_logs._classify_plain(token), start, start + len(token)))
    found.extend(("ts", a, b) for a, b in stamps[si:])
    return found


@settings(max_examples=3000, deadline=None)
@given(LINES)
def test_mask_is_the_plain_masker(line: str) -> None:
    fast = _logs.mask(line)  # through the per-line memo when the line is short
    assert _logs.mask(line) == fast == _logs._mask(line)
    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(_logs, "_fields", _plain_fields)
        plain = _logs._mask(line)  # not the memo: computed by the plain rules
    finally:
        patch.undo()
    assert fast == plain
    assert all(isinstance(f, _logs.Field) for f in fast.fields)


STAMP_PIECES = st.sampled_from(
    [
        "2026-12-01", "2026/12/01", "12-01", "2026", "T", " ", "09:29:24", "09:29", ":24",
        ",718", ".123456789", "Z", "+02:00", "-0700", " UTC", "UTC", "01/Dec/2026:", "01/Dex/2026",
        "Dec", "Dec ", "Dec  1 ", "Jan 12 ", "Oct", "x", "a1", "_", ":", "/", "-", "9", "09",
        "0", "1", "é", "\u0663", "\n", "J", "Ju", "Jun", "Dec 03, 2026 4:52:26 PM", ", ", " PM",
        "AM", "Dec 3, 2026, 11:02:03", "03, 2026 ",
    ]
)  # fmt: skip


@settings(max_examples=5000, deadline=None)
@given(
    st.one_of(st.lists(STAMP_PIECES, max_size=16).map("".join), LINES),
    st.integers(min_value=0, max_value=40),
)
@pytest.mark.slow  # 6-16 s: thousands of drawn lines
def test_stamp_scan_is_the_stamp_regex(line: str, begin: int) -> None:
    begin = min(begin, len(line))
    expected = [m.span() for m in _logs._TS.finditer(line, begin, len(line))]
    assert [m.span() for m in _logs._TS_SCAN.finditer(line, begin, len(line))] == expected
