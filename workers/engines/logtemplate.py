"""``logtemplate``: runs of log lines of one template collapse to first, summary, last (lossy).

Any tool output (whatever the command: the lines themselves say they are a
log, see :func:`workers.engines._logs.is_log_line`) is cut into runs of
consecutive log lines of one template (:func:`workers.engines._logs.mask`:
timestamps, durations, ids, paths, numbers... masked).  A run of at least
``MIN_RUN`` lines keeps its first and its last line visible; the lines in
between become one marker line::

    … 107 more lines like this (timestamps 10:00:02–10:04:58, attempt 2–108) <<cx:KEY>>

stashed under ``KEY`` so that expanding gives the input back exactly.  A later
run of a template that a visible line above already shows (the next retry cycle
after other lines; an error line: its shape too) needs no first line of its own:
from ``LEAD_RUN`` lines on, everything but its last line folds into one marker
above that line (``… 3 lines like the next (attempt 1/5–3/5; ...) <<cx:KEY>>``).
What the summary may say:

- *measures* (timestamps, durations, pids, attempt counters, sizes,
  addresses) are summarised as a range;
- *identifiers* (paths, URLs, ids, status codes, ports, ``file:line``,
  hostnames, other numbers, words that differ) are never a range: the run's
  distinct values are listed (at most ``MAX_DISTINCT`` per field, and the
  note stays one short line; a run that would need more is cut in two);
- an *error line* (an error or warning word, an HTTP 5xx) joins a run only
  when it differs from the run's lines in measures alone, or in identifiers
  the gate folds to the same shape (:func:`~workers.fidelity.facts.line_shape`:
  a warning per batch or row, ``batch 3 of 900: upstream slow``, whose
  values the summary lists): an error that identifies something else stays
  visible.  Lines the gate must see
  (findings, test summaries, diff headers...) are never folded.

Frozen units, file reads (unless most of the lines read are log lines: ``tail -n
200 logs/api.log``), units with ``[[`` markers or that other units point at are
left alone.  A line of another template between members of a run (a health
check among retries: no error line, none the gate counts, only measures vary
in it; or an error line whose shape a visible line above already shows: the
36th ``progress: 875/900 pushed, 3 failed`` between slow-upstream retries, the
first such line heading a run of its own), or an earlier engine's marker that
only counts lines (``… 3 lines omitted``), rides along in the run's stash when the next line joins the run
again (one at a time); the summary counts them (``among them 6 other lines``).
Other marker lines stay and end the run.  Pure and deterministic; one
pass over the lines (each compared with the current run only).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workers.core.ansi import ANSI
from workers.core.memo import Memo
from workers.core.offload import stash_key
from workers.core.tokens import TokenCounter
from workers.engines._jsonlogkeys import shared_keys_view
from workers.engines._logrepeats import fold_repeats
from workers.engines._logs import (
    MIN_LOG_LINES,
    Field,
    Masked,
    is_log_line,
    mask,
    reads_a_log,
    value_range,
)
from workers.engines._shell import is_file_read
from workers.engines._text import (
    PointedAt,
    expanded,
    gate_accepts,
    is_json_document,
    named_lines,
    nonzero,
    request_terms,
)
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.facts import SHAPED_KINDS, critical_lines, is_error_line, line_shape
from workers.fidelity.lossy import hidden_critical
from workers.markers import has_marker, marker_tokens
from workers.markers.stash import offload_marker
from workers.markers.structured_view import decode
from workers.messages.model import Unit

__all__ = ["FoldResult", "LogTemplateEngine", "fold_log"]

MIN_CHARS = 400  # outputs shorter than this are left alone
MIN_RUN = 4  # first + at least two folded lines + last
LEAD_RUN = 3  # a run whose template a line above shows: at least two folded lines + last
MAX_DISTINCT = 20  # distinct values of one identifying field listed in a summary
NOTE_MAX = 290  # the stash marker grammar allows 300 characters of note
NOTE_BASE = 30  # "N more lines like this (...)"
MIN_SAVED_TOKENS = 8
LONG_RUN_CHARS = 400  # runs this long always save more than their marker
MAX_WILDCARDS = 2  # words that may differ between lines of one template
CRITICAL_CAP = 600  # the gate compares stripped lines truncated to this length

_ANSI = ANSI
# an earlier engine's marker whose note says no more than how many lines it holds: it may
# ride in a run (a note that lists locations or values stays visible and ends the run)
_PLAIN_MARKER = re.compile(
    r"… \d+ (?:similar |repeated )?lines? omitted(?: \(shown above\)| \(\d+ repeated stack frames?\))?"
    r" <<cx:[0-9a-f]{16}>>"
)
# characters str.splitlines() breaks on besides \n: the gate would see other lines
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LEVEL_WORD = re.compile(
    r"(?i)^\W*(?:trace|debug|info|notice|warn|warning|error|err|fatal|crit|critical|severe|panic)"
    r"\W*$"
)
# a line's level word (the first one: ``WARN ... error`` is a warning)
_LEVEL_AT = re.compile(
    r"(?i)(?<![\w./-])(trace|debug|info|notice|warn|warning|error|err|fatal|crit|critical|alert"
    r"|emerg|severe|panic)(?![\w./-])"
)
_QUIET_LEVELS = frozenset({"trace", "debug", "info", "notice", "warn", "warning"})


def _error_level(template: str) -> bool:
    """Whether a line (its template) is an error, not a warning: its first level word is no
    quieter than ``error``; a line without one is an error (it is an error line)."""
    found = _LEVEL_AT.search(template, 0, 400)
    return found is None or found.group(1).lower() not in _QUIET_LEVELS


_NUMBER_SLOT = "\x00num\x00"
_NOTE_BAD = str.maketrans({"\n": " ", "…": "~", "<": "‹", ">": "›"})


@dataclass(slots=True)
class _Line:
    index: int
    masked: Masked
    tokens: list[str]
    error: bool
    key: str | None  # the line as the gate compares it, for lines the gate counts as error lines

    def shape(self) -> str | None:
        """The gate's shape of the line (computed when a run compares it: most never are)."""
        return None if self.key is None else line_shape(self.key)


