"""``toolfilter``: command-aware filtering of tool outputs (lossy, reversible).

For every tool output (``unit.kind == "tool_result"``, not frozen, not JSON)
a filter is chosen from the unit's shell command (``unit.command``), else
from the tool name, else from signatures in the output itself (pytest's
session header, ``diff --git``, ``file.c:12:5: error:`` ...).  Filters are
data (``workers/filters/*.json``, see :mod:`workers.engines._filters`).

Each line is classified in one linear pass:

- *kept*: every critical line of the gate (:func:`workers.fidelity.facts.critical_lines`:
  errors, warnings, failing tests, summaries, findings, diff headers, git
  status paths, the innermost frame), the filter's ``keep`` lines, and
  markers of earlier engines; a repeat of a kept line is dropped (the first
  copy stays visible);
- *dropped*: ``drop`` lines, repeats of ``collapse`` lines after the first,
  block and group lines beyond their head/tail, similar consecutive lines;
- the remaining lines are kept within the filter's head/tail budget (and
  around kept lines, ``context``) and dropped beyond it.

Every maximal run of dropped lines (blank lines inside a run join it) is
replaced in place by one marker line ``… 412 lines omitted (all PASSED)
<<cx:KEY>>`` and stashed under ``KEY = stash_key(run)``, so expanding the
output gives back the input exactly.  A run is only dropped when that saves
tokens; shorter runs stay visible.  A shown context line longer than
``LONG_LINE`` keeps its first ~240 characters followed by
``… N more characters of this line omitted <<cx:KEY>>`` (the cut never
splits a URL, path or number).  Fenced code blocks are kept whole (the gate
protects a fence as one span).  Plain file reads (``cat``, ``head``,
``git show REV:PATH``, read tools) and fetched documents are left alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from workers.core.offload import stash_key
from workers.core.tokens import TokenCounter
from workers.engines._filters import ANSI as _ANSI
from workers.engines._filters import LINE_CAP, Filter, Sample, filter_set
from workers.engines._prose import CRITICAL_CAP, gate_keys, make_marker
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.facts import critical_lines, protected_spans
from workers.markers import has_marker
from workers.markers.stash import KEY_PATTERN, offload_marker
from workers.messages.model import Unit

__all__ = ["FilterResult", "ToolFilterEngine", "filter_text", "sample_unit", "verify_filter"]

MIN_CHARS = 400  # outputs shorter than this are left alone
MIN_SAVED_TOKENS = 12  # a run is dropped only when it saves at least this much
LONG_LINE = 800  # a shown context line longer than this keeps only its start
LONG_LINE_KEEP = 240

# characters str.splitlines() breaks on besides \n (the gate splits lines that way)
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_DIGITS = re.compile(r"\d+")
_JSON_BLOCK = re.compile(r"\[\[(?:json-table|json-min):")
_KEY_BAD = re.compile(r"[<>\r\n\x00-\x1f{}]")

# line classes
NORMAL, KEEP, DROP, BLANK, SHOWN = 0, 1, 2, 3, 4


@dataclass(slots=True)
class FilterResult:
    text: str
    stash: dict[str, str]
    lines_omitted: int
    markers: int


@dataclass(frozen=True, slots=True, eq=False)
class _Label:
    text: str
    note: str | None = None
    rows: bool = False
    key: str = ""
    counts: tuple[tuple[str, re.Pattern[str]], ...] = ()


_REPEAT = _Label("repeated lines")
_SIMILAR = _Label("similar lines")
_PLAIN = _Label("")
_RULE_LABELS: dict[int, tuple[Filter, tuple[_Label, ...], tuple[_Label, ...]]] = {}


def _rule_labels(filt: Filter) -> tuple[tuple[_Label, ...], tuple[_Label, ...]]:
    """One label object per distinct (label, note) of the filter's drop and collapse rules."""
    cached = _RULE_LABELS.get(id(filt))
    if cached is None or cached[0] is not filt:
        shared: dict[tuple[str, str | None], _Label] = {}

        def label(rule: Any) -> _Label:
            return shared.setdefault((rule.label, rule.note), _Label(rule.label, rule.note))

        cached = (
            filt,
            tuple(label(r) for r in filt.drop_rules),
            tuple(label(r) for r in filt.collapse_rules),
        )
        if len(_RULE_LABELS) > 1024:
            _RULE_LABELS.clear()
        _RULE_LABELS[id(filt)] = cached
    return cached[1], cached[2]


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return False
    try:
        orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return False
    return True


def _shape(line: str) -> str:
    return _DIGITS.sub("0", line[:300])


def _clean_key(key: str) -> str:
    key = _KEY_BAD.sub("", key).strip()
    return key[:80] + ("…" if len(key) > 80 else "")


