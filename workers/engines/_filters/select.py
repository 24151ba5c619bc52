"""Selection: which filter handles one tool output (or none).

A :class:`FilterSet` compiles the loaded filters into one-pass matchers for
commands, tool names and output signatures; :meth:`FilterSet.select` picks
the filter from the command's segments, else the tool name, else the output.
A set is immutable: built once (when the pipeline is built), shared by every
record and thread, and never reads a file.

Content before fallback: when the command names no filter (``python3 x.py``,
``./deploy.sh``, ``bash -c ./run.sh``), when a filter defers to the output
(``make test && ./run``) or when only a shell tool name is known, the output
itself decides: first the filters' output signatures (:meth:`FilterSet.by_output`),
then :meth:`FilterSet.by_content`, which scores the first ``CONTENT_LINES``
non-blank lines against each filter's line signatures (``match.lines``, plus
its single-line ``match.output`` signatures).  Only then does the ``generic``
fallback apply.  :meth:`FilterSet.detect` says which of these decided (the
family that ``ctxpress bench`` and ``compress --explain`` report).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from workers.core.shell import command_segments
from workers.engines._filters.linear import Regex, RegexMatch, compile_linear
from workers.engines._filters.model import ANSI, LINE_CAP, Filter, Matcher, signature_kind
from workers.engines._logs import reads_a_log

__all__ = [
    "CONTENT_LINES",
    "CONTENT_MIN_HITS",
    "CONTENT_SHARE",
    "OUTPUT_SCAN",
    "SIGNATURE_LINES",
    "Detection",
    "FilterSet",
]

OUTPUT_SCAN = 32768  # output signatures are searched in this prefix
SIGNATURE_LINES = 400  # ... and line signatures in its first lines
CONTENT_LINES = 120  # content scoring reads this many non-blank lines ...
CONTENT_SHARE = 0.5  # ... and a filter wins when its line signatures match this share of them
CONTENT_MIN_HITS = 3  # ... and at least this many lines

_NEUTRAL = re.compile(
    r"(?:cd|pushd|popd|export|set|source|\.|true|:|echo|printf|clear|sleep|wait|unset|alias|"
    r"ulimit|umask|mkdir|touch|trap|shopt|tee|head|tail|sort|uniq|wc|cut|tr|less|more|column|"
    r"cat|jq|sed|awk|xargs)\b"
)
_READ_ONLY_IN_PIPE = re.compile(r"(?:head|tail|tee|less|more|cat|sort|uniq|cut|tr|column)\b")


@dataclass(frozen=True, slots=True)
class Detection:
    """What handles one output and what decided it.

    ``source``: ``command``, ``tool``, ``output`` (an output signature),
    ``content`` (line-signature scoring), ``fallback`` (the ``generic``
    filter), ``skip`` (a filter that leaves the output alone, e.g. a file
    read; ``family`` names it) or ``none``.
    """

    filter: Filter | None
    source: str
    family: str


_NONE = Detection(None, "none", "unknown")


def _index(match: RegexMatch | None) -> int:
    """The filter index (``_order``) of a union match's ``f<i>`` group, -1 for none."""
    if match is None or match.lastgroup is None:
        return -1
    return int(match.lastgroup[1:])