@dataclass(slots=True)
class _Run:
    """Consecutive log lines of one template.

    Slots: field ``j`` of the template is slot ``j``; a wildcard word at token
    position ``p`` is slot ``-1 - p``.  ``rest`` holds the distinct values of the
    identifying slots over every member but the first (what a summary may list).
    """

    first: _Line
    tokens: list[str | None]  # the template's words; None: a wildcard (an identifying word)
    members: list[_Line] = field(default_factory=list)
    rest: dict[int, dict[str, None]] = field(default_factory=dict)
    rest_chars: dict[int, int] = field(default_factory=dict)
    # other lines between members: log lines (error lines only of a shape shown above), markers
    passengers: int = 0


class _Folder:
    def __init__(self, tokens: TokenCounter | None) -> None:
        self.tokens = tokens  # only the summary's worth needs it (not run membership)

    # -- run membership ---------------------------------------------------------

    def start(self, line: _Line) -> _Run:
        run = _Run(line, list(line.tokens))
        run.members.append(line)
        return run

    def accepts(self, run: _Run, line: _Line) -> bool:
        """Whether ``line`` joins ``run`` (then it is added)."""
        first = run.first
        pairs = list(zip(line.masked.fields, first.masked.fields, strict=False))
        wild: list[int] = []
        if line.error or first.error:
            # an error joins only lines that differ from it in measures alone; a warning
            # also lines that differ in identifiers the gate folds (``batch 3 of 900:
            # slow``: one fact), and the summary lists them as for any other line
            if not (line.error and first.error) or line.masked.template != first.masked.template:
                return False
            if len(pairs) != len(first.masked.fields) or any(
                f.measure != g.measure for f, g in pairs
            ):
                return False
            if line.key != first.key and line.shape() != first.shape():
                return False
            if all(f.measure or f.value == g.value for f, g in pairs):
                run.members.append(line)
                return True
            if line.key is None or first.key is None:
                return False  # only lines the gate compares by shape may differ so
            if _error_level(first.masked.template):
                # an error names what failed (the request, the client, the connection):
                # two errors that differ in more than measures are two facts, both in sight
                return False
        elif line.masked.template != first.masked.template:
            found = self._wildcards(run, line)
            if found is None:
                return False
            wild = found
        if len(line.masked.fields) != len(first.masked.fields) or any(
            f.kind != g.kind or f.measure != g.measure for f, g in pairs
        ):
            return False
        # the summary lists every distinct identifier of the folded lines in one short line
        added: dict[int, str] = {}
        for slot, value in self._identifiers(run, line, wild):
            seen = run.rest.get(slot)
            if seen is None or value not in seen:
                added[slot] = value
                if seen is not None and len(seen) >= MAX_DISTINCT:
                    return False
        if added:
            estimate = NOTE_BASE
            for slot in set(run.rest) | set(added):
                seen = run.rest.get(slot, {})
                values = [*seen, *([added[slot]] if slot in added else [])]
                if len(values) > 1 or values[0] != self._value(first, slot):
                    estimate += len(self._label(first, slot)) + 3 + run.rest_chars.get(slot, 0)
                    estimate += len(added[slot]) + 2 if slot in added else 0
            if estimate > NOTE_MAX:
                return False
        for p in wild:
            run.tokens[p] = None
            # the members so far had the first line's word there
            word = first.tokens[p]
            if len(run.members) > 1:
                run.rest[-1 - p] = {word: None}
                run.rest_chars[-1 - p] = len(word) + 2
        for slot, value in self._identifiers(run, line):
            seen = run.rest.setdefault(slot, {})
            if value not in seen:
                seen[value] = None
                run.rest_chars[slot] = run.rest_chars.get(slot, 0) + len(value) + 2
        run.members.append(line)
        return True

    def _wildcards(self, run: _Run, line: _Line) -> list[int] | None:
        """Token positions where ``line`` differs from the run in a plain word (or None)."""
        tokens = run.tokens
        if len(line.tokens) != len(tokens) or len(tokens) < 4:
            return None
        wild = sum(1 for t in tokens if t is None)
        new: list[int] = []
        for p, (mine, theirs) in enumerate(zip(line.tokens, tokens, strict=True)):
            if theirs is None:
                if "\x00" in mine:
                    return None
                continue
            if mine == theirs:
                continue
            if p == 0 or "\x00" in mine or "\x00" in theirs:
                return None
            if _LEVEL_WORD.match(mine) or _LEVEL_WORD.match(theirs):
                return None
            new.append(p)
            if wild + len(new) > MAX_WILDCARDS:
                return None
        return new

    @staticmethod
    def _identifiers(run: _Run, line: _Line, new_wild: Sequence[int] = ()) -> list[tuple[int, str]]:
        slots = [(j, f.value) for j, f in enumerate(line.masked.fields) if not f.measure]
        for p, t in enumerate(run.tokens):
            if t is None or p in new_wild:
                slots.append((-1 - p, line.tokens[p]))
        return slots

    @staticmethod
    def _value(line: _Line, slot: int) -> str:
        return line.masked.fields[slot].value if slot >= 0 else line.tokens[-1 - slot]

    @staticmethod
    def _label(line: _Line, slot: int) -> str:
        return line.masked.fields[slot].label if slot >= 0 else "words"

    # -- the summary ---------------------------------------------------------------

    def note(self, run: _Run, lead: bool = False) -> str | None:
        """``N more lines like this (identifiers listed; measures as ranges)``, or None.

        ``lead``: the run's first line goes too (a line above already shows its template),
        so the marker stands above the last line: ``N lines like the next (...)``.
        """
        members = run.members
        dropped = members[:-1] if lead else members[1:-1]
        first = run.first
        listed: list[str] = []
        ranges: list[str] = []
        for j, f in enumerate(first.masked.fields):
            values = [m.masked.fields[j].value for m in members]
            if all(v == values[0] for v in values):
                continue
            shown = [m.masked.fields[j].value for m in dropped]
            if f.measure:
                ranges.append(f"{f.label} {value_range(f.kind, shown)}")
            else:
                listed.append(f"{f.label} {', '.join(dict.fromkeys(shown))}")
        for p, t in enumerate(run.tokens):
            if t is None:
                listed.append(f"words {', '.join(dict.fromkeys(m.tokens[p] for m in dropped))}")
        count = len(dropped)
        lines_word = "line" if count == 1 else "lines"
        head = (
            f"{count} {lines_word} like the next ("
            if lead
            else f"{count} more {lines_word} like this ("
        )
        parts = listed
        if not parts and not ranges:
            parts = ["identical"]
        if run.passengers:
            others = run.passengers
            parts = [*parts, f"among them {others} other line{'' if others == 1 else 's'}"]
        # measures may be summarised: as many ranges as fit (timestamps first)
        for part in ranges:
            if len(head) + len("; ".join([*parts, part])) + 1 <= NOTE_MAX:
                parts = [*parts, part]
        note = (head + "; ".join(parts) + ")").translate(_NOTE_BAD)
        return note if len(note) <= NOTE_MAX else None

    def worth(self, stashed: str, marker: str) -> bool:
        if len(stashed) <= len(marker):
            return False
        if len(stashed) >= LONG_RUN_CHARS:
            return True
        assert self.tokens is not None
        return self.tokens.count(stashed) >= self.tokens.count(marker) + MIN_SAVED_TOKENS


