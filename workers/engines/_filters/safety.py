"""Regex safety: a user's filter regex must not be able to hang the worker.

:func:`check_pattern` refuses backreferences, lookarounds, nested or
alternated unbounded quantifiers, over-long patterns and too many unbounded
repeats (a walk over the parsed pattern); :func:`probe_patterns` times
patterns on hostile lines in a child interpreter with a deadline, because a
catastrophic regex cannot be interrupted inside this process.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from workers.engines._filters.model import LINE_CAP, FilterError

__all__ = ["MAX_PATTERN", "MAX_UNBOUNDED", "SLOW", "check_pattern", "probe_patterns"]

MAX_PATTERN = 512
MAX_UNBOUNDED = 12
PROBE_BUDGET_S = 0.05
SLOW = "too slow on hostile input (catastrophic backtracking)"

_sre_parser: Any = importlib.import_module("re._parser")
_sre_constants: Any = importlib.import_module("re._constants")
_MAXREPEAT: int = _sre_constants.MAXREPEAT


def _walk(items: Any, in_unbounded: bool, in_repeat: bool, counter: list[int]) -> str | None:
    """Return a reason why the parsed pattern is unsafe, or None."""
    c = _sre_constants
    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            _lo, hi, sub = av
            unbounded = hi == _MAXREPEAT or hi > 1000
            if unbounded:
                counter[0] += 1
            if hi > 1 and in_repeat and (unbounded or in_unbounded):
                return "nested quantifiers (a repeated group containing a repeat)"
            reason = _walk(sub, in_unbounded or unbounded, in_repeat or hi > 1, counter)
            if reason:
                return reason
        elif op == c.BRANCH:
            if in_unbounded:
                return "alternation inside an unbounded repeat (use a character class)"
            for branch in av[1]:
                reason = _walk(branch, in_unbounded, in_repeat, counter)
                if reason:
                    return reason
        elif op == c.SUBPATTERN:
            reason = _walk(av[-1], in_unbounded, in_repeat, counter)
            if reason:
                return reason
        elif op == c.ATOMIC_GROUP:
            reason = _walk(av, in_unbounded, in_repeat, counter)
            if reason:
                return reason
        elif op in (c.ASSERT, c.ASSERT_NOT):
            return "lookaround assertions are not allowed"
        elif op in (c.GROUPREF, c.GROUPREF_EXISTS, c.GROUPREF_IGNORE):
            return "backreferences are not allowed"
    return None


_PROBE_SCRIPT = r"""
import json, re, sys, time
cap, budget = int(sys.argv[1]), float(sys.argv[2])
probes = ["a" * cap, " " * cap, "0" * cap, "a:" * (cap // 2), "a " * (cap // 2), "-" * cap,
          "\u00e9" * cap, "/a" * (cap // 2), "a\n" * (cap // 2), "<a>" * (cap // 3)]
for i, (pattern, anchored) in enumerate(json.load(sys.stdin)):
    print(i, flush=True)
    rx = re.compile(pattern, re.M)
    apply = rx.match if anchored else rx.search
    started = time.perf_counter()
    for sample in probes:
        apply(sample)
    if time.perf_counter() - started > budget:
        print("slow", i, flush=True)
        sys.exit(0)
print("ok", flush=True)
"""


def probe_patterns(items: Sequence[tuple[str, bool]]) -> int | None:
    """Index of the first (pattern, anchored) that is slow on hostile lines, else None.

    The probe runs in a child interpreter with a deadline, because a
    catastrophic regex cannot be interrupted inside this process.
    """
    if not items:
        return None
    timeout = 2.0 + 4 * PROBE_BUDGET_S * len(items)
    command = [sys.executable, "-I", "-S", "-c", _PROBE_SCRIPT, str(LINE_CAP), str(PROBE_BUDGET_S)]
    try:
        proc = subprocess.run(
            command,
            input=json.dumps(list(items)),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout or ""
        if isinstance(partial, bytes):
            partial = partial.decode("utf-8", "replace")
        started = [int(x) for x in partial.split() if x.isdigit()]
        return started[-1] if started else 0
    for line in proc.stdout.splitlines():
        if line.startswith("slow "):
            return int(line.split()[1])
    if "ok" not in proc.stdout.split():
        raise FilterError(f"regex probe failed: {proc.stderr.strip()[-500:]}")
    return None


def check_pattern(
    pattern: str, *, named_groups: bool = False, probe: bool = True, anchored: bool = False
) -> str | None:
    """Why ``pattern`` may not be used in a filter (None when it is fine).

    ``anchored`` patterns are applied with ``re.match`` (commands, tool
    names), the others with ``re.search``; the timing probe does the same.
    """
    if not isinstance(pattern, str) or not pattern:
        return "pattern must be a non-empty string"
    if len(pattern) > MAX_PATTERN:
        return f"pattern longer than {MAX_PATTERN} characters"
    try:
        parsed = _sre_parser.parse(pattern)
    except re.error as exc:
        return f"invalid regex: {exc}"
    if not named_groups and parsed.state.groupdict:
        return "named groups are not allowed here"
    counter = [0]
    reason = _walk(parsed, False, False, counter)
    if reason:
        return reason
    if counter[0] > MAX_UNBOUNDED:
        return f"more than {MAX_UNBOUNDED} unbounded repeats"
    if probe and probe_patterns([(pattern, anchored)]) is not None:
        return SLOW
    return None