class _Plan:
    """Per-line classes and labels of one output under one filter."""

    def __init__(self, text: str, filt: Filter) -> None:
        self.filt = filt
        lines = text.split("\n")
        self.trailing = len(lines) > 1 and lines[-1] == ""
        if self.trailing:
            lines.pop()
        self.lines = lines
        n = len(lines)
        self.cls = bytearray(n)
        self.labels: list[_Label | None] = [None] * n
        self.region: list[int] = [-1] * n  # -1: global, else block/group id
        self.region_labels: dict[int, _Label] = {}
        self._block_limits: dict[int, tuple[int, int]] = {}
        self.total_rows = 0
        self.headers = 0  # kept lines that are not rows (headers, legends, markers)
        crit = {line for _, line in critical_lines(text, "tool_result")}
        self._classify(crit, "\x1b" in text, bool(_OTHER_BREAKS.search(text)), "\r" in text)
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
        for i, raw in enumerate(self.lines):
            m = raw if len(raw) <= LINE_CAP else raw[:LINE_CAP]
            if ansi and "\x1b" in m:
                m = _ANSI.sub("", m)
            if cr and m.endswith("\r"):
                m = m.rstrip("\r")
            if not m.strip():
                cls[i] = BLANK
                continue
            # regions: blocks (diff hunks, failure sections) and groups (grep files)
            if filt.block_start is not None:
                bidx = filt.block_start.find(m)
                if bidx >= 0:
                    block = filt.blocks[bidx]
                    block_id = next_region
                    next_region += 1
                    self.region_labels[block_id] = _Label(
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
                    self.region_labels[group_id] = _Label(
                        filt.group.label, filt.group.note, key=_clean_key(key)
                    )
                    self._block_limits[group_id] = (filt.group.head, 0)
                current = group_id if key is not None else -1
            region[i] = current
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
            )
            if critical or (keep_find is not None and keep_find(m) >= 0):
                dkey = raw.strip()
                if filt.dedupe and dkey in seen_kept:
                    cls[i] = DROP
                    labels[i] = _REPEAT
                else:
                    seen_kept.add(dkey)
                    cls[i] = KEEP
                prev_collapse = -1
                prev_shape = None
                continue
            if has_marker(m):
                cls[i] = KEEP
                self.headers += 1
                continue
            if drop_find is not None:
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
                    labels[i] = _SIMILAR
                    continue
                prev_shape = shape

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
                label = _Label("", rows=filt.rows)
            else:
                head, tail = self._block_limits[region]
                label = self.region_labels[region]
            if len(idxs) <= head + tail:
                continue
            for i in idxs[head : len(idxs) - tail]:
                cls[i] = DROP
                self.labels[i] = label
        self.total_rows = total_rows


def _counted(count: int, noun: str) -> str:
    """``1 passing test``, ``3 passing tests``: singular for one, label as written otherwise."""
    if count == 1 and noun.endswith("s") and not noun.endswith("ss"):
        noun = noun[:-1]
    return f"{count} {noun}"


def _note(plan: _Plan, a: int, b: int) -> str:
    labels: Counter[_Label] = Counter()
    for i in range(a, b):
        if plan.cls[i] == DROP:
            label = plan.labels[i]
            labels[label if label is not None else _PLAIN] += 1
    n = b - a
    lines = _counted(n, "lines")
    if len(labels) == 1:
        label = next(iter(labels))
        if label.note:
            values: dict[str, Any] = {
                "n": n,
                "total": plan.total_rows,
                "label": label.text,
                "key": label.key,
            }
            for name, pattern in label.counts:
                values[name] = sum(
                    1 for line in plan.lines[a:b] if pattern.search(_ANSI.sub("", line[:LINE_CAP]))
                )
            try:
                return label.note.format(**values)
            except (KeyError, IndexError, ValueError):
                pass
        if label.rows:
            return f"{n} of {plan.total_rows} rows omitted"
        if not label.text:
            return f"{lines} omitted"
        if label is _REPEAT:
            return f"{_counted(n, 'repeated lines')} omitted (shown above)"
        if label is _SIMILAR:
            return f"{_counted(n, 'similar lines')} omitted"
        return f"{lines} omitted (all {label.text})"
    parts = [
        _counted(count, label.text or ("rows" if label.rows else "other lines"))
        for label, count in labels.most_common(3)
    ]
    if len(labels) > 3:
        parts.append("…")
    return f"{lines} omitted ({', '.join(parts)})"