@dataclass(slots=True)
class FoldResult:
    text: str
    stash: dict[str, str]
    runs: int
    lines_folded: int


def fold_log(
    text: str,
    tokens: TokenCounter,
    command: str | None = None,
    pinned: frozenset[int] = frozenset(),
) -> FoldResult | None:
    """Fold the template runs of one tool output; None when nothing was worth folding.

    ``pinned``: lines the latest request names (:func:`~workers.engines._text.named_lines`):
    they stay visible and end a run, as a line the gate must see does."""
    if len(text) < MIN_CHARS or _OTHER_BREAKS.search(text) or is_json_document(text):
        return None
    runs = _runs_of((text, command, pinned))
    if runs is None:
        return None
    lines = text.split("\n")
    folder = _Folder(tokens)
    out: list[str] = []
    stash: dict[str, str] = {}
    cursor = folded = count = 0
    # what visible lines above already show: the templates (and the gate's shapes) of lines
    # that stay; a later run of a template shown above needs no first line of its own
    shown: set[str] = set()
    for run in runs:
        members = run.members
        first, last = members[0], members[-1]
        lead = len(members) >= LEAD_RUN and _shown_above(first, shown)
        note = folder.note(run, lead=True) if lead else None
        if note is None:
            lead = False
            note = folder.note(run) if len(members) >= MIN_RUN else None
        if note is None:
            _show(shown, *members)
            continue
        a, b = first.index + (0 if lead else 1), last.index
        stashed = "\n".join(lines[a:b])
        key = stash_key(stashed)
        marker = offload_marker(note, key)
        if not folder.worth(stashed, marker):
            _show(shown, *members)
            continue
        _show(shown, last) if lead else _show(shown, first, last)
        out.extend(lines[cursor:a])
        out.append(marker)
        stash[key] = stashed
        cursor = b
        folded += len(members) - (1 if lead else 2) + run.passengers
        count += 1
    if not count:
        return None
    out.extend(lines[cursor:])
    new = "\n".join(out)
    if not gate_accepts(text, new, stash, command):
        return None
    return FoldResult(new, stash, count, folded)


