"""Timestamps for the logs the tests write: a millisecond offset into 2026-12-02 10:00."""

from __future__ import annotations


def log_time(ms: int, iso: bool = False) -> str:
    """``2026-12-02 10:01:02,345`` (Python logging), or ``2026-12-02T10:01:02.345Z`` (ISO)."""
    minutes, seconds, millis = (ms // 60000) % 60, (ms // 1000) % 60, ms % 1000
    if iso:
        return f"2026-12-02T10:{minutes:02d}:{seconds:02d}.{millis:03d}Z"
    return f"2026-12-02 10:{minutes:02d}:{seconds:02d},{millis:03d}"
