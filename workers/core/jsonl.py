"""JSONL reading and writing for the CLI and the worker, with exact line layouts.

``decode_line`` turns one input line into a JSON value or a :class:`BadLine`
with a reason a person can act on; it is the one JSON rule of every path (CLI
compress, CLI expand, the worker).  ``detect_layout`` names how the line was
serialised (orjson compact, Python ``json.dumps`` defaults, with or without
``ensure_ascii``) so that ``expand`` can write the record back byte for byte;
any other line keeps its own bytes (:mod:`workers.messages.wire`).
"""

from __future__ import annotations

import json
import math
import re
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
    """The decoded value of one line, or a :class:`BadLine`.

    The one JSON rule of every path (CLI compress and expand, the worker):
    RFC 8259 text in UTF-8, nested at most 1024 levels.  ``NaN``,
    ``Infinity``, lone surrogate escapes (``"\\ud800"`` not part of a pair),
    control characters in strings and invalid UTF-8 are a :class:`BadLine`
    whose reason says so.  Integers beyond 64 bits are exact Python ints;
    numbers no double can hold (``1e400``, integers over 4,300 digits) are
    :class:`orjson.Fragment` objects holding their literal, so any
    serialisation writes them back as written.
    """
    if len(raw) > max_bytes:
        return BadLine(
            line_no,
            f"line {line_no}: record is {len(raw):,} bytes, over the limit of {max_bytes:,}; "
            "split it or raise CTXPRESS_MAX_RECORD_BYTES",
            raw[:1024],
        )
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        message = str(exc)
        if message.startswith(_OUT_OF_RANGE):
            return _out_of_range(raw, line_no)
        return BadLine(
            line_no, f"line {line_no}: not valid JSON ({_explain(raw, exc)})", raw[:1024]
        )
    if _has_big_int(raw):
        # orjson turns integers beyond 64 bits into floats; the stdlib keeps them.
        # orjson has already judged the text, so the stdlib sees only valid JSON.
        return _stdlib_loads(raw, line_no)
    return value


_OUT_OF_RANGE = "number is infinity when parsed as double"