def filter_text(text: str, filt: Filter, tokens: TokenCounter) -> FilterResult | None:
    """Apply one filter to one output; None when nothing worth dropping was found."""
    plan = _Plan(text, filt)
    lines = plan.lines
    if len(lines) < filt.min_lines:
        return None
    plan.budget()
    cls = plan.cls
    n = len(lines)
    out: list[str] = []
    stash: dict[str, str] = {}
    omitted = markers = 0
    i = 0
    while i < n:
        if cls[i] != DROP:
            line = lines[i]
            if len(line) > LONG_LINE and cls[i] in (NORMAL, SHOWN):
                capped = _cap_line(line)
                if capped is not None:
                    line, key, rest = capped
                    stash[key] = rest
                    markers += 1
            out.append(line)
            i += 1
            continue
        # maximal run of DROP/BLANK lines starting at a DROP line
        j = i
        while j < n and cls[j] in (DROP, BLANK):
            j += 1
        end = j
        while end > i and cls[end - 1] == BLANK:
            end -= 1
        run = "\n".join(lines[i:end])
        marker, key = make_marker(_note(plan, i, end), run)
        if _worth(run, marker, tokens):
            out.append(marker)
            stash[key] = run
            omitted += end - i
            markers += 1
        else:
            out.extend(lines[i:end])
        out.extend(lines[end:j])
        i = j
    if not markers:
        return None
    new = "\n".join(out)
    if plan.trailing:
        new += "\n"
    return FilterResult(new, stash, omitted, markers)


def _cap_line(line: str) -> tuple[str, str, str] | None:
    """(shown prefix + marker, key, stashed rest) for an over-long context line.

    The cut falls after a space, ``;`` or ``,`` and never inside a protected
    span (URL, path, number, ...): each span must stay whole on one side.
    """
    # spans near the cut are enough: a span that crosses the cut lies in this prefix
    near = line[: LONG_LINE_KEEP + 4096]
    spans = protected_spans(near)
    window = line[LONG_LINE_KEEP // 2 : LONG_LINE_KEEP]
    for seps in (" ;,", " "):
        cut = LONG_LINE_KEEP
        sep = max(window.rfind(c) for c in seps)
        if sep > 0:
            cut = LONG_LINE_KEEP // 2 + sep + 1
        ellipsis = line.find("…", 0, cut)
        if ellipsis >= 0:
            cut = ellipsis  # the expand pattern starts at the first "…" of a line
        if cut < 20:
            return None
        head, tail = near[:cut], near[cut:]
        if all(token in head or token in tail for _, token in spans):
            break
    else:
        return None
    rest = line[cut:]
    key = stash_key(rest)
    return (
        head + offload_marker(f"{len(rest)} more characters of this line omitted", key),
        key,
        rest,
    )


def _worth(run: str, marker: str, tokens: TokenCounter) -> bool:
    if len(run) <= len(marker):
        return False
    if len(run) > 8 * len(marker) + 400:
        return True
    marker_tokens = tokens.count(marker)
    return tokens.count(run) >= marker_tokens + max(MIN_SAVED_TOKENS, marker_tokens)


class ToolFilterEngine(Engine):
    name = "toolfilter"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        filters = filter_set(ctx.options)
        texts: list[str] = []
        stash: dict[str, str] = {}
        hits: Counter[str] = Counter()
        omitted = markers = 0
        for unit in units:
            text = unit.text
            if (
                unit.frozen
                or unit.kind != "tool_result"
                or len(text) < MIN_CHARS
                or _JSON_BLOCK.search(text)
                or _is_json(text)
            ):
                texts.append(text)
                continue
            filt = filters.select(unit.command, unit.tool_name, text)
            if filt is None:
                texts.append(text)
                continue
            result = filter_text(text, filt, ctx.tokens)
            if result is None:
                texts.append(text)
                continue
            texts.append(result.text)
            stash.update(result.stash)
            hits[filt.name] += 1
            omitted += result.lines_omitted
            markers += result.markers
        details: dict[str, Any] = {}
        if hits:
            details = {
                "filters_hit": dict(sorted(hits.items())),
                "lines_omitted": omitted,
                "markers": markers,
            }
        return EngineOutput(texts=texts, details=details, stash=stash)


def sample_unit(sample: Sample) -> Unit:
    """The tool-result unit a filter's ``verify`` sample stands for (tool ``bash`` if unnamed)."""
    return Unit(
        uid="m1",
        index=1,
        role="tool",
        kind="tool_result",
        text=sample.input,
        path=("messages", 1, "content"),
        command=sample.command,
        tool_name=sample.tool or "bash",
    )


def verify_filter(
    filt: Filter, tokens: TokenCounter, options: dict[str, Any] | None = None
) -> list[str]:
    """Run a filter's inline ``verify`` samples through the engine; return the failures.

    A sample passes when the engine's output equals ``expected`` (offload keys
    normalised to ``<<cx:*>>``) and, if anything was dropped, this filter did it.
    """
    failures: list[str] = []
    engine = ToolFilterEngine()
    ctx = EngineContext(tokens=tokens, options=dict(options or {}))
    for i, sample in enumerate(filt.verify):
        out = engine.apply([sample_unit(sample)], ctx)
        got = KEY_PATTERN.sub("<<cx:*>>", out.texts[0])
        hits = out.details.get("filters_hit", {})
        if got != sample.expected:
            failures.append(f"{filt.origin}: verify[{i}]: output differs from 'expected'")
        elif out.texts[0] != sample.input and hits != {filt.name: 1}:
            failures.append(
                f"{filt.origin}: verify[{i}]: handled by {sorted(hits)}, not {filt.name}"
            )
    return failures