@dataclass(frozen=True, slots=True)
class _Union:
    """One regex per engine over the filters' patterns: ``re`` for built-in, RE2 for user ones.

    Each pattern group is named ``f<i>`` after its filter's index in
    ``FilterSet._order``.  Without user filters ``linear`` is None and every
    call is exactly the former single ``re`` union's.  With both, a ``match``
    takes the lower index of the two (the one the single union would have
    taken: its alternatives are tried in that order), and the text searches
    merge the two engines' matches by position.
    """

    std: re.Pattern[str] | None
    linear: Regex | None

    @classmethod
    def build(cls, groups: list[tuple[str, ...]], linear: list[bool], multiline: bool) -> _Union:
        def parts(want: bool) -> str:
            return "|".join(
                f"(?P<f{i}>{'|'.join(pats)})"
                for i, pats in enumerate(groups)
                if pats and linear[i] == want
            )

        std, lin = parts(False), parts(True)
        return cls(
            re.compile(std, re.M if multiline else 0) if std else None,
            compile_linear(lin, multiline=multiline, max_program=None) if lin else None,
        )

    @property
    def empty(self) -> bool:
        return self.std is None and self.linear is None

    def match(self, text: str, pos: int = 0) -> int:
        """Index of the first filter whose pattern matches at ``pos`` (-1: none)."""
        found = _index(self.std.match(text, pos)) if self.std is not None else -1
        if self.linear is not None:
            other = _index(self.linear.match(text, pos))
            if other >= 0 and (found < 0 or other < found):
                found = other
        return found

    def lines(self, text: str, limit: int) -> list[int]:
        """``match`` at the start of each of the first ``limit`` lines (a -1 for a miss)."""
        out: list[int] = []
        pos = 0
        for _ in range(limit):
            out.append(self.match(text, pos))
            pos = text.find("\n", pos) + 1
            if pos <= 0:
                break
        return out

    def search_all(self, text: str, limit: int) -> list[int]:
        """Filter indexes of the first ``limit`` non-overlapping matches, in text order."""
        if self.linear is None:
            if self.std is None:
                return []
            return [_index(m) for _, m in zip(range(limit), self.std.finditer(text), strict=False)]
        hits: list[tuple[int, int]] = []
        for rx in (self.std, self.linear):
            if rx is not None:
                hits.extend(
                    (m.start(), _index(m))
                    for _, m in zip(range(limit), rx.finditer(text), strict=False)
                )
        hits.sort()
        return [i for _, i in hits[:limit]]


# filters of formats written for machines, found by the output's content: a command that fetches
# documents to read (curl) does not make such an output a document
_MACHINE = frozenset({"metrics"})


