"""Selection: which filter handles one tool output (or none).

A :class:`FilterSet` compiles the loaded filters into one-pass matchers for
commands, tool names and output signatures; :meth:`FilterSet.select` picks
the filter from the command's segments, else the tool name, else the output.
A set is immutable: built once (when the pipeline is built), shared by every
record and thread, and never reads a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from workers.engines._filters.commands import command_segments
from workers.engines._filters.model import ANSI, Filter, signature_kind

__all__ = ["OUTPUT_SCAN", "SIGNATURE_LINES", "FilterSet"]

OUTPUT_SCAN = 32768  # output signatures are searched in this prefix
SIGNATURE_LINES = 400  # ... and line signatures in its first lines

_NEUTRAL = re.compile(
    r"(?:cd|pushd|popd|export|set|source|\.|true|:|echo|printf|clear|sleep|wait|unset|alias|"
    r"ulimit|umask|mkdir|touch|trap|shopt|tee|head|tail|sort|uniq|wc|cut|tr|less|more|column|"
    r"cat|jq|sed|awk|xargs)\b"
)
_READ_ONLY_IN_PIPE = re.compile(r"(?:head|tail|tee|less|more|cat|sort|uniq|cut|tr|column)\b")


@dataclass(frozen=True, slots=True, eq=False)
class FilterSet:
    """Compiled filters plus one-pass matchers for commands, tools and outputs.

    ``filters`` in load order (a later file wins a priority tie); the rest is
    derived from them.  Compared by identity.
    """

    filters: tuple[Filter, ...]
    by_name: Mapping[str, Filter] = field(init=False)
    _order: tuple[Filter, ...] = field(init=False)
    _command: re.Pattern[str] | None = field(init=False)
    _tool: re.Pattern[str] | None = field(init=False)
    _out_start: re.Pattern[str] | None = field(init=False)
    _out_line: re.Pattern[str] | None = field(init=False)
    _out_text: re.Pattern[str] | None = field(init=False)

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
        derive(self, "_out_line", self._signatures("line", re.M))
        derive(self, "_out_text", self._signatures("text", re.M))

    def _signatures(self, kind: str, flags: int = 0) -> re.Pattern[str] | None:
        groups = [tuple(p for p in f.outputs if signature_kind(p) == kind) for f in self._order]
        return self._compile(groups, flags)

    @staticmethod
    def _compile(groups: list[tuple[str, ...]], flags: int = 0) -> re.Pattern[str] | None:
        parts = [f"(?P<f{i}>{'|'.join(pats)})" for i, pats in enumerate(groups) if pats]
        return re.compile("|".join(parts), flags) if parts else None

    def _hit(self, match: re.Match[str] | None) -> Filter | None:
        if match is None or match.lastgroup is None:
            return None
        return self._order[int(match.lastgroup[1:])]

    def by_output(self, text: str) -> Filter | None:
        """The highest-priority filter whose output signature occurs near the top.

        Signatures anchored at the start of the text (``\\A``) are matched once,
        single-line signatures anchored at a line start (``^``) are matched
        line by line (one combined regex), the rest are searched.
        """
        if self._out_start is None and self._out_line is None and self._out_text is None:
            return None
        head = text[:OUTPUT_SCAN]
        if "\x1b" in head:
            head = ANSI.sub("", head)
        best: Filter | None = None

        def consider(match: re.Match[str] | None) -> None:
            nonlocal best
            filt = self._hit(match)
            if filt is not None and (best is None or filt.priority > best.priority):
                best = filt

        if self._out_start is not None:
            consider(self._out_start.match(head))
        if self._out_line is not None:
            matcher = self._out_line.match
            pos = 0
            for _ in range(SIGNATURE_LINES):
                consider(matcher(head, pos))
                pos = head.find("\n", pos) + 1
                if pos <= 0:
                    break
        if self._out_text is not None:
            for seen, match in enumerate(self._out_text.finditer(head)):
                consider(match)
                if seen >= 64:
                    break
        return best

    def by_command(self, command: str) -> tuple[Filter | None, bool]:
        """(best filter for the command, whether some segment is not neutral/skip)."""
        if self._command is None:
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

    def select(self, command: str | None, tool: str | None, text: str) -> Filter | None:
        """The filter for one tool output, or None when the output is left alone."""
        if command:
            filt, active = self.by_command(command)
            if filt is not None and filt.action == "skip":
                return None
            if filt is not None and filt.defer_to_output:
                sig = self.by_output(text)
                if sig is not None and sig.action != "skip" and sig is not filt:
                    return sig
            if filt is not None:
                return filt
            if not active:
                return None
            sig = self.by_output(text)
            return sig if sig is not None else self.by_name.get("generic")
        if tool and self._tool is not None:
            filt = self._hit(self._tool.match(tool))
            if filt is not None:
                return None if filt.action == "skip" else filt
        sig = self.by_output(text)
        if sig is not None and sig.action != "skip":
            return sig
        return None