def _shown_above(line: _Line, shown: set[str]) -> bool:
    """Whether a visible line above shows ``line``'s template (an error line: its shape too,
    the one the gate keeps in sight)."""
    if line.masked.template not in shown:
        return False
    shape = line.shape()
    return shape is None or shape in shown


def _show(shown: set[str], *members: _Line) -> None:
    for line in members:
        shown.add(line.masked.template)
        shape = line.shape()
        if shape is not None:
            shown.add(shape)


def _key_chars(key: object) -> int:
    """What a ``(text, command, pinned)`` key or a value of ``_runs_of`` counts for in its
    memo."""
    if isinstance(key, tuple) and key and isinstance(key[0], str):
        return len(key[0]) + 1
    return 1


# The runs are a pure function of the text and its command (what is stashed and how
# it is keyed is not: the stash key redacts the record's own secrets), and an output
# recurs: in several records, in every request that sends a conversation again.
def _runs(text_command: tuple[str, str | None, frozenset[int]]) -> tuple[_Run, ...] | None:
    """The runs of consecutive log lines of one template (None: too few log lines)."""
    text, command, pinned = text_command
    lines = text.split("\n")
    ansi = "\x1b" in text
    plain = [_ANSI.sub("", line) for line in lines] if ansi else lines
    # ``grep -n -A 30 ERROR app.log``: each line behind its number (``28:`` a match, ``29-``
    # its context; ``path:28:`` of several files); the number is where, not what
    numbered = _grep_numbered(plain, command)
    content = plain
    if numbered is not None:
        behind = [
            line if n is None else line[n[2] :] for line, n in zip(plain, numbered, strict=True)
        ]
        if _log_lines(plain) >= _log_lines(behind):
            numbered = None  # the lines read as log lines as they are: no number in front
        else:
            content = behind
    log_flags = [is_log_line(line) for line in content]
    if sum(log_flags) < MIN_LOG_LINES:
        return None
    kinds: dict[str, set[str]] = {}
    for kind, line in critical_lines(text, "tool_result", command):
        kinds.setdefault(line, set()).add(kind)
    markers = "<<cx:" in text
    folder = _Folder(None)
    runs: list[_Run] = []
    run: _Run | None = None
    # a log line of another template inside the current run (a progress line between
    # retries), or an earlier engine's marker line: it rides along when the next line
    # joins the run again (a marker inside a stash is expanded with it)
    pending: _Line | None = None
    riding_marker = False
    shown: set[str] = set()  # shapes (and texts) of lines that stay visible: runs' first lines
    # each log line as the gate compares it, and the last log line of each shape the gate
    # folds: that one never rides (the latest count shows)
    keys = [
        line.strip()[:CRITICAL_CAP] if flag else ""
        for line, flag in zip(lines, log_flags, strict=True)
    ]
    last: dict[str, int] = {}
    for i, key in enumerate(keys):
        crit = kinds.get(key) if key else None
        if crit is not None and crit <= SHAPED_KINDS:
            last[line_shape(key)] = i
    for i, line in enumerate(lines):
        if not line.strip():
            continue  # blank lines join the run around them
        info: _Line | None = None
        if markers and has_marker(line):
            if (
                run is not None
                and pending is None
                and not riding_marker
                and _PLAIN_MARKER.fullmatch(line.strip())
            ):
                riding_marker = True
                continue
        elif log_flags[i] and i not in pinned:
            key = keys[i]
            crit = kinds.get(key)
            if crit is None or crit <= SHAPED_KINDS:
                masked = mask(content[i])
                error = crit is not None or is_error_line(plain[i]) or _server_error(masked)
                if numbered and (where := numbered[i]) is not None:
                    # an error's line number is where it is: two errors at two lines are two
                    masked = _behind_number(plain[i], where, masked, not error)
                info = _Line(
                    i,
                    masked,
                    masked.template.split(" "),
                    error,
                    key if crit is not None else None,
                )
        if info is None:
            if run is not None:
                runs.append(run)
            run = pending = None
            riding_marker = False
            continue
        if run is not None and folder.accepts(run, info):
            if pending is not None or riding_marker:
                run.passengers += 1
                pending, riding_marker = None, False
            continue
        if (
            run is not None
            and pending is None
            and not riding_marker
            and _may_ride(info, shown, last)
        ):
            pending = info
            continue
        riding_marker = False
        if run is not None:
            runs.append(run)
            run = None
        if pending is not None:  # it did not ride: it may start the next run
            run = _start(folder, pending, shown)
            pending = None
            if folder.accepts(run, info):
                continue
            runs.append(run)
        run = _start(folder, info, shown)
    if run is not None:
        runs.append(run)
    return tuple(runs)