@dataclass(frozen=True, slots=True, eq=False)
class FilterSet:
    """Compiled filters plus one-pass matchers for commands, tools and outputs.

    ``filters`` in load order (a later file wins a priority tie); the rest is
    derived from them.  Compared by identity.
    """

    filters: tuple[Filter, ...]
    by_name: Mapping[str, Filter] = field(init=False)
    _order: tuple[Filter, ...] = field(init=False)
    _command: _Union = field(init=False)
    _tool: _Union = field(init=False)
    _out_start: _Union = field(init=False)
    _out_line: _Union = field(init=False)
    _out_text: _Union = field(init=False)
    _content: tuple[tuple[Filter, tuple[Matcher, ...]], ...] = field(init=False)
    _content_any: tuple[re.Pattern[str] | None, re.Pattern[str] | None] | None = field(init=False)

    @classmethod
    def of(cls, filters: Iterable[Filter]) -> FilterSet:
        return cls(tuple(filters))

    def __post_init__(self) -> None:
        derive = object.__setattr__  # frozen: the derived fields are set once, here
        # Stable order: priority desc, then later-loaded first (user files win ties).
        indexed = list(enumerate(self.filters))
        indexed.sort(key=lambda it: (-it[1].priority, -it[0]))
        derive(self, "_order", tuple(f for _, f in indexed))
        derive(self, "by_name", {f.name: f for f in self.filters})
        derive(self, "_command", self._compile([f.commands for f in self._order]))
        derive(self, "_tool", self._compile([f.tools for f in self._order]))
        derive(self, "_out_start", self._signatures("start"))
        derive(self, "_out_line", self._signatures("line", True))
        derive(self, "_out_text", self._signatures("text", True))
        derive(self, "_content", self._content_signatures())
        derive(self, "_content_any", _any_matcher(self._content))

    def _content_signatures(self) -> tuple[tuple[Filter, tuple[Matcher, ...]], ...]:
        out: list[tuple[Filter, tuple[Matcher, ...]]] = []
        for filt in self._order:
            if filt.action != "filter":
                continue
            single = [p for p in filt.outputs if signature_kind(p) == "line" and "\\n" not in p]
            signatures = Matcher.build(single, filt.linear)
            matchers = tuple(m for m in (filt.lines, signatures) if m is not None)
            if matchers:
                out.append((filt, matchers))
        return tuple(out)

    def _signatures(self, kind: str, multiline: bool = False) -> _Union:
        groups = [tuple(p for p in f.outputs if signature_kind(p) == kind) for f in self._order]
        return self._compile(groups, multiline)

    def _compile(self, groups: list[tuple[str, ...]], multiline: bool = False) -> _Union:
        return _Union.build(groups, [f.linear for f in self._order], multiline)

    def _hit(self, index: int) -> Filter | None:
        return self._order[index] if index >= 0 else None

    def by_output(self, text: str) -> Filter | None:
        """The highest-priority filter whose output signature occurs near the top.

        Signatures anchored at the start of the text (``\\A``) are matched once,
        single-line signatures anchored at a line start (``^``) are matched
        line by line (one combined regex), the rest are searched.
        """
        best: Filter | None = None
        for filt in self._output_hits(text):
            if best is None or filt.priority > best.priority:
                best = filt
        return best

    def _output_hits(self, text: str) -> list[Filter]:
        """Filters whose output signatures occur near the top, distinct, in the order found."""
        if self._out_start.empty and self._out_line.empty and self._out_text.empty:
            return []
        head = text[:OUTPUT_SCAN]
        if "\x1b" in head:
            head = ANSI.sub("", head)
        found: list[Filter] = []

        def consider(index: int) -> None:
            filt = self._hit(index)
            if filt is not None and filt not in found:
                found.append(filt)

        if not self._out_start.empty:
            consider(self._out_start.match(head))
        if not self._out_line.empty:
            for index in self._out_line.lines(head, SIGNATURE_LINES):
                consider(index)
        if not self._out_text.empty:
            for index in self._out_text.search_all(head, 65):
                consider(index)
        return found

    def by_command(self, command: str) -> tuple[Filter | None, bool]:
        """(best filter for the command, whether some segment is not neutral/skip)."""
        if self._command.empty:
            return None, True
        best: Filter | None = None
        best_skip: Filter | None = None
        active = False
        segments = command_segments(command)
        for pos, seg in enumerate(segments):
            filt = self._hit(self._command.match(seg))
            if filt is not None and filt.action == "skip":
                if pos and _READ_ONLY_IN_PIPE.match(seg):
                    continue
                best_skip = best_skip or filt
                continue
            if filt is None:
                if not _NEUTRAL.match(seg):
                    active = True
                continue
            active = True
            if best is None or filt.priority > best.priority:
                best = filt
        if best is None and not active and best_skip is not None:
            return best_skip, False
        return best, active

    @staticmethod
    def _content_lines(text: str) -> list[str]:
        """The first ``CONTENT_LINES`` non-blank lines, ANSI colour stripped."""
        head = text[:OUTPUT_SCAN]
        if "\x1b" in head:
            head = ANSI.sub("", head)
        lines: list[str] = []
        for raw in head.split("\n"):
            if raw.strip():
                lines.append(raw[:LINE_CAP].rstrip("\r"))
                if len(lines) >= CONTENT_LINES:
                    break
        return lines

    def _score(self, filt: Filter, lines: list[str]) -> int:
        """How many of ``lines`` match one of the filter's line signatures."""
        for cand, matchers in self._content:
            if cand is filt:
                return sum(1 for line in lines if any(m.find(line) >= 0 for m in matchers))
        return 0

    def by_content(self, text: str) -> Filter | None:
        """The filter whose line signatures match most of the first non-blank lines.

        Each of the first ``CONTENT_LINES`` non-blank lines (ANSI colour
        stripped) is tried against each filter's ``match.lines`` and
        single-line ``match.output`` patterns; the filter matching the largest
        share wins when that share is at least ``CONTENT_SHARE`` and at least
        ``CONTENT_MIN_HITS`` lines (ties: higher priority, then load order).
        """
        if not self._content:
            return None
        lines = self._content_lines(text)
        if len(lines) < CONTENT_MIN_HITS:
            return None
        need = max(CONTENT_MIN_HITS, int(len(lines) * CONTENT_SHARE + 0.999999))
        best: Filter | None = None
        best_hits = need - 1
        # a line no filter's signatures match is a miss for each of them: one test tells
        anyone = self._content_any
        some = [_found_by_any(anyone, line) for line in lines] if anyone is not None else None
        for filt, matchers in self._content:
            hits = 0
            misses_left = len(lines) - best_hits  # more misses: cannot beat the best
            for k, line in enumerate(lines):
                if (some is None or some[k]) and any(m.find(line) >= 0 for m in matchers):
                    hits += 1
                else:
                    misses_left -= 1
                    if misses_left <= 0:
                        break
            if hits > best_hits:  # ``_order``: the first of equal scores has priority
                best, best_hits = filt, hits
        return best

    def _from_output(self, text: str) -> Detection | None:
        hits = [f for f in self._output_hits(text) if f.action == "filter"]
        if len(hits) > 1:
            # several signatures (make's and gcc's in a make log): the filter whose
            # line signatures cover most of the lines wins, then priority
            lines = self._content_lines(text)
            best = max(
                enumerate(hits), key=lambda it: (self._score(it[1], lines), it[1].priority, -it[0])
            )[1]
            return Detection(best, "output", best.name)
        sig = self.by_output(text)
        if sig is not None:
            return Detection(sig, "output", sig.name)
        sig = self.by_content(text)
        if sig is not None:
            return Detection(sig, "content", sig.name)
        logfile = self.by_name.get("logfile")
        if logfile is not None and reads_a_log(text, marked=True):
            # a log whose command says nothing (none at all: a chat's tool message; ``./run.sh``;
            # ``python3 worker.py``): most of its first lines say they are log lines (a level, a
            # syslog or journal header, a request), so it is read as the log it is
            return Detection(logfile, "content", logfile.name)
        return None

    def detect(self, command: str | None, tool: str | None, text: str) -> Detection:
        """The filter for one tool output and what decided it (see :class:`Detection`)."""
        if command:
            filt, active = self.by_command(command)
            if filt is not None and filt.action == "skip":
                logfile = self.by_name.get("logfile")
                if filt.name == "read" and logfile is not None and reads_a_log(text, marked=True):
                    # ``tail -n 300 logs/app.jsonl``, ``cat worker.txt``: a read whose lines
                    # are mostly log lines (with a level, a request: not a CSV's timestamped
                    # rows) is a log, whatever the file is called
                    return Detection(logfile, "content", logfile.name)
                found = self._from_output(text)
                if found is not None and found.filter is not None and found.filter.name in _MACHINE:
                    # a fetched document that is a machine's format (``curl -s .../metrics``):
                    # no page to read, the format's filter takes it
                    return found
                return Detection(None, "skip", filt.name)
            if filt is not None and filt.defer_to_output:
                found = self._from_output(text)
                if found is not None and found.filter is not None:
                    sig = found.filter
                    if sig.action != "skip" and sig is not filt:
                        return found
            if filt is not None:
                return Detection(filt, "command", filt.name)
            if not active:
                return _NONE
            found = self._from_output(text)
            if found is not None:
                return found
            generic = self.by_name.get("generic")
            return Detection(generic, "fallback", "unknown") if generic is not None else _NONE
        if tool and not self._tool.empty:
            filt = self._hit(self._tool.match(tool))
            if filt is not None:
                if filt.action == "skip":
                    return Detection(None, "skip", filt.name)
                if filt is self.by_name.get("generic"):  # a shell tool: the output decides
                    found = self._from_output(text)
                    if (
                        found is not None
                        and found.filter is not None
                        and found.filter.action != "skip"
                    ):
                        return found
                    return Detection(filt, "fallback", "unknown")
                return Detection(filt, "tool", filt.name)
        found = self._from_output(text)
        if found is not None and found.filter is not None and found.filter.action != "skip":
            return found
        return _NONE

    def select(self, command: str | None, tool: str | None, text: str) -> Filter | None:
        """The filter for one tool output, or None when the output is left alone."""
        return self.detect(command, tool, text).filter


