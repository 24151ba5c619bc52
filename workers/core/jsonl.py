"""JSONL reading and writing for the batch CLI, with exact line layouts.

``decode_line`` turns one input line into a JSON value or a :class:`BadLine`
with a reason a person can act on.  ``detect_layout`` names how the line was
serialised (orjson compact, Python ``json.dumps`` defaults, with or without
``ensure_ascii``) so that ``expand`` can write the record back byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["LAYOUTS", "BadLine", "decode_line", "detect_layout", "dump_layout"]


@dataclass(frozen=True, slots=True)
class BadLine:
    line_no: int
    reason: str
    raw: bytes


def decode_line(raw: bytes, line_no: int, max_bytes: int) -> Any:
    """The decoded value of one line, or a :class:`BadLine`."""
    if len(raw) > max_bytes:
        return BadLine(
            line_no,
            f"line {line_no}: record is {len(raw):,} bytes, over the limit of {max_bytes:,}; "
            "split it or raise CTXPRESS_MAX_RECORD_BYTES",
            raw[:1024],
        )
    try:
        if _has_big_int(raw):
            # orjson turns integers beyond 64 bits into floats; the stdlib keeps them.
            return _stdlib_loads(raw, line_no)
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        message = str(exc)
        if "recursion" in message.lower() or "depth limit" in message.lower():
            message = "JSON nested deeper than 1024 levels"
        return BadLine(line_no, f"line {line_no}: not valid JSON ({message})", raw[:1024])


# 19 digits in a row may be an integer beyond 64 bits.  Mapping every byte to
# "0" (digit) or "x" and searching for 19 zeros is ten times faster than a regex.
_DIGIT_CLASS = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord("x") for b in range(256))
_NINETEEN_DIGITS = b"0" * 19


def _has_big_int(raw: bytes) -> bool:
    return _NINETEEN_DIGITS in raw.translate(_DIGIT_CLASS)


def _stdlib_loads(raw: bytes, line_no: int) -> Any:
    try:
        return json.loads(raw)
    except RecursionError:
        return BadLine(line_no, f"line {line_no}: not valid JSON (nested too deeply)", raw[:1024])
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return BadLine(line_no, f"line {line_no}: not valid JSON ({exc})", raw[:1024])


def _python(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")


def _python_utf8(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _compact(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:  # integers beyond 64 bits
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


LAYOUTS = {"compact": _compact, "python": _python, "python-utf8": _python_utf8}


def detect_layout(raw: bytes, value: Any) -> str | None:
    """The layout name whose serialisation of ``value`` equals ``raw``, if any."""
    line = raw.rstrip(b"\r\n")
    for name in _likely_order(line):
        dump = LAYOUTS[name]
        try:
            if dump(value) == line:
                return name
        except (TypeError, ValueError, OverflowError, orjson.JSONEncodeError):
            continue
    return None


def _likely_order(line: bytes) -> tuple[str, ...]:
    """Layouts to try, the likely one first (any that matches gives the same bytes back).

    ``json.dumps`` separates with ``": "``; with its default ``ensure_ascii`` the
    line is pure ASCII.  Each try is a full serialisation, so the order matters.
    """
    if b'": ' in line[:4096]:
        if line.isascii():
            return ("python", "compact", "python-utf8")
        return ("python-utf8", "compact", "python")
    return ("compact", "python", "python-utf8")


def dump_layout(value: Any, layout: str | None) -> bytes:
    """Serialise ``value`` in ``layout`` (compact when unknown)."""
    return LAYOUTS.get(layout or "compact", _compact)(value)