def _explain(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """orjson's message, with what to do for the mistakes people make."""
    message = str(exc)
    lowered = message.lower()
    if "recursion" in lowered or "depth limit" in lowered:
        return "JSON nested deeper than 1024 levels"
    if "utf-8" in lowered:
        # orjson says "str is not valid UTF-8: surrogates not allowed" for any bad byte
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                return (
                    "not valid UTF-8: the line starts with a UTF-16 byte order mark; write "
                    "the file as UTF-8, e.g. iconv -f UTF-16 -t UTF-8"
                )
            return (
                f"not valid UTF-8: byte 0x{raw[bad.start]:02x} at column {bad.start + 1} "
                "(Latin-1 or Windows-1252 text, or a cut character?); write the file as UTF-8, "
                "e.g. iconv -f WINDOWS-1252 -t UTF-8"
            )
    if "surrogate" in lowered and "utf-8" not in lowered:
        return (
            "a \\u escape is a lone UTF-16 surrogate (\\ud800-\\udfff not part of a pair), "
            f"which is no character: {message}"
        )
    if lowered.startswith(("unexpected character", "no digit after sign")):
        window = raw.decode("utf-8", "replace")[max(exc.pos - 1, 0) : exc.pos + 9]
        if "NaN" in window or "Infinity" in window:
            return f"NaN and Infinity are not JSON numbers; write null or a string: {message}"
    return message


def _out_of_range(raw: bytes, line_no: int) -> Any:
    """A text with a number no double can hold: the stdlib, held to the same rule."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadLine(line_no, f"line {line_no}: not valid JSON (not UTF-8: {exc})", raw[:1024])
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        return BadLine(line_no, f"line {line_no}: not valid JSON (nested too deeply)", raw[:1024])
    except _NotJSON as exc:
        return BadLine(line_no, f"line {line_no}: not valid JSON ({exc})", raw[:1024])
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        return BadLine(line_no, f"line {line_no}: not valid JSON ({exc})", raw[:1024])
    try:
        surrogate = _lone_surrogate(value)
    except RecursionError:
        return BadLine(line_no, f"line {line_no}: not valid JSON (nested too deeply)", raw[:1024])
    if surrogate:
        return BadLine(
            line_no,
            f"line {line_no}: not valid JSON (a \\u escape is a lone UTF-16 surrogate "
            "(\\ud800-\\udfff not part of a pair), which is no character)",
            raw[:1024],
        )
    return value


class _NotJSON(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _NotJSON(f"{name} is not a JSON number; write null or a string")


def _float(literal: str) -> Any:
    number = float(literal)
    if number in (math.inf, -math.inf):
        return orjson.Fragment(literal.encode("ascii"))
    return number


def _int(literal: str) -> Any:
    if len(literal) > 4300:  # the interpreter's int-from-string limit
        return orjson.Fragment(literal.encode("ascii"))
    return int(literal)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_surrogate(v) for v in value)
    return False


# 19 digits in a row may be an integer beyond 64 bits.  Mapping every byte to
# "0" (digit) or "x" and searching for 19 zeros is ten times faster than a regex.
_DIGIT_CLASS = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord("x") for b in range(256))
_NINETEEN_DIGITS = b"0" * 19


def _has_big_int(raw: bytes) -> bool:
    return _NINETEEN_DIGITS in raw.translate(_DIGIT_CLASS)


def _stdlib_loads(raw: bytes, line_no: int) -> Any:
    try:
        return json.loads(raw, parse_int=_int)
    except RecursionError:
        return BadLine(line_no, f"line {line_no}: not valid JSON (nested too deeply)", raw[:1024])
    except (ValueError, UnicodeDecodeError) as exc:
        return BadLine(line_no, f"line {line_no}: not valid JSON ({exc})", raw[:1024])


def _python(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")


def _python_utf8(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _compact(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:  # integers beyond 64 bits
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except TypeError:  # and a number kept as its literal (orjson.Fragment)
            return orjson.dumps(_big_ints_as_literals(value))


def _big_ints_as_literals(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return orjson.Fragment(str(value).encode("ascii"))
    if isinstance(value, dict):
        return {k: _big_ints_as_literals(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_big_ints_as_literals(v) for v in value]
    return value


LAYOUTS = {"compact": _compact, "python": _python, "python-utf8": _python_utf8}


def detect_layout(raw: bytes, value: Any) -> str | None:
    """The layout name whose serialisation of ``value`` equals ``raw``, if any."""
    line = raw.rstrip(b"\r\n")
    for name in _likely_order(line, value):
        dump = LAYOUTS[name]
        try:
            if dump(value) == line:
                return name
        except (TypeError, ValueError, OverflowError, orjson.JSONEncodeError):
            continue
    return None


_CONTROL_BYTES = bytes(range(32))


def _likely_order(line: bytes, value: Any = None) -> tuple[str, ...]:
    """Layouts to try, the likely one first (the first that matches names the layout).

    ``json.dumps`` separates with ``": "``; with its default ``ensure_ascii`` the
    line is pure ASCII.  Each try is a full serialisation, so the order matters,
    and layouts that cannot match are left out (the first match stays the
    same): none writes a raw control byte (a tab between tokens); ``python``
    writes only ASCII; ``python-utf8`` differs from ``python`` on an ASCII line
    only by a raw DEL; neither writes a non-empty object without ``": "``.
    """
    if len(line.translate(None, _CONTROL_BYTES)) != len(line):
        return ()
    if b'": ' in line[:4096]:
        order: tuple[str, ...] = (
            ("python", "compact", "python-utf8")
            if line.isascii()
            else ("python-utf8", "compact", "python")
        )
    else:
        order = ("compact", "python", "python-utf8")
    ascii_line = line.isascii()
    spaced = not (isinstance(value, dict) and value) or b'": ' in line
    return tuple(
        name
        for name in order
        if name == "compact"
        or (name == "python" and ascii_line and spaced)
        or (name == "python-utf8" and spaced and (not ascii_line or b"\x7f" in line))
    )


def dump_layout(value: Any, layout: str | None) -> bytes:
    """Serialise ``value`` in ``layout`` (compact when unknown)."""
    return LAYOUTS.get(layout or "compact", _compact)(value)