_GROUP_NAME = re.compile(r"\(\?P<r\d+>")


def _any_matcher(
    content: Iterable[tuple[Filter, tuple[Matcher, ...]]],
) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None] | None:
    """Two regexes that find a line iff some filter's content matchers find it.

    The union of every filter's anchored patterns (tried with ``match``) and of
    their floating ones (``search``): an alternation matches where one of its
    branches does.  None when a filter is compiled by RE2 or when the union does
    not compile (a group name used by two filters); ``by_content`` then tries
    every filter on every line.
    """
    anchored: list[str] = []
    floating: list[str] = []
    for filt, matchers in content:
        if filt.linear:
            return None
        for matcher in matchers:
            for rx, into in ((matcher.anchored, anchored), (matcher.floating, floating)):
                if isinstance(rx, re.Pattern):
                    into.append("(?:" + _GROUP_NAME.sub("(?:", rx.pattern) + ")")
                elif rx is not None:
                    return None
    try:
        return (
            re.compile("|".join(anchored)) if anchored else None,
            re.compile("|".join(floating)) if floating else None,
        )
    except re.error:
        return None


def _found_by_any(union: tuple[re.Pattern[str] | None, re.Pattern[str] | None], line: str) -> bool:
    anchored, floating = union
    return (anchored is not None and anchored.match(line) is not None) or (
        floating is not None and floating.search(line) is not None
    )
