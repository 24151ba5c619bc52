"""The filter model: what one loaded filter file is, once validated and compiled.

Plain frozen data: a :class:`Filter` holds its match regexes (as source
text, wrapped ``(?:...)``) and its line rules as :class:`Matcher` objects
(compiled by RE2 for a user filter, ``Filter.linear``, by ``re`` otherwise);
:func:`signature_kind` tells how a wrapped pattern is applied to an output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from workers.core.ansi import ANSI
from workers.core.errors import CtxpressError
from workers.engines._filters.linear import Regex, compile_linear

__all__ = [
    "ANSI",
    "LINE_CAP",
    "Block",
    "Filter",
    "FilterError",
    "Group",
    "Matcher",
    "Rule",
    "Sample",
    "signature_kind",
]

LINE_CAP = 4096  # regexes see at most this many characters of a line


class FilterError(CtxpressError, ValueError):
    """A filter file that cannot be loaded (names the file and the problem)."""


@dataclass(frozen=True, slots=True)
class Matcher:
    """A list of line regexes as (at most) two combined regexes.

    Patterns anchored at the line start are tried with one ``match``, the
    others with one ``search``; :meth:`find` returns the index of a matching
    pattern (-1 when none matches).
    """

    anchored: Regex | None
    floating: Regex | None

    @classmethod
    def build(cls, patterns: Sequence[str], linear: bool = False) -> Matcher | None:
        """``linear``: compile with RE2 (user filters), else with ``re`` (built-in ones)."""
        if not patterns:
            return None
        anchored = [(i, p) for i, p in enumerate(patterns) if signature_kind(p) == "line"]
        floating = [(i, p) for i, p in enumerate(patterns) if signature_kind(p) != "line"]

        def union(items: list[tuple[int, str]]) -> Regex | None:
            if not items:
                return None
            source = "|".join(f"(?P<r{i}>{p})" for i, p in items)
            return compile_linear(source, max_program=None) if linear else re.compile(source)

        return cls(union(anchored), union(floating))

    def find(self, line: str) -> int:
        if self.anchored is not None:
            match = self.anchored.match(line)
            if match is not None and match.lastgroup is not None:
                return int(match.lastgroup[1:])
        if self.floating is not None:
            match = self.floating.search(line)
            if match is not None and match.lastgroup is not None:
                return int(match.lastgroup[1:])
        return -1


@dataclass(frozen=True, slots=True)
class Rule:
    source: str
    label: str
    note: str | None
    decoration: bool = False  # a drop rule's lines may go into the view from any run
    counted: bool = False  # ... from runs too short for a marker of their own


@dataclass(frozen=True, slots=True)
class Block:
    start: Regex
    head: int
    tail: int
    label: str
    note: str | None
    counts: tuple[tuple[str, Regex], ...]


@dataclass(frozen=True, slots=True)
class Group:
    key: Regex
    head: int
    label: str
    note: str | None


@dataclass(frozen=True, slots=True)
class Sample:
    input: str
    expected: str
    command: str | None
    tool: str | None
    source: str


@dataclass(frozen=True, slots=True)
class Filter:
    name: str
    origin: str
    description: str = ""
    priority: int = 50
    action: str = "filter"
    commands: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    defer_to_output: bool = False
    keep: Matcher | None = None
    header: Matcher | None = None
    drop: Matcher | None = None
    drop_rules: tuple[Rule, ...] = ()
    collapse: Matcher | None = None
    collapse_rules: tuple[Rule, ...] = ()
    blocks: tuple[Block, ...] = ()
    block_start: Matcher | None = None
    block_end: Matcher | None = None
    group: Group | None = None
    head: int = 10
    tail: int = 10
    context_before: int = 0
    context_after: int = 0
    similar: bool = False
    events: bool = False  # kept lines that repeat an event kept above fold (see ``similar``)
    dedupe: bool = True
    rows: bool = False
    min_lines: int = 0
    verify: tuple[Sample, ...] = ()
    lines: Matcher | None = None  # line signatures: what most lines of this output look like
    linear: bool = False  # a user filter: its regexes are compiled by RE2 (linear time)


def _top_level_alternation(body: str) -> bool:
    depth = 0
    in_class = False
    escaped = False
    for ch in body:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
    return False


def signature_kind(wrapped: str) -> str:
    """Kind of a wrapped pattern: start (``\\A``), line (``^``) or text (anywhere)."""
    body = wrapped[4:-1] if wrapped.startswith("(?i:") else wrapped[3:-1]
    if _top_level_alternation(body):
        return "text"
    if body.startswith("\\A"):
        return "start"
    if body.startswith("^"):
        return "line"
    return "text"
