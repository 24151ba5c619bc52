"""Linear-time regexes for user filters: RE2 (``google-re2``) behind a small typed surface.

A user's filter regex runs on every line of untrusted tool output, so it is
compiled with RE2, whose matching time is linear in the input whatever the
pattern: ``x*x*x*y`` or ``x{0,1000}x{0,1000}y`` cannot hang the worker.  What
RE2 cannot compile (backreferences, lookarounds, ``\\Z``, programs over its
memory budget such as ``(x{1,1000}){1,1000}``) is a load-time error.

Built-in filters keep Python's ``re`` (their outputs must not change: ``\\d``,
``\\w`` and ``\\b`` are Unicode-aware there and ASCII-only in RE2).

:class:`Regex` and :class:`RegexMatch` are the part of the ``re`` API the
engine uses (``match``/``search``/``finditer`` with ``pos``, ``lastgroup``,
``group``, ``start``, ``groups``); ``re.Pattern[str]`` and RE2's objects both
satisfy them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import re2  # type: ignore[import-untyped]

__all__ = ["LINEAR_MAX_MEM", "MAX_PROGRAM", "LinearError", "Regex", "RegexMatch", "compile_linear"]

LINEAR_MAX_MEM = 8 << 20  # RE2's per-regex memory budget (its default): bigger programs fail
MAX_PROGRAM = 5000  # RE2 instructions per user pattern (matching costs up to this per character)


class LinearError(ValueError):
    """RE2 cannot compile the pattern (the message says why)."""


class RegexMatch(Protocol):
    @property
    def lastgroup(self) -> str | None: ...

    def group(self, index: int, /) -> Any: ...

    def start(self, index: int = 0, /) -> int: ...


class Regex(Protocol):
    @property
    def groups(self) -> int: ...

    def match(self, text: str, pos: int = 0, /) -> RegexMatch | None: ...

    def search(self, text: str, pos: int = 0, /) -> RegexMatch | None: ...

    def finditer(self, text: str, pos: int = 0, /) -> Iterator[RegexMatch]: ...


def compile_linear(
    pattern: str, *, multiline: bool = False, max_program: int | None = MAX_PROGRAM
) -> Regex:
    """``pattern`` compiled by RE2 (``multiline``: ``^``/``$`` at line ends, like ``re.M``).

    Raises :class:`LinearError` with RE2's reason when it cannot compile it, or
    when its program is larger than ``max_program`` (None: no limit, for unions
    of patterns that each passed it).
    """
    options = re2.Options()
    options.max_mem = LINEAR_MAX_MEM
    options.log_errors = False
    source = f"(?m){pattern}" if multiline else pattern
    try:
        compiled = re2.compile(source, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else b""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        reason = str(detail) or "cannot be compiled"
        raise LinearError(f"not supported by the linear-time regex engine (RE2): {reason}") from exc
    size = int(compiled.programsize)
    if max_program is not None and size > max_program:
        raise LinearError(
            f"too large for linear-time matching (RE2 program size {size} > {max_program}: "
            "large counted repeats such as x{0,1000} make every input character cost that much)"
        )
    result: Regex = compiled
    return result