# a grep that numbers its lines: ``-n`` in a cluster of short options, or ``--line-number``
_GREP_COMMAND = re.compile(
    r"(?:^|[|;&(]\s*)(?:grep|egrep|zgrep|rg|git\s+grep)\s(?:[^|;&]*\s)?"
    r"(?:-[a-zA-Z]*n[a-zA-Z]*(?=\s|$)|--line-number\b)"
)
# one file's lines: ``28:`` a match, ``29-`` its context
_GREP_NUMBER = re.compile(r"(\d{1,9})[:-]")
# several files' matches: ``app.log:28:`` (a path holds no colon); their context lines are
# ``app.log-29-``, read behind the paths the matches name
_GREP_MATCH = re.compile(r"([^\s:]{1,400}):(\d{1,9}):")
_CONTEXT_NUMBER = re.compile(r"-(\d{1,9})-")
_MAX_PATH = 400  # characters of a path in front of a match (as _GREP_MATCH reads one)

# where a line's number is (start, end) and where its content starts, per line (None: none)
_Numbers = list[tuple[int, int, int] | None]


def _log_lines(lines: list[str]) -> int:
    return sum(1 for line in lines[:200] if is_log_line(line))


def _grep_numbered(lines: list[str], command: str | None) -> _Numbers | None:
    """Per line, where grep's line number is and where the line's content starts behind it,
    when the command is a grep that numbers its lines and most non-blank lines have one (of
    one file, else of several); else None."""
    if not command or _GREP_COMMAND.search(command) is None:
        return None
    total = sum(1 for line in lines if line and line != "--")
    if not total:
        return None
    one: _Numbers = []
    for line in lines:
        found = _GREP_NUMBER.match(line) if line and line != "--" else None
        one.append(None if found is None else (*found.span(1), found.end()))
    if 2 * sum(1 for n in one if n is not None) > total:
        return one
    paths: set[str] = set()
    several: _Numbers = []
    for line in lines:
        found = _GREP_MATCH.match(line)
        if found is not None:
            paths.add(found.group(1))
            several.append((*found.span(2), found.end()))
        else:
            several.append(None)
    for i, line in enumerate(lines):
        if several[i] is None and line and line != "--":
            cut = line.find("-")
            while 0 < cut <= _MAX_PATH:  # a known path the line starts with, then ``-N-``
                if line[:cut] in paths:
                    found = _CONTEXT_NUMBER.match(line, cut)
                    if found is not None:
                        several[i] = (*found.span(1), found.end())
                        break
                cut = line.find("-", cut + 1)
    return several if 2 * sum(1 for n in several if n is not None) > total else None


