"""The plan of one output under one filter: a class and a label for every line.

Pass 1 (:meth:`Plan._classify`) marks each line kept, dropped, blank, shown
or unclassified; pass 2 (:meth:`Plan.budget`) applies the head/tail and
context budgets to the unclassified lines.  Labels say why a line was
dropped; :mod:`.render` turns them into marker notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workers.engines._diff import modified_file_changes
from workers.engines._filters import ANSI, LINE_CAP, Filter, Rule
from workers.engines._filters.linear import Regex
from workers.engines._logs import mask
from workers.engines._prose import CRITICAL_CAP, gate_keys
from workers.engines._text import is_stack_frame
from workers.engines.toolfilter.blocks import (
    COUNTED,
    IN_PLACE,
    NO_STRUCTURE,
    QUIET,
    RECURSION,
    REPEATS,
    RUST_LOCATION,
    STACK_FRAMES,
    STACK_LINES,
    THREAD_LINES,
    THREADS,
    Structure,
    analyse,
    holds_thread_dump,
    structure_probes,
)
from workers.fidelity.facts import (
    RELOGGED,
    REQUEST_ID,
    SHAPED_KINDS,
    critical_lines,
    is_warning_shaped,
    line_shape,
)
from workers.markers import has_marker

__all__ = [
    "BLANK",
    "DROP",
    "KEEP",
    "NORMAL",
    "PLAIN",
    "REPEAT",
    "SHOWN",
    "SIMILAR",
    "Label",
    "Plan",
]

# characters str.splitlines() breaks on besides \n (the gate splits lines that way)
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_DIGITS = re.compile(r"\d+")
# a file's name on a line of its own (eslint's stylish header), and a finding placed by
# ``line:col`` only, under such a header: its file is the header above it
_FILE_HEADER = re.compile(r"^(?:/|[A-Za-z]:\\|\.{0,2}/)?[\w@.\\/ -]+\.[A-Za-z]{1,6}$")
_RELATIVE_FINDING = re.compile(r"^\s+\d+:\d+\s")
_KEY_BAD = re.compile(r"[<>\r\n\x00-\x1f{}]")
_EVENT_CAP = 600  # longer kept lines are compared as written only
_RUN_LEFT = 4  # logtemplate's MIN_RUN: a run this long of one event is folded there
_BY_SHAPE = "\x00shape"  # an event keyed by the gate's shape (a warning's)
_BESIDE = 8  # other lines in a row that a run of one warning's shape may hold

# line classes
NORMAL, KEEP, DROP, BLANK, SHOWN = 0, 1, 2, 3, 4


@dataclass(frozen=True, slots=True, eq=False)
class Label:
    text: str
    note: str | None = None
    rows: bool = False
    key: str = ""
    counts: tuple[tuple[str, Regex], ...] = ()
    item: bool = False  # a structure label (:mod:`.blocks`): the marker counts items
    quiet: bool = False  # ... whose lines belong to other items (not counted on their own)
    decoration: bool = False  # dropped lines that may go into the view from any run
    counted: bool = False  # ... only from runs too short to keep a marker of their own


REPEAT = Label("repeated lines")
SIMILAR = Label("similar lines")
PLAIN = Label("")
_RULE_LABELS: dict[int, tuple[Filter, tuple[Label, ...], tuple[Label, ...]]] = {}


def _rule_labels(filt: Filter) -> tuple[tuple[Label, ...], tuple[Label, ...]]:
    """One label object per distinct (label, note) of the filter's drop and collapse rules
    (the rules of one label agree on their flags: :mod:`workers.engines._filters.validate`)."""
    cached = _RULE_LABELS.get(id(filt))
    if cached is None or cached[0] is not filt:
        shared: dict[tuple[str, str | None], Label] = {}

        def label(rule: Rule) -> Label:
            return shared.setdefault(
                (rule.label, rule.note),
                Label(rule.label, rule.note, decoration=rule.decoration, counted=rule.counted),
            )

        cached = (
            filt,
            tuple(label(r) for r in filt.drop_rules),
            tuple(label(r) for r in filt.collapse_rules),
        )
        if len(_RULE_LABELS) > 1024:
            _RULE_LABELS.clear()
        _RULE_LABELS[id(filt)] = cached
    return cached[1], cached[2]


_STRUCTURE_LABELS: dict[str, Label] = {}


def structure_label(text: str) -> Label:
    """The one label object of a structure label text (``passing tests`` ...)."""
    label = _STRUCTURE_LABELS.get(text)
    if label is None:
        label = _STRUCTURE_LABELS.setdefault(
            text,
            Label(
                text,
                item=True,
                quiet=text in QUIET,
                decoration=text not in IN_PLACE and text not in COUNTED,
                counted=text in COUNTED,
            ),
        )
    return label


def _plain_lines(lines: list[str], ansi: bool, cr: bool) -> list[str]:
    out: list[str] = []
    for raw in lines:
        m = raw if len(raw) <= LINE_CAP else raw[:LINE_CAP]
        if ansi and "\x1b" in m:
            m = ANSI.sub("", m)
        if cr and m.endswith("\r"):
            m = m.rstrip("\r")
        out.append(m)
    return out


CONTEXT_REQUESTS = 8  # failing requests whose own lines stay beside their error line
CONTEXT_PER_REQUEST = 1  # ... at most this many lines each


def _shape(line: str) -> str:
    """A line with its digits as ``0``: lines of one shape are similar.  An HTTP status keeps
    its class (``-> 504`` is not like ``-> 200``: a load test's failures stay in sight)."""
    head = line[:300]
    shape = _DIGITS.sub("0", head)
    statuses = _STATUS.findall(head)
    return f"{shape}\x00{''.join(statuses)}" if statuses else shape


# an HTTP status: after an arrow, a ``status``/``code`` key or an access log's request; its
# first digit is its class
_STATUS = re.compile(
    r"(?:->|=>|\b(?:status|code)\b\"?[=: ]{1,3}|HTTP/\d(?:\.\d)?\"? )\s?([1-5])\d\d\b", re.I
)


_REPEATED_STACK = frozenset({STACK_FRAMES, STACK_LINES, RECURSION, THREADS, THREAD_LINES})


# the line number ``cat -n`` and an editor's view put before each line of a file they read
_READ_GUTTER = re.compile(r"^ *\d+\t")
# the line number a search (``grep -n``, ``rg -n``) puts before a match, after its file if any
# (not a date's year, nor a time's hour: ``2026-12-07 ...``, ``14:51:14 ERROR ...``)
_MATCH_POSITION = re.compile(
    r"^((?:(?!\d+:)[^\s:\"'{}\[\]<>=]+:)?)\d+[:-](?!\d\d[-:]\d\d)(?!\d\d-\d\d[ T])"
)


def _clean_key(key: str) -> str:
    key = _KEY_BAD.sub("", key).strip()
    return key[:80] + ("…" if len(key) > 80 else "")


class Plan:
    """Per-line classes and labels of one output under one filter."""

    def __init__(
        self,
        text: str,
        filt: Filter,
        pinned: frozenset[int] = frozenset(),
        command: str | None = None,
    ) -> None:
        """``pinned``: lines the latest request names (kept as a critical line is);
        ``command``: the shell command that printed ``text`` (it changes what the gate holds
        critical: ``git log --format='%h %an %s'``'s commit lines)."""
        self.filt = filt
        self.pinned = pinned
        lines = text.split("\n")
        self.trailing = len(lines) > 1 and lines[-1] == ""
        if self.trailing:
            lines.pop()
        self.lines = lines
        n = len(lines)
        self.cls = bytearray(n)
        self.labels: list[Label | None] = [None] * n
        self.region: list[int] = [-1] * n  # -1: global, else block/group id
        self.region_labels: dict[int, Label] = {}
        self._block_limits: dict[int, tuple[int, int]] = {}
        self.total_rows = 0
        self.headers = 0  # kept lines that are not rows (headers, legends, markers)
        self._relogged: dict[int, int] = {}  # a line said again behind a level -> where first
        # a numbered read (``cat -n``, an editor's view): each line behind its number
        self.numbered = n >= 3 and all(_READ_GUTTER.match(line) for line in lines[:3])
        pairs = critical_lines(text, "tool_result")
        if command is not None:
            # what the gate holds critical only under the command (``git log
            # --format='%h %an %s'``'s commit lines) stays too; what it holds critical only
            # without one (each line a search matched) stays as well
            pairs = pairs | critical_lines(text, "tool_result", command)
        crit = {line for _, line in pairs}
        # lines the gate wants as written (not one per shape): never folded as an event
        self._exact = {line for kind, line in pairs if kind not in SHAPED_KINDS}
        # error lines (the gate's shaped kind): a request's id on one names its other lines
        self._errors = {line for kind, line in pairs if kind in SHAPED_KINDS}
        ansi, cr, split = "\x1b" in text, "\r" in text, bool(_OTHER_BREAKS.search(text))

        if "@@ -" in text and "+++ " in text:
            # a modified file's added and removed lines are the diff: they stay in sight (its
            # context lines and a new or deleted file's body follow the filter's budget)
            self.pinned = pinned | modified_file_changes(_plain_lines(lines, ansi, cr))

        def critical(i: int) -> bool:
            return lines[i].strip()[:CRITICAL_CAP] in crit

        self.structure: Structure = NO_STRUCTURE
        probes = structure_probes(ANSI.sub("", text) if ansi else text)
        if any(probes) or holds_thread_dump(lines):
            # the probes hold for the lines analyse reads when those are the lines as written
            as_written = not (ansi or cr) and max(map(len, lines), default=0) <= LINE_CAP
            self.structure = analyse(
                _plain_lines(lines, ansi, cr),
                critical if not (ansi or split) else None,
                probes if as_written else None,
            )
        self._classify(crit, ansi, split, cr)
        if "```" in text or "~~~" in text:
            self._keep_fences()

    def _keep_fences(self) -> None:
        """Fenced code blocks are one protected span for the gate: keep them whole."""
        lines = self.lines
        n = len(lines)
        i = 0
        while i < n:
            if lines[i].startswith(("```", "~~~")):
                j = i + 1
                while j < n and lines[j].rstrip(" \t") not in ("```", "~~~"):
                    j += 1
                if j < n:
                    for k in range(i, j + 1):
                        if self.cls[k] != BLANK:
                            self.cls[k] = KEEP
                    i = j
            i += 1

    # -- pass 1: per-line classification ----------------------------------------

    def _classify(self, crit: set[str], ansi: bool, split: bool, cr: bool) -> None:
        filt = self.filt
        cls = self.cls
        labels = self.labels
        region = self.region
        seen_kept: set[str] = set()
        seen_events: dict[tuple[str, tuple[str, ...]], str] = {}
        drop_labels, collapse_labels = _rule_labels(filt)
        prev_collapse = -1
        prev_shape: str | None = None
        block_id = -1
        group_key: str | None = None
        group_id = -1
        next_region = 0
        # bound once: these run for every line
        header_find = filt.header.find if filt.header is not None else None
        keep_find = filt.keep.find if filt.keep is not None else None
        drop_find = filt.drop.find if filt.drop is not None else None
        collapse_find = filt.collapse.find if filt.collapse is not None else None
        similar = filt.similar
        s_keep = self.structure.keep
        s_drop = self.structure.drop
        s_repeats = {i for i, text in s_drop.items() if text == REPEATS}
        repeat_label = structure_label(REPEATS)
        # where each line was first said, when some line is logged behind a level (maven
        # lists a compiler's errors again behind ``[ERROR]``): such a line said above is a repeat
        said_at: dict[str, int] | None = (
            {} if any(line.startswith(("[ERROR] ", "[WARNING] ")) for line in self.lines) else None
        )
        said_key = ""
        file_scope = -1  # the line of the last file header: findings below it are that file's
        same_blocks = self._same_file_blocks()
        for i, raw in enumerate(self.lines):
            m = raw if len(raw) <= LINE_CAP else raw[:LINE_CAP]
            if ansi and "\x1b" in m:
                m = ANSI.sub("", m)
            if cr and m.endswith("\r"):
                m = m.rstrip("\r")
            if not m.strip():
                cls[i] = BLANK
                continue
            origin: int | None = None
            if said_at is not None:
                said_key = m.strip()
                if said_key[:1] == "[" and RELOGGED.match(said_key):
                    said_key = RELOGGED.sub("", said_key, count=1).strip()
                    origin = said_at.get(said_key)
                said_at.setdefault(said_key, i)
            # regions: blocks (diff hunks, failure sections) and groups (grep files)
            if filt.block_start is not None:
                bidx = filt.block_start.find(m)
                if bidx >= 0:
                    block = filt.blocks[bidx]
                    block_id = next_region
                    next_region += 1
                    self.region_labels[block_id] = Label(
                        block.label, block.note, counts=block.counts
                    )
                    self._block_limits[block_id] = (block.head, block.tail)
                elif filt.block_end is not None and filt.block_end.find(m) >= 0:
                    block_id = -1
            current = block_id
            if current < 0 and filt.group is not None:
                gm = filt.group.key.match(m)
                key = gm.group(1) if gm is not None else None
                if key is None:
                    group_key = None
                elif key != group_key:
                    group_key = key
                    group_id = next_region
                    next_region += 1
                    self.region_labels[group_id] = Label(
                        filt.group.label, filt.group.note, key=_clean_key(key)
                    )
                    self._block_limits[group_id] = (filt.group.head, 0)
                current = group_id if key is not None else -1
            region[i] = current
            if i in s_repeats:  # shown once above: the gate folds it to that line's shape
                cls[i] = DROP
                labels[i] = repeat_label
                continue
            if header_find is not None and header_find(m) >= 0:
                cls[i] = KEEP
                self.headers += 1
                continue
            # kept lines: critical for the gate, the filter's keep rules, markers
            critical = (
                (
                    any(map(crit.__contains__, gate_keys(raw)))
                    if split
                    else raw.strip()[:CRITICAL_CAP] in crit
                )
                if crit
                else False
            ) or i in self.pinned
            stext = s_drop.get(i)
            if critical and not (stext in _REPEATED_STACK and raw.strip() in seen_kept):
                # a critical line stays, unless it is a frame of a stack (an exception's, a
                # goroutine's) shown above whose line, as written, stays there (the gate
                # sees that copy)
                stext = None
            if stext is not None and (drop_find is None or drop_find(m) < 0):
                # the structure's drops win over the filter's keep rules (its own drops stay)
                cls[i] = DROP
                labels[i] = structure_label(stext)
                continue
            didx = -2  # not looked up yet
            if not critical and drop_find is not None and keep_find is not None:
                # a drop rule marked decoration is more particular than a keep rule:
                # maven's ``[ERROR] -> [Help 1]`` under its ``^\[ERROR\]`` keep rule
                didx = drop_find(m)
                if didx >= 0 and drop_labels[didx].decoration and keep_find(m) >= 0:
                    cls[i] = DROP
                    labels[i] = drop_labels[didx]
                    continue
            if critical or (keep_find is not None and keep_find(m) >= 0):
                dkey = raw.strip()
                if origin is not None:
                    dkey = said_key  # said above, then logged: the same line
                scoped = False
                if _FILE_HEADER.match(m):
                    file_scope = i
                elif (
                    file_scope >= 0 and file_scope not in same_blocks and _RELATIVE_FINDING.match(m)
                ):
                    # ``4:1  error  Unexpected var ...  no-var`` under another file's header
                    # is another finding, not a repeat of the one above
                    dkey = f"{file_scope}\x00{dkey}"
                    scoped = True
                if (
                    filt.dedupe
                    and dkey in seen_kept
                    and not m.startswith("@@ ")  # a hunk header is a place, never a repeat
                    and not self._heads_location(i)
                    and not (i in s_keep and is_stack_frame(m))
                    and not self._locates_headline(i)
                ):
                    # a user frame kept in a stack stays in each stack that has it: valgrind's
                    # ``by 0x1091F6: alloc_2 (leaks.c:76)`` under an indirect leak above and
                    # under a definite one here is where each block was allocated
                    cls[i] = DROP
                    labels[i] = REPEAT
                elif filt.dedupe and origin is not None:
                    cls[i] = DROP  # ... unless the budget drops the line that said it
                    labels[i] = REPEAT
                    self._relogged[i] = origin
                elif (similar or filt.events) and self._seen_event(i, m, dkey, seen_events):
                    cls[i] = DROP
                    labels[i] = SIMILAR
                else:
                    seen_kept.add(dkey)
                    if scoped:  # a whole file like this one below still repeats it
                        seen_kept.add(raw.strip())
                    cls[i] = KEEP
                prev_collapse = -1
                prev_shape = None
                continue
            if i in s_keep:
                cls[i] = KEEP
                prev_collapse = -1
                prev_shape = None
                continue
            if has_marker(m):
                cls[i] = KEEP
                self.headers += 1
                continue
            if drop_find is not None:
                if didx == -2:
                    didx = drop_find(m)
                if didx >= 0:
                    cls[i] = DROP
                    labels[i] = drop_labels[didx]
                    continue
            if collapse_find is not None:
                idx = collapse_find(m)
                if idx >= 0:
                    if idx == prev_collapse:
                        cls[i] = DROP
                        labels[i] = collapse_labels[idx]
                    else:
                        cls[i] = SHOWN
                        prev_collapse = idx
                    continue
            prev_collapse = -1
            if similar:
                shape = _shape(m)
                if shape == prev_shape:
                    cls[i] = DROP
                    labels[i] = SIMILAR
                    continue
                prev_shape = shape

    def _same_file_blocks(self) -> set[int]:
        """The file headers whose ``line:col`` findings are, all of them and in order, those of
        a file above: such a block still goes as ``… 16 repeated lines omitted (shown above)``
        (remark-lint on copies of one file); a file with only some findings like another's
        keeps them under its own name."""
        blocks: dict[int, list[str]] = {}
        header = -1
        for i, raw in enumerate(self.lines):
            line = raw if len(raw) <= LINE_CAP else raw[:LINE_CAP]
            if _FILE_HEADER.match(line):
                header = i
                blocks[header] = []
            elif header >= 0 and _RELATIVE_FINDING.match(line):
                blocks[header].append(line.strip())
        seen: set[tuple[str, ...]] = set()
        same: set[int] = set()
        for header, found in blocks.items():
            key = tuple(found)
            if key and key in seen:
                same.add(header)
            seen.add(key)
        return same

    def _locates_headline(self, i: int) -> bool:
        """Whether line ``i`` is the location right under a finding's headline (rustc's
        `` --> src/lib.rs:12:25`` under ``error[E0277]: the trait bound `Point: Hash` ...``):
        two findings at one place each keep their location, it is no repeat of the one above."""
        lines = self.lines
        return (
            i > 0
            and RUST_LOCATION.match(lines[i]) is not None
            and lines[i - 1].startswith(("error", "warning"))
        )

    def _heads_location(self, i: int) -> bool:
        """Whether line ``i`` is a finding's headline whose location is the next line
        (rustc's ``warning: unused variable`` over `` --> src/lib.rs:8:9``): the same
        headline at another place is another finding, not a repeat."""
        lines = self.lines
        return i + 1 < len(lines) and RUST_LOCATION.match(lines[i + 1]) is not None

    def _seen_event(
        self, i: int, line: str, key: str, seen: dict[tuple[str, tuple[str, ...]], str]
    ) -> bool:
        """Whether kept line ``i`` repeats the event of a line kept above, and may go.

        The event of a log line is its template with its identifying values
        (:func:`workers.engines._logs.mask`: paths, ids, status codes, ports,
        ``order 12``); lines of one event differ only in measures (timestamps,
        durations, attempt counters, pids, sizes).  A service log interleaves
        several events, so a repeat may stand anywhere below the first: it goes
        when the gate folds it to the same shape
        (:func:`~workers.fidelity.facts.line_shape`) and wants no copy of it as
        written.  A repeat in a run of ``_RUN_LEFT`` lines of its event is left
        to the ``logtemplate`` engine, which folds such a run better (first,
        summary with the ranges, last).  Records the event of a line that stays.
        """
        event = self._event(line, key)
        if event is None:
            return False
        shape = seen.get(event)
        if shape is None:
            seen[event] = line_shape(key)
            return self._seen_warning(i, key, event[0], seen)
        if shape != line_shape(key):
            return False
        if not self.filt.similar:
            return True  # a search's matches: the log folder reads no run of them
        lines = self.lines
        run = 1
        for step in (-1, 1):
            j = i + step
            while run < _RUN_LEFT and 0 <= j < len(lines):
                if self._event(lines[j], lines[j].strip()) != event:
                    break
                run += 1
                j += step
        return run < _RUN_LEFT

    def _seen_warning(
        self, i: int, key: str, template: str, seen: dict[tuple[str, tuple[str, ...]], str]
    ) -> bool:
        """Whether warning line ``i``, the first of its event, repeats the gate's shape of a
        warning kept above and may go: a warning per resource of a route (``GET /items/42 ->
        429``, one per item) is one fact, and the gate's shape folds its path's numbers.  In a
        run of :data:`_RUN_LEFT` warning lines of its shape (other lines between them aside)
        the log folder folds them better (it lists the batch numbers or paths); a
        warning among warnings of other shapes (interleaved routes) goes here."""
        if key not in self._errors or not is_warning_shaped(key):
            return False
        shape = line_shape(key)
        marker = (template, (_BY_SHAPE, shape))
        if marker not in seen:
            seen[marker] = shape
            return False
        return self._shape_run(i, shape) < _RUN_LEFT

    def _shape_run(self, i: int, shape: str) -> int:
        """How many warning lines in a row around line ``i`` (other lines between them aside,
        at most :data:`_BESIDE` in a row) have the gate's ``shape``, up to :data:`_RUN_LEFT`."""
        lines = self.lines
        run = 1
        for step in (-1, 1):
            j = i + step
            gap = 0
            while run < _RUN_LEFT and 0 <= j < len(lines) and gap <= _BESIDE:
                key = lines[j].strip()[:CRITICAL_CAP]
                if key in self._errors and is_warning_shaped(key):
                    if line_shape(key) != shape:
                        break  # a warning of another shape: interleaved, not a run
                    run += 1
                    gap = 0
                else:
                    gap += 1  # (an error, ``progress: 50/900 pushed, 2 failed``, rides along)
                j += step
        return run

    def _event(self, line: str, key: str) -> tuple[str, tuple[str, ...]] | None:
        if key in self._exact or len(line) > _EVENT_CAP or not line.strip():
            return None
        if self.filt.events and line[:1] != " ":
            # a search's match: where it is in the file (``12:``, ``app.log:12:``) is a
            # position, the file and the line after it the event
            line = _MATCH_POSITION.sub(r"\1", line, count=1)
        elif self.numbered:
            line = _READ_GUTTER.sub("", line, count=1)  # ``cat -n``'s line number: a position
        masked = mask(line)
        if not any(f.measure for f in masked.fields):
            return None  # nothing volatile: another value is another event
        return masked.template, tuple(f.value for f in masked.fields if not f.measure)

    # -- pass 2: budgets -----------------------------------------------------------

    def budget(self) -> None:
        filt = self.filt
        cls = self.cls
        n = len(cls)
        # context around kept lines
        if filt.context_before or filt.context_after:
            for i in range(n):
                if cls[i] != KEEP:
                    continue
                for j in range(max(0, i - filt.context_before), i):
                    if cls[j] == NORMAL:
                        cls[j] = SHOWN
                for j in range(i + 1, min(n, i + 1 + filt.context_after)):
                    if cls[j] == NORMAL:
                        cls[j] = SHOWN
        # unclassified lines per region
        per_region: dict[int, list[int]] = {}
        for i in range(n):
            if cls[i] == NORMAL:
                per_region.setdefault(self.region[i], []).append(i)
        total_rows = n - cls.count(BLANK) - self.headers
        for region, idxs in per_region.items():
            if region < 0:
                head, tail = filt.head, filt.tail
                label = Label("", rows=filt.rows)
            else:
                head, tail = self._block_limits[region]
                label = self.region_labels[region]
            if len(idxs) <= head + tail:
                continue
            for i in idxs[head : len(idxs) - tail]:
                cls[i] = DROP
                self.labels[i] = label
        for i, origin in self._relogged.items():
            if cls[origin] == DROP:  # not shown above after all: it stays
                cls[i] = KEEP
                self.labels[i] = None
        self._keep_request_context()
        self.total_rows = total_rows

    def _keep_request_context(self) -> None:
        """A failing request's own lines stay beside its error line: when an error line in
        sight names a request's id (``reqId``, ``request_id``, ``trace_id``: the gate's
        :data:`~workers.fidelity.facts.REQUEST_ID`), the first ``CONTEXT_PER_REQUEST``
        dropped lines with that id stay too (pino's ``incoming request`` line holds the url
        that failed), for ``CONTEXT_REQUESTS`` requests at most (set 31: 8 requests of one
        line each kept the urls 12 requests of two lines kept, for 1.2 points less)."""
        if not self._errors:
            return
        cls, lines = self.cls, self.lines
        wanted: dict[str, int] = {}  # id value -> lines it may still keep
        dropped: dict[str, list[int]] = {}
        for i, line in enumerate(lines):
            head = line[:CRITICAL_CAP]
            if "d" not in head and "D" not in head:
                continue
            match = REQUEST_ID.search(head)
            if match is None:
                continue
            value = match.group(0)[len(match.group(1)) :]
            if cls[i] == DROP:
                dropped.setdefault(value, []).append(i)
            elif (
                value not in wanted
                and len(wanted) < CONTEXT_REQUESTS
                and line.strip()[:CRITICAL_CAP] in self._errors
            ):
                wanted[value] = CONTEXT_PER_REQUEST
        for value, room in wanted.items():
            for i in dropped.get(value, ())[:room]:
                cls[i] = KEEP
                self.labels[i] = None
