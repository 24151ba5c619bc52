"""One decoded filter document -> one :class:`Filter`, or a :class:`FilterError`.

Every field is checked (types, ranges, known keys, note templates) and every
regex goes through :func:`~workers.engines._filters.safety.check_pattern`;
errors name the file and the field.  A user file's regexes (``probe=True``)
are compiled by RE2 (linear time; what it cannot compile is rejected); the
built-in ones by ``re``, and the test suite times them on hostile lines
(:meth:`FilterBuilder.probe_all`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from typing import Any

from workers.engines._filters.linear import LinearError, Regex, compile_linear
from workers.engines._filters.model import (
    Block,
    Filter,
    FilterError,
    Group,
    Matcher,
    Rule,
    Sample,
)
from workers.engines._filters.safety import SLOW, check_pattern, probe_patterns

__all__ = ["MAX_PATTERNS_PER_FILTER", "FilterBuilder"]

MAX_PATTERNS_PER_FILTER = 300
_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
_KNOWN_KEYS = frozenset(
    {
        "name",
        "description",
        "priority",
        "action",
        "match",
        "defer_to_output",
        "keep",
        "header",
        "drop",
        "collapse",
        "blocks",
        "block_end",
        "group",
        "head",
        "tail",
        "context",
        "similar",
        "events",
        "dedupe",
        "rows",
        "min_lines",
        "verify",
    }
)
_NOTE_FIELDS = frozenset({"n", "total", "label", "key"})
_LABEL_BAD = re.compile(r"[<>\n\r{}]")


class FilterBuilder:
    """Validates one decoded filter document; errors name the file."""

    def __init__(self, origin: str, probe: bool) -> None:
        self.origin = origin
        self.probe = probe  # probe_all() times the regexes (used by the built-in files' test)
        self.linear = probe  # a user file: every regex is compiled by RE2 (linear time)
        self.count = 0
        self.probed: list[tuple[str, str, str, bool]] = []  # where, value, regex, anchored

    def fail(self, message: str) -> FilterError:
        return FilterError(f"filter file {self.origin}: {message}")

    def pattern(
        self, value: Any, where: str, named_groups: bool = False, anchored: bool = False
    ) -> str:
        self.count += 1
        if self.count > MAX_PATTERNS_PER_FILTER:
            raise self.fail(f"more than {MAX_PATTERNS_PER_FILTER} patterns")
        if not isinstance(value, str):
            raise self.fail(f"{where}: pattern must be a string, got {type(value).__name__}")
        insensitive = value.startswith("(?i)")
        body = value[4:] if insensitive else value
        reason = check_pattern(body, named_groups=named_groups, probe=False, anchored=anchored)
        if reason is None and re.search(r"\(\?[aiLmsux]+\)", body):
            reason = "inline flags are only allowed as a leading (?i)"
        wrapped = f"(?i:{body})" if insensitive else f"(?:{body})"
        if reason is None and self.linear:
            try:
                compile_linear(wrapped)
            except LinearError as exc:
                reason = str(exc)
        if reason:
            raise self.fail(f"{where}: rejected pattern {value!r}: {reason}")
        self.probed.append((where, value, wrapped, anchored))
        return wrapped

    def compile(self, wrapped: str) -> Regex:
        """One validated regex, compiled by RE2 for a user file, by ``re`` otherwise."""
        return compile_linear(wrapped) if self.linear else re.compile(wrapped)

    def matcher(self, patterns: list[str]) -> Matcher | None:
        return Matcher.build(patterns, self.linear)

    def probe_all(self) -> None:
        """Reject the file if one of its regexes is slow on hostile lines (Python ``re``).

        Not needed for user files (RE2 is linear); the test suite runs it on the
        built-in files, whose regexes run on ``re``.
        """
        if not self.probed:
            return
        slow = probe_patterns([(regex, anchored) for _, _, regex, anchored in self.probed])
        if slow is not None:
            where, value, _, _ = self.probed[slow]
            raise self.fail(f"{where}: rejected pattern {value!r}: {SLOW}")

    def patterns(self, value: Any, where: str, anchored: bool = False) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.fail(f"{where} must be a list of regexes")
        return [self.pattern(v, f"{where}[{i}]", anchored=anchored) for i, v in enumerate(value)]

    def label(self, value: Any, where: str, default: str) -> str:
        if value is None:
            return default
        if not isinstance(value, str) or len(value) > 60 or _LABEL_BAD.search(value):
            raise self.fail(f"{where}: label must be a short one-line string without <>{{}}")
        return value

    def note(self, value: Any, where: str, extra: Iterable[str] = ()) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or len(value) > 120 or re.search(r"[<>\n\r]", value):
            raise self.fail(f"{where}: note must be a one-line string of at most 120 characters")
        allowed = _NOTE_FIELDS | set(extra)
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(value) if f is not None}
        except ValueError as exc:
            raise self.fail(f"{where}: bad note template {value!r}: {exc}") from exc
        unknown = fields - allowed
        if unknown:
            raise self.fail(
                f"{where}: unknown note field(s) {sorted(unknown)}; allowed: {sorted(allowed)}"
            )
        return value

    def rules(self, value: Any, where: str, default_label: str) -> list[tuple[str, Rule]]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(f"{where} must be a list")
        out: list[tuple[str, Rule]] = []
        for i, item in enumerate(value):
            spot = f"{where}[{i}]"
            if isinstance(item, str):
                out.append((self.pattern(item, spot), Rule(item, default_label, None)))
            elif isinstance(item, dict):
                unknown = set(item) - {"pattern", "label", "note", "decoration", "counted"}
                if unknown:
                    raise self.fail(f"{spot}: unknown key(s) {sorted(unknown)}")
                regex = self.pattern(item.get("pattern"), spot)
                decoration = item.get("decoration", False)
                counted = item.get("counted", False)
                for name, flag in (("decoration", decoration), ("counted", counted)):
                    if not isinstance(flag, bool) or (flag and where != "drop"):
                        raise self.fail(f"{spot}: {name} (true or false) is for drop rules")
                if decoration and counted:
                    raise self.fail(f"{spot}: a rule is decoration or counted, not both")
                out.append(
                    (
                        regex,
                        Rule(
                            item["pattern"],
                            self.label(item.get("label"), spot, default_label),
                            self.note(item.get("note"), spot),
                            decoration,
                            counted,
                        ),
                    )
                )
            else:
                raise self.fail(f"{spot}: a rule is a regex string or an object with 'pattern'")
        return out

    def integer(self, value: Any, where: str, default: int, lo: int = 0, hi: int = 100000) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(f"{where} must be an integer between {lo} and {hi}")
        return value

    def boolean(self, value: Any, where: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(f"{where} must be true or false")
        return value

    def build(self, doc: Any) -> Filter:
        if not isinstance(doc, dict):
            raise self.fail("a filter file holds one object")
        unknown = set(doc) - _KNOWN_KEYS
        if unknown:
            raise self.fail(f"unknown key(s) {sorted(unknown)}; known: {sorted(_KNOWN_KEYS)}")
        name = doc.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise self.fail("'name' must match [a-z0-9][a-z0-9_.-]*")
        match = doc.get("match")
        if not isinstance(match, dict) or not set(match) <= {"command", "output", "tool", "lines"}:
            raise self.fail(
                "'match' must be an object with 'command', 'output', 'tool' and/or 'lines'"
            )
        commands = self.patterns(match.get("command"), "match.command", anchored=True)
        outputs = self.patterns(match.get("output"), "match.output")
        tools = self.patterns(match.get("tool"), "match.tool", anchored=True)
        lines = self.patterns(match.get("lines"), "match.lines")
        if not (commands or outputs or tools):
            raise self.fail("'match' needs at least one command, output or tool regex")
        action = doc.get("action", "filter")
        if action not in ("filter", "skip"):
            raise self.fail("'action' must be 'filter' or 'skip'")
        keep = self.rules(doc.get("keep"), "keep", "kept")
        drop = self.rules(doc.get("drop"), "drop", "dropped")
        flags: dict[str, tuple[bool, bool]] = {}
        for _, rule in drop:
            mine = (rule.decoration, rule.counted)
            if flags.setdefault(rule.label, mine) != mine:
                raise self.fail(
                    f"drop: the rules labelled {rule.label!r} must agree on decoration and counted"
                )
        collapse = self.rules(doc.get("collapse"), "collapse", "similar lines")
        blocks = self.blocks(doc.get("blocks"))
        block_end = self.patterns(doc.get("block_end"), "block_end")
        context = doc.get("context") or {}
        if not isinstance(context, dict) or not set(context) <= {"before", "after"}:
            raise self.fail("'context' must be an object with 'before' and/or 'after'")
        description = doc.get("description", "")
        if not isinstance(description, str):
            raise self.fail("'description' must be a string")
        return Filter(
            name=name,
            origin=self.origin,
            description=description,
            priority=self.integer(doc.get("priority"), "priority", 50, -1000, 1000),
            action=action,
            commands=tuple(commands),
            outputs=tuple(outputs),
            tools=tuple(tools),
            defer_to_output=self.boolean(doc.get("defer_to_output"), "defer_to_output", False),
            keep=self.matcher([p for p, _ in keep]),
            header=self.matcher(self.patterns(doc.get("header"), "header")),
            drop=self.matcher([p for p, _ in drop]),
            drop_rules=tuple(r for _, r in drop),
            collapse=self.matcher([p for p, _ in collapse]),
            collapse_rules=tuple(r for _, r in collapse),
            blocks=tuple(b for _, b in blocks),
            block_start=self.matcher([p for p, _ in blocks]),
            block_end=self.matcher(block_end),
            group=self.group(doc.get("group")),
            head=self.integer(doc.get("head"), "head", 10),
            tail=self.integer(doc.get("tail"), "tail", 10),
            context_before=self.integer(context.get("before"), "context.before", 0, 0, 50),
            context_after=self.integer(context.get("after"), "context.after", 0, 0, 50),
            similar=self.boolean(doc.get("similar"), "similar", False),
            events=self.boolean(doc.get("events"), "events", False),
            dedupe=self.boolean(doc.get("dedupe"), "dedupe", True),
            rows=self.boolean(doc.get("rows"), "rows", False),
            min_lines=self.integer(doc.get("min_lines"), "min_lines", 0),
            verify=self.samples(doc.get("verify")),
            lines=self.matcher(lines),
            linear=self.linear,
        )

    def blocks(self, value: Any) -> list[tuple[str, Block]]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail("'blocks' must be a list")
        out: list[tuple[str, Block]] = []
        for i, item in enumerate(value):
            spot = f"blocks[{i}]"
            if not isinstance(item, dict) or "start" not in item:
                raise self.fail(f"{spot}: a block is an object with 'start'")
            unknown = set(item) - {"start", "head", "tail", "label", "note", "count"}
            if unknown:
                raise self.fail(f"{spot}: unknown key(s) {sorted(unknown)}")
            counts_doc = item.get("count") or {}
            if not isinstance(counts_doc, dict):
                raise self.fail(f"{spot}.count must map names to regexes")
            counts: list[tuple[str, Regex]] = []
            for cname, cpat in counts_doc.items():
                if not re.fullmatch(r"[a-z_]{1,20}", cname):
                    raise self.fail(f"{spot}.count: name {cname!r} must be [a-z_]+")
                counts.append((cname, self.compile(self.pattern(cpat, f"{spot}.count.{cname}"))))
            start = self.pattern(item["start"], f"{spot}.start")
            out.append(
                (
                    start,
                    Block(
                        start=self.compile(start),
                        head=self.integer(item.get("head"), f"{spot}.head", 10),
                        tail=self.integer(item.get("tail"), f"{spot}.tail", 0),
                        label=self.label(item.get("label"), spot, "block lines"),
                        note=self.note(item.get("note"), f"{spot}.note", (n for n, _ in counts)),
                        counts=tuple(counts),
                    ),
                )
            )
        return out

    def group(self, value: Any) -> Group | None:
        if value is None:
            return None
        if not isinstance(value, dict) or "key" not in value:
            raise self.fail("'group' must be an object with 'key'")
        unknown = set(value) - {"key", "head", "label", "note"}
        if unknown:
            raise self.fail(f"group: unknown key(s) {sorted(unknown)}")
        key = self.pattern(value["key"], "group.key")
        compiled = self.compile(key)
        if compiled.groups < 1:
            raise self.fail("group.key needs a capture group (the key)")
        return Group(
            key=compiled,
            head=self.integer(value.get("head"), "group.head", 1),
            label=self.label(value.get("label"), "group", "more matches"),
            note=self.note(value.get("note"), "group.note"),
        )

    def samples(self, value: Any) -> tuple[Sample, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail("'verify' must be a list of samples")
        out: list[Sample] = []
        for i, item in enumerate(value):
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("input"), str)
                or not isinstance(item.get("expected"), str)
            ):
                raise self.fail(f"verify[{i}] needs string 'input' and 'expected'")
            command = item.get("command")
            tool = item.get("tool")
            if command is not None and not isinstance(command, str):
                raise self.fail(f"verify[{i}].command must be a string")
            if tool is not None and not isinstance(tool, str):
                raise self.fail(f"verify[{i}].tool must be a string")
            source = item.get("source", "")
            out.append(Sample(item["input"], item["expected"], command, tool, str(source)))
        return tuple(out)