def _behind_number(line: str, where: tuple[int, int, int], masked: Masked, measure: bool) -> Masked:
    """``masked`` (of the content behind grep's number) for the whole line: the number a
    field (a measure when ``measure``: a quiet line's place in the file), the prefix before
    it as written."""
    a, b, start = where
    number = Field("num", "line numbers", line[a:b], measure)
    template = line[:a] + _NUMBER_SLOT + line[b:start] + masked.template
    return Masked(template, (number, *masked.fields), masked.status)


def _start(folder: _Folder, line: _Line, shown: set[str]) -> _Run:
    """A run that ``line`` heads: it stays visible (its shape is shown)."""
    shape = line.shape()
    if shape is not None and line.key is not None:
        shown.add(shape)
        shown.add(line.key)  # (the line as written: a later copy of it may ride)
    return folder.start(line)


def _may_ride(line: _Line, shown: set[str], last: dict[str, int]) -> bool:
    """Whether a line may be folded among a run of another template.

    Either no error line, none the gate counts, and nothing in it that identifies
    (the summary lists the run's identifiers, not a passenger's): only measures vary
    in it (``health check ok (3 ms)``); or an error line the gate compares by shape
    whose shape a visible line above already shows (the 36th ``progress: 875/900
    batches pushed, 3 failed`` between retries: one fact, shown by the first), unless it is
    the last line of that shape (the latest count stays in sight) and not a copy of a shown line.
    """
    if line.error:
        shape = line.shape()
        if shape is None:
            return False
        return shape in shown and (last.get(shape) != line.index or line.key in shown)
    return line.key is None and all(f.measure for f in line.masked.fields)


