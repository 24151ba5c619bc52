"""Tool-output filters as data: loading, validation, selection.

A filter is one JSON or TOML file (``workers/filters/*.json`` built in; more
from the ``filters_dir`` setting and, when trusted, the project's
``.ctxpress/filters``).  Fields (all optional except ``name`` and ``match``)::

    name          "pytest"                     [a-z0-9][a-z0-9_.-]*, unique; a later file
                                               with the same name replaces the earlier one
    description   one sentence
    priority      int (default 50): the highest-priority match wins
    action        "filter" (default) or "skip" (leave the output alone, e.g. file reads)
    match.command regexes, ``re.match``-ed against each normalised command segment
    match.output  regexes (multiline) searched in the first 32 KB of the output
    match.tool    regexes matched against the tool name when no command is known
    defer_to_output  bool: an output signature of another filter wins over this one
    keep          rules: lines always kept visible
    header        regexes of header/legend lines: kept, and not counted as table rows
    drop          rules: lines dropped (stashed)
    collapse      rules: runs of consecutive lines matching the same rule keep their
                  first line; the rest is dropped
    blocks        [{start, head, tail, label, note, count}]: a block runs from a line
                  matching ``start`` to the next block start or ``block_end`` line; its
                  unclassified lines beyond head/tail are dropped
    block_end     regexes that end the current block (the line itself is not in it)
    group         {key, head, label, note}: consecutive lines with the same key (first
                  capture group of ``key``) keep their first ``head`` unclassified lines
    head, tail    unclassified lines kept at the start and end of the output (10, 10)
    context       {before, after}: unclassified lines kept around every kept line
    similar       bool: consecutive lines of the same shape collapse to the first one
    dedupe        bool (default true): repeated kept lines are shown once
    rows          bool: notes say "N of M rows omitted" (tables)
    min_lines     outputs with fewer lines are left alone
    verify        [{input, command, expected, source}]: samples run by the test suite

A rule is a regex string or ``{"pattern": ..., "label": ..., "note": ...}``.
Notes are templates with ``{n}`` (lines dropped), ``{total}``, ``{label}``,
``{key}`` and the block's ``count`` names.

User regexes are checked at load time so that a bad one cannot hang the
worker: no backreferences, lookarounds, nested or alternated unbounded
quantifiers, at most 512 characters, a bounded number of unbounded repeats,
and a timing probe on hostile strings.  Every regex is applied only to the
first ``LINE_CAP`` characters of a line.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import string
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "ANSI",
    "BUILTIN_DIR",
    "LINE_CAP",
    "Block",
    "Filter",
    "FilterError",
    "FilterSet",
    "Group",
    "Matcher",
    "Rule",
    "check_pattern",
    "clear_cache",
    "command_segments",
    "filter_set",
    "load_file",
    "load_filters",
    "probe_patterns",
]

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "filters"
LINE_CAP = 4096  # regexes see at most this many characters of a line
OUTPUT_SCAN = 32768  # output signatures are searched in this prefix
SIGNATURE_LINES = 400  # ... and line signatures in its first lines
MAX_PATTERN = 512
MAX_PATTERNS_PER_FILTER = 300
MAX_UNBOUNDED = 12
MAX_FILE_BYTES = 1 << 20
MAX_COMMAND = 4096
ANSI = re.compile(r"\x1b\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,400}(?:\x07|\x1b\\)")
PROBE_BUDGET_S = 0.05
_SLOW = "too slow on hostile input (catastrophic backtracking)"

_sre_parser: Any = importlib.import_module("re._parser")
_sre_constants: Any = importlib.import_module("re._constants")
_MAXREPEAT: int = _sre_constants.MAXREPEAT


class FilterError(ValueError):
    """A filter file that cannot be loaded (names the file and the problem)."""


# --- regex safety -------------------------------------------------------------


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
        return _SLOW
    return None


# --- model --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Matcher:
    """A list of line regexes as (at most) two combined regexes.

    Patterns anchored at the line start are tried with one ``match``, the
    others with one ``search``; :meth:`find` returns the index of a matching
    pattern (-1 when none matches).
    """

    anchored: re.Pattern[str] | None
    floating: re.Pattern[str] | None

    @classmethod
    def build(cls, patterns: Sequence[str]) -> Matcher | None:
        if not patterns:
            return None
        anchored = [(i, p) for i, p in enumerate(patterns) if _signature_kind(p) == "line"]
        floating = [(i, p) for i, p in enumerate(patterns) if _signature_kind(p) != "line"]

        def union(items: list[tuple[int, str]]) -> re.Pattern[str] | None:
            if not items:
                return None
            return re.compile("|".join(f"(?P<r{i}>{p})" for i, p in items))

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


@dataclass(frozen=True, slots=True)
class Block:
    start: re.Pattern[str]
    head: int
    tail: int
    label: str
    note: str | None
    counts: tuple[tuple[str, re.Pattern[str]], ...]


@dataclass(frozen=True, slots=True)
class Group:
    key: re.Pattern[str]
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
    dedupe: bool = True
    rows: bool = False
    min_lines: int = 0
    verify: tuple[Sample, ...] = ()


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
        "dedupe",
        "rows",
        "min_lines",
        "verify",
    }
)
_NOTE_FIELDS = frozenset({"n", "total", "label", "key"})
_LABEL_BAD = re.compile(r"[<>\n\r{}]")


class _Loader:
    """Validates one decoded filter document; errors name the file."""

    def __init__(self, origin: str, probe: bool) -> None:
        self.origin = origin
        self.probe = probe
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
        if reason:
            raise self.fail(f"{where}: rejected pattern {value!r}: {reason}")
        wrapped = f"(?i:{body})" if insensitive else f"(?:{body})"
        self.probed.append((where, value, wrapped, anchored))
        return wrapped

    def probe_all(self) -> None:
        """Reject the file if one of its regexes is slow on hostile lines."""
        if not self.probe or not self.probed:
            return
        slow = probe_patterns([(regex, anchored) for _, _, regex, anchored in self.probed])
        if slow is not None:
            where, value, _, _ = self.probed[slow]
            raise self.fail(f"{where}: rejected pattern {value!r}: {_SLOW}")

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
                unknown = set(item) - {"pattern", "label", "note"}
                if unknown:
                    raise self.fail(f"{spot}: unknown key(s) {sorted(unknown)}")
                regex = self.pattern(item.get("pattern"), spot)
                out.append(
                    (
                        regex,
                        Rule(
                            item["pattern"],
                            self.label(item.get("label"), spot, default_label),
                            self.note(item.get("note"), spot),
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
        if not isinstance(match, dict) or not set(match) <= {"command", "output", "tool"}:
            raise self.fail("'match' must be an object with 'command', 'output' and/or 'tool'")
        commands = self.patterns(match.get("command"), "match.command", anchored=True)
        outputs = self.patterns(match.get("output"), "match.output")
        tools = self.patterns(match.get("tool"), "match.tool", anchored=True)
        if not (commands or outputs or tools):
            raise self.fail("'match' needs at least one command, output or tool regex")
        action = doc.get("action", "filter")
        if action not in ("filter", "skip"):
            raise self.fail("'action' must be 'filter' or 'skip'")
        keep = self.rules(doc.get("keep"), "keep", "kept")
        drop = self.rules(doc.get("drop"), "drop", "dropped")
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
            keep=Matcher.build([p for p, _ in keep]),
            header=Matcher.build(self.patterns(doc.get("header"), "header")),
            drop=Matcher.build([p for p, _ in drop]),
            drop_rules=tuple(r for _, r in drop),
            collapse=Matcher.build([p for p, _ in collapse]),
            collapse_rules=tuple(r for _, r in collapse),
            blocks=tuple(b for _, b in blocks),
            block_start=Matcher.build([p for p, _ in blocks]),
            block_end=Matcher.build(block_end),
            group=self.group(doc.get("group")),
            head=self.integer(doc.get("head"), "head", 10),
            tail=self.integer(doc.get("tail"), "tail", 10),
            context_before=self.integer(context.get("before"), "context.before", 0, 0, 50),
            context_after=self.integer(context.get("after"), "context.after", 0, 0, 50),
            similar=self.boolean(doc.get("similar"), "similar", False),
            dedupe=self.boolean(doc.get("dedupe"), "dedupe", True),
            rows=self.boolean(doc.get("rows"), "rows", False),
            min_lines=self.integer(doc.get("min_lines"), "min_lines", 0),
            verify=self.samples(doc.get("verify")),
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
            counts: list[tuple[str, re.Pattern[str]]] = []
            for cname, cpat in counts_doc.items():
                if not re.fullmatch(r"[a-z_]{1,20}", cname):
                    raise self.fail(f"{spot}.count: name {cname!r} must be [a-z_]+")
                counts.append((cname, re.compile(self.pattern(cpat, f"{spot}.count.{cname}"))))
            start = self.pattern(item["start"], f"{spot}.start")
            out.append(
                (
                    start,
                    Block(
                        start=re.compile(start),
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
        compiled = re.compile(key)
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


def _decode(path: Path) -> Any:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise FilterError(f"filter file {path}: larger than {MAX_FILE_BYTES} bytes")
    raw = path.read_bytes()
    try:
        if path.suffix == ".toml":
            return tomllib.loads(raw.decode("utf-8"))
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FilterError(f"filter file {path}: cannot parse: {exc}") from exc


def load_file(path: str | os.PathLike[str], *, probe: bool = True) -> Filter:
    """Load and validate one filter file (JSON or TOML)."""
    p = Path(path)
    loader = _Loader(str(p), probe)
    filt = loader.build(_decode(p))
    loader.probe_all()
    return filt


def _files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in (".json", ".toml") and p.is_file())


def load_filters(directories: Sequence[tuple[Path, bool]]) -> list[Filter]:
    """Filters of the given (directory, probe) pairs; a later name replaces an earlier one."""
    by_name: dict[str, Filter] = {}
    for directory, probe in directories:
        for path in _files(directory):
            filt = load_file(path, probe=probe)
            by_name[filt.name] = filt
    return list(by_name.values())


# --- command normalisation ---------------------------------------------------

_WRAPPER = re.compile(
    r"(?:sudo|doas)(?:\s+-[ugpCDrtUh]\s+[^\s-]\S*|\s+-[A-Za-z]+|\s+--[a-z-]+(?:=\S+)?){0,6}\s+"
    r"|(?:time|nohup|command|exec|builtin|unbuffer|xvfb-run|caffeinate)\s+"
    r"|nice\s+-n\s*-?\d+\s+"
    r"|env(?:\s+-[iu]\S*)?\s+"
    r"|timeout\s+(?:-\S+\s+)?\d+[smhd]?\s+"
    r"|stdbuf\s+-\S+\s+"
    r"|[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+"
    r"|npx\s+(?:--yes\s+|-y\s+|-p\s+\S+\s+)?"
    r"|pnpx\s+|bunx\s+|uvx\s+"
    r"|(?:pnpm|yarn|bun)\s+(?:exec|dlx)\s+"
    r"|npm\s+exec\s+(?:--\s+)?"
    r"|(?:uv|poetry|pipenv|pdm|hatch|rye)\s+run\s+"
    r"|bundle\s+exec\s+"
    r"|(?:python[0-9.]*|py)\s+(?:-[BuOI]\s+)*-m\s+"
    r"|\(\s*|\{\s+"
)
_PROGRAM_PATH = re.compile(r"(?:\.{0,2}/)?(?:[\w.@+-]+/)+(?=[\w.+-]+(?:\s|$))")
_GIT_GLOBAL = re.compile(
    r"git((?:\s+(?:-C|-c|--git-dir|--work-tree|--namespace)\s+\S+"
    r"|\s+--(?:git-dir|work-tree|namespace)=\S+|\s+--no-pager|\s+-P|\s+--paginate|\s+-p"
    r"|\s+--no-optional-locks|\s+--literal-pathspecs)+)(?=\s)"
)


def _split(command: str) -> list[str]:
    """Split a shell command at unquoted ``;``, ``&&``, ``||``, ``|``, ``&``, newlines."""
    segments: list[str] = []
    buf: list[str] = []
    quote = ""
    i = 0
    n = len(command)
    while i < n:
        ch = command[i]
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < n:
                buf.append(command[i + 1])
                i += 1
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
        elif ch == "\\" and i + 1 < n:
            if command[i + 1] != "\n":
                buf.append(ch)
                buf.append(command[i + 1])
            i += 1
        elif ch in ";|&\n":
            prev = command[i - 1] if i else ""
            nxt = command[i + 1] if i + 1 < n else ""
            if ch == "&" and (prev in "<>" or nxt == ">"):
                buf.append(ch)  # redirection: 2>&1, &>file, >&2
            else:
                segments.append("".join(buf))
                buf = []
                if ch in "&|" and nxt == ch:
                    i += 1
        else:
            buf.append(ch)
        i += 1
    segments.append("".join(buf))
    return [s.strip() for s in segments if s.strip()]


def _normalise(segment: str) -> str:
    seg = segment
    for _ in range(12):
        match = _WRAPPER.match(seg)
        if match is None or match.end() == 0:
            break
        seg = seg[match.end() :]
    match = _PROGRAM_PATH.match(seg)
    if match:
        seg = seg[match.end() :]
    if seg.startswith("git"):
        seg = _GIT_GLOBAL.sub("git", seg, count=1)
    return seg.strip()


def command_segments(command: str) -> tuple[str, ...]:
    """Normalised segments of a shell command, in order (wrappers and paths removed)."""
    return _segments(command[:MAX_COMMAND])


@lru_cache(maxsize=1024)  # pure; parsing is slow and the same commands come back
def _segments(command: str) -> tuple[str, ...]:
    return tuple(s for s in (_normalise(x) for x in _split(command)) if s)


# --- filter sets ----------------------------------------------------------------

_NEUTRAL = re.compile(
    r"(?:cd|pushd|popd|export|set|source|\.|true|:|echo|printf|clear|sleep|wait|unset|alias|"
    r"ulimit|umask|mkdir|touch|trap|shopt|tee|head|tail|sort|uniq|wc|cut|tr|less|more|column|"
    r"cat|jq|sed|awk|xargs)\b"
)
_READ_ONLY_IN_PIPE = re.compile(r"(?:head|tail|tee|less|more|cat|sort|uniq|cut|tr|column)\b")


@dataclass(slots=True)
class FilterSet:
    """Compiled filters plus one-pass matchers for commands, tools and outputs."""

    filters: list[Filter]
    by_name: dict[str, Filter] = field(default_factory=dict)
    _command: re.Pattern[str] | None = None
    _tool: re.Pattern[str] | None = None
    _out_start: re.Pattern[str] | None = None
    _out_line: re.Pattern[str] | None = None
    _out_text: re.Pattern[str] | None = None
    _order: list[Filter] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Stable order: priority desc, then later-loaded first (user files win ties).
        indexed = list(enumerate(self.filters))
        indexed.sort(key=lambda it: (-it[1].priority, -it[0]))
        self._order = [f for _, f in indexed]
        self.by_name = {f.name: f for f in self.filters}
        self._command = self._compile([f.commands for f in self._order])
        self._tool = self._compile([f.tools for f in self._order])
        self._out_start = self._signatures("start")
        self._out_line = self._signatures("line", re.M)
        self._out_text = self._signatures("text", re.M)

    def _signatures(self, kind: str, flags: int = 0) -> re.Pattern[str] | None:
        groups = [tuple(p for p in f.outputs if _signature_kind(p) == kind) for f in self._order]
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


def _signature_kind(wrapped: str) -> str:
    """Kind of a wrapped pattern: start (``\\A``), line (``^``) or text (anywhere)."""
    body = wrapped[4:-1] if wrapped.startswith("(?i:") else wrapped[3:-1]
    if _top_level_alternation(body):
        return "text"
    if body.startswith("\\A"):
        return "start"
    if body.startswith("^"):
        return "line"
    return "text"


_CACHE: dict[tuple[str, bool, str], FilterSet] = {}
_LOCK = threading.Lock()


def filter_set(options: Mapping[str, Any] | None = None) -> FilterSet:
    """The compiled filters for these engine options (cached per process)."""
    options = options or {}
    user_dir = str(options.get("filters_dir") or "")
    trusted = bool(options.get("trust_project_filters"))
    project = str(options.get("project_dir") or "") if trusted else ""
    if trusted and not project:
        project = os.getcwd()
    key = (user_dir, trusted, project)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is None:
            dirs: list[tuple[Path, bool]] = [(BUILTIN_DIR, False)]
            if user_dir:
                path = Path(user_dir).expanduser()
                if not path.is_dir():
                    raise FilterError(f"filters_dir {user_dir!r} is not a directory")
                dirs.append((path, True))
            if trusted:
                dirs.append((Path(project) / ".ctxpress" / "filters", True))
            cached = FilterSet(load_filters(dirs))
            _CACHE[key] = cached
    return cached


def clear_cache() -> None:
    """Forget compiled filter sets (tests; after editing filter files)."""
    with _LOCK:
        _CACHE.clear()