# Emptied with the content caches; the runs are only read after they are built.
_runs_of: Memo[tuple[str, str | None, frozenset[int]], tuple[_Run, ...] | None] = Memo(
    _runs, entries=128, chars=2_000_000, size=_key_chars
)


# a JSON log line's level that must stay in sight (bunyan's and pino's numbers: 40 warn and up)
_LOUD_LEVEL = re.compile(
    r'"(?:level|lvl|severity|log\.level|levelname)"\s*:\s*'
    r'(?:"(?i:warn|warning|err|error|fatal|crit|critical|panic|severe|alert|emerg)"|[4-6]0\b)'
)


def json_log_view(
    text: str, tokens: TokenCounter, command: str | None, pinned: frozenset[int]
) -> tuple[str, dict[str, str]] | None:
    """:func:`~workers.engines._jsonlogkeys.shared_keys_view` of a JSON log, where lines the
    gate counts, error and warning lines and lines the request names (``pinned``) stay whole,
    checked as the gate checks it."""
    if not text.startswith("{") and "\n{" not in text:
        return None  # no line starts a JSON object
    critical = critical_lines(text, "tool_result", command)
    keys = {line for _, line in critical}

    def stays(index: int, line: str) -> bool:
        return (
            index in pinned
            or line.strip()[:CRITICAL_CAP] in keys
            or _LOUD_LEVEL.search(line) is not None
            or is_error_line(line)
        )

    found = shared_keys_view(text, tokens, stays)
    if found is None:
        return None
    view, stash = found
    if decode(expanded(view, stash)) != text:
        return None
    if next(iter(hidden_critical(critical, [view])), None) is not None:
        return None
    return found


def _server_error(masked: Masked) -> bool:
    return masked.status is not None and masked.status >= 500


def _holds_written_block(text: str, inputs: Sequence[str], index: int) -> bool:
    """Whether ``text`` holds a ``[[...]]`` marker an earlier engine wrote (a JSON table, a
    dedup reference: folding lines inside it would break it); marker-like text the unit's
    input held already (a log quoting one) is plain text here."""
    if not has_marker(text.replace("<<cx:", "")):
        return False
    tokens = Counter(t for t in marker_tokens(text) if t.startswith("[["))
    if index < len(inputs):
        tokens.subtract(t for t in marker_tokens(inputs[index]) if t.startswith("[["))
    return any(n > 0 for n in tokens.values())


class LogTemplateEngine(Engine):
    name = "logtemplate"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        pointed = PointedAt(units)
        asked = request_terms(ctx.latest_user_text)  # words that name the lines holding them
        texts: list[str] = []
        stash: dict[str, str] = {}
        changed = folded = shared = 0
        markers = [0, 0]  # runs folded, repeats folded
        for index, unit in enumerate(units):
            text = unit.text
            if (
                unit.frozen
                or unit.kind != "tool_result"
                or len(text) < MIN_CHARS
                or ("[[" in text and _holds_written_block(text, ctx.input_texts, index))
                or unit in pointed
                or (is_file_read(unit) and not reads_a_log(text))
            ):
                texts.append(text)
                continue
            named = named_lines(text, asked)
            folded_text = text
            for fold in (fold_log, fold_repeats):  # runs of one template, then repeats
                found = fold(folded_text, ctx.tokens, unit.command, named)
                if found is not None:
                    stash.update(found.stash)
                    markers[fold is fold_repeats] += found.runs
                    folded += found.lines_folded
                    folded_text = found.text
                    named = named_lines(folded_text, asked)
            view = json_log_view(folded_text, ctx.tokens, unit.command, named)
            if view is not None:
                stash.update(view[1])
                shared += 1
            new = view[0] if view is not None else folded_text
            texts.append(new)
            changed += new is not text
        details: dict[str, Any] = nonzero(
            outputs=changed,
            runs_folded=markers[0],
            repeats_folded=markers[1],
            lines_folded=folded,
            json_shared_keys=shared,
        )
        return EngineOutput(texts=texts, details=details, stash=stash)
