"""``structured``: shorter views of JSON, YAML, XML and Markdown documents.

A non-frozen message whose whole text is one document -- JSON (or a
whole-text ``[[json-min:v1 ...]]`` block, viewed from its payload), XML/HTML,
YAML, or Markdown (prose messages, or tool output with a Markdown table or
HTML comments) -- is offered these strategies, in this order, each kept only
when it lowers the token count (or shortens the text at equal tokens,
counted with ``ctx.tokens``):

==========  ==========================================================================
format      strategies (lossy ones in brackets)
==========  ==========================================================================
JSON        minify, [drop_nulls], [flatten], [tabular], [round_numbers],
            collapse_whitespace (inside strings), dedup_values_with_refs, [strip_quotes]
XML/HTML    collapse_whitespace (inside text), minify (between tags), [strip_html_comments]
YAML        [drop_nulls], [round_numbers], collapse_whitespace (after ``key:``),
            [strip_quotes]
Markdown    collapse_whitespace (prose only), compact_tables, [strip_html_comments]
==========  ==========================================================================

The lossy ones run only when ``ctx.allow_lossy_structure`` is true (the
record's ``allow_lossy_structure`` or the ``CTXPRESS_ALLOW_LOSSY_STRUCTURE``
setting).  Numbers keep their exact lexemes (``1.50``, ``1e5``, integers
above 2**64) unless ``round_numbers`` rounds them.  JSON is written compact;
when that would hide a critical line of the gate (``"level": "error",`` of a
pretty-printed document), it is written with ``", "`` and ``": "`` so those
lines stay readable as they were, or not at all.  For a json-min block the
critical lines of the JSON it encodes count too.

The message becomes the view, the header line ``<<cx:view>>`` and a stash
marker whose entry is the original message::

    {"_refs":{"$R1":"long value"},"_data":[{"msg":"$R1"},...]}
    <<cx:view>>… structured view (minify, dedup_values_with_refs) of a 12,345-char JSON document; original <<cx:KEY>>

``expand`` first puts the original in place of the marker (``VIEW\n<<cx:view>>
ORIGINAL``); :func:`decode`, which expand runs next, returns what follows the
header.  So expand gives back the input exactly, and :func:`decode` is a
passthrough for every text without the header.  Why a header at all: a view
is a rewrite of the whole text, not a span cut out of it, so replacing the
marker alone cannot give the input back.  The header holds ``<<cx:``: a
change to an input that already has one is kept only when expand gives the
input back (the runner checks), so :func:`decode` never mistakes input for a view.

``dedup_values_with_refs`` writes the ``{"_refs": ..., "_data": ...}``
envelope: every string value of at least :data:`MIN_REF_CHARS` characters
that occurs often enough to pay for itself becomes an alias ``$R1``, ``$R2``...;
when any string (key or value) of the document already starts with ``$R``,
the prefix escalates to ``$$R``, ``$$$R``... so an alias can never be
confused with data.  :func:`decode_refs` reverses it (``decode_refs(
encode_refs(x)) == x`` for every JSON value; no recursion at any depth).

Left alone: frozen messages, file reads, messages that a dedup back-reference
or a read-lifecycle marker points at, texts holding a stash marker already,
texts shorter than :data:`MIN_CHARS` or longer than :data:`MAX_CHARS`, and
views that would hide a critical line.  Details: ``strategies`` (how many
messages used each) and ``documents``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from workers.engines._shell import is_file_read
from workers.engines._text import PointedAt, expanded, stash_marker
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.facts import critical_lines
from workers.fidelity.lossy import check_lossy, hidden_critical
from workers.markers.json_min import decode as decode_min
from workers.markers.refs import MIN_REF_CHARS, decode_refs, encode_refs, map_strings
from workers.markers.stash import LITERAL as STASH_LITERAL
from workers.markers.structured_view import HEADER_LINE, VIEW_HEADER, decode
from workers.messages.model import Unit

__all__ = [
    "LOSSY",
    "MAX_CHARS",
    "MIN_CHARS",
    "STRATEGIES",
    "VIEW_HEADER",
    "StructuredEngine",
    "decode",
    "decode_refs",
    "encode_refs",
    "structured_view",
]

MIN_CHARS = 400
MAX_CHARS = 4 * 1024 * 1024
MAX_DEPTH = 200
STRATEGIES: tuple[str, ...] = (
    "minify",
    "drop_nulls",
    "flatten",
    "tabular",
    "round_numbers",
    "collapse_whitespace",
    "dedup_values_with_refs",
    "strip_quotes",
    "compact_tables",
    "strip_html_comments",
)
LOSSY = frozenset(
    {"drop_nulls", "flatten", "tabular", "strip_quotes", "round_numbers", "strip_html_comments"}
)
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_MIN_BLOCK = re.compile(
    r'\A\s*\[\[json-min:v1(?: [a-z]{1,12}=(?:"[^"\\\n]{0,40}"|[^\s\]"]{1,40})){0,12}\]\]'
    r"(.*)\[\[/json-min\]\]\s*\Z",
    re.S,
)


# -- JSON values with exact number lexemes ----------------------------------------------


class _Num(str):
    """A JSON number kept as its lexeme."""

    __slots__ = ()


class _Duplicate(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Duplicate("duplicate key")
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(text: str) -> tuple[bool, Any]:
    try:
        value = json.loads(
            text,
            parse_float=_Num,
            parse_int=_Num,
            parse_constant=_no_constant,
            object_pairs_hook=_pairs,
        )
    except (ValueError, RecursionError):
        return False, None
    return True, value


def _default(obj: Any) -> Any:
    if isinstance(obj, _Num):
        return orjson.Fragment(str(obj))
    raise TypeError(type(obj).__name__)


_SPACED = re.compile(rf"({_STRING})|([:,])")


def _dumps(value: Any, spaced: bool = False) -> str | None:
    try:
        text = orjson.dumps(value, default=_default, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except (orjson.JSONEncodeError, TypeError):
        return None
    out = text.decode()
    if spaced:
        out = _SPACED.sub(lambda m: m.group(1) or m.group(2) + " ", out)
    return out


def _depth_ok(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return True


def _rebuild(value: Any, depth: int, fn: Callable[[Any, int], Any]) -> Any:
    """Post-order rebuild: ``fn(container_with_rebuilt_children, depth)``."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return fn({k: _rebuild(v, depth + 1, fn) for k, v in value.items()}, depth)
    if isinstance(value, list):
        return fn([_rebuild(v, depth + 1, fn) for v in value], depth)
    return fn(value, depth)


def _drop_nulls(value: Any) -> Any:
    def fn(node: Any, depth: int) -> Any:
        if isinstance(node, dict):
            return {k: v for k, v in node.items() if v is not None}
        return node

    return _rebuild(value, 0, fn)


def _flatten(value: Any) -> Any:
    def fn(node: Any, depth: int) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for k, v in node.items():
            if isinstance(v, dict) and v and "." not in k:
                for k2, v2 in v.items():
                    out.setdefault(f"{k}.{k2}", v2)
            else:
                out.setdefault(k, v)
        return out

    return _rebuild(value, 0, fn)


def _tabular(value: Any) -> Any:
    def fn(node: Any, depth: int) -> Any:
        if not isinstance(node, list) or len(node) < 3:
            return node
        if not all(isinstance(v, dict) for v in node):
            return node
        columns: dict[str, None] = {}
        for row in node:
            columns.update(dict.fromkeys(row))
        if not columns or len(columns) > 64:
            return node
        cols = list(columns)
        return {"_columns": cols, "_rows": [[row.get(c) for c in cols] for row in node]}

    return _rebuild(value, 0, fn)


_LONG_DECIMALS = re.compile(r"^(-?)(\d+)\.(\d{5,})(?:[eE][+-]?\d+)?$")


def _round_lexeme(lexeme: str) -> str:
    if not _LONG_DECIMALS.match(lexeme):
        return lexeme
    number = float(lexeme)
    if not math.isfinite(number):
        return lexeme
    rounded = f"{number:.4g}" if abs(number) < 1e-3 else f"{round(number, 4)!r}"
    return rounded if len(rounded) < len(lexeme) else lexeme


def _round_numbers(value: Any) -> Any:
    def fn(node: Any, depth: int) -> Any:
        if isinstance(node, _Num):
            return _Num(_round_lexeme(str(node)))
        return node

    return _rebuild(value, 0, fn)


_SPACE_RUN = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")


def _collapse_strings(value: Any) -> Any:
    return map_strings(value, lambda s: _SPACE_RUN.sub(" ", s) if "  " in s or "\t" in s else s)


_KEY = re.compile(rf'"([A-Za-z_][A-Za-z0-9_]{{0,63}})":|({_STRING})')


def _strip_key_quotes(text: str) -> str:
    return _KEY.sub(lambda m: f"{m.group(1)}:" if m.group(1) else m.group(2), text)


# -- text strategies ---------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.M)
_TABLE_SEP = re.compile(
    r"^[ \t]*+(?:\|[ \t]*+)?:?-{3,}:?[ \t]*+(?:\|[ \t]*+:?-{3,}:?[ \t]*+)*+(?:\|[ \t]*+)?$"
)
_TABLE_SEP_ANY = re.compile(r"^[ \t]*\|[ \t]*:?-{3,}:?[ \t]*\|", re.M)
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_XML_GAP = re.compile(r">\s+<")
_XML_TEXT_RUN = re.compile(r"(?<=[^\s<>])[ \t\r\n]{2,}(?=[^\s<>])")
_YAML_LINE = re.compile(r"^\s*(?:- |[\w.\-\"'/$]{1,100}:(?:\s|$)|#|---|\.\.\.)")
_YAML_NULL = re.compile(r"^([ \t]*)[^\s:#\-][^:#\n]{0,100}:(?:[ \t]*+(null|Null|NULL|~))?[ \t]*+$")
_YAML_QUOTED = re.compile(
    r"^(\s*(?:- )?[\w.\-/]{1,100}:[ \t]+)([\"'])([A-Za-z_/][\w ./@+-]{0,200})\2[ \t]*$"
)
_YAML_SPECIAL = re.compile(
    r"(?i)^(?:y|n|yes|no|true|false|on|off|null|~|[-+]?\.?\d[\d._eE+-]*|\.inf|\.nan)$"
)
_YAML_NUMBER = re.compile(r"(:[ \t]+)(-?\d+\.\d{5,})(?=[ \t]*$)", re.M)
_YAML_GAP = re.compile(r"^([ \t]*(?:- )?[\w.\-/\"']{1,100}:)[ \t]{2,}(?=\S)", re.M)


def _code_lines(lines: list[str]) -> list[bool]:
    """Which lines are inside fenced or indented code."""
    inside = False
    flags: list[bool] = []
    for line in lines:
        if _FENCE.match(line):
            flags.append(True)
            inside = not inside
            continue
        flags.append(inside or line.startswith(("    ", "\t")))
    return flags


def _compact_tables(text: str, critical: set[str]) -> str:
    lines = text.split("\n")
    code = _code_lines(lines)
    # a row belongs to a table when a delimiter row is at most 40 rows above it
    # (or right below it: the header); one pass, no window rescans
    last_sep = -(10**9)
    near: list[bool] = []
    for line in lines:
        if line.lstrip().startswith(("|", ":", "-")) and _TABLE_SEP.match(line):
            last_sep = len(near)
        near.append(len(near) - last_sep <= 40)
    changed = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if code[i] or not stripped.startswith("|") or stripped in critical:
            continue
        header = i + 1 < len(lines) and bool(_TABLE_SEP.match(lines[i + 1]))
        if not (near[i] or header):
            continue
        if _TABLE_SEP.match(line):
            cells = [c.strip() for c in _CELL_SPLIT.split(stripped.strip("|"))]
            new = (
                "|"
                + "|".join(
                    (":" if c.startswith(":") else "") + "---" + (":" if c.endswith(":") else "")
                    for c in cells
                )
                + "|"
            )
        else:
            inner = stripped[1:-1] if stripped.endswith("|") and len(stripped) > 1 else stripped[1:]
            new = "|" + "|".join(c.strip() for c in _CELL_SPLIT.split(inner)) + "|"
        if new != line:
            lines[i] = new
            changed = True
    return "\n".join(lines) if changed else text


def _collapse_markdown(text: str, critical: set[str]) -> str:
    lines = text.split("\n")
    code = _code_lines(lines)
    changed = False
    for i, line in enumerate(lines):
        if code[i] or "  " not in line.strip() or line.strip() in critical:
            continue
        if line.lstrip().startswith("|"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        new = line[:indent] + _SPACE_RUN.sub(" ", line[indent:])
        if new != line:
            lines[i] = new
            changed = True
    out = "\n".join(lines) if changed else text
    return re.sub(r"\n{4,}", "\n\n\n", out) if "\n\n\n\n" in out else out


def _strip_comments(text: str) -> str:
    if "<!--" not in text:
        return text
    if "```" in text or "~~~" in text:
        lines = text.split("\n")
        if any(_code_lines(lines)):
            return text  # comments inside code blocks are code
    pieces: list[str] = []
    cursor = 0
    start = text.find("<!--")
    while start >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        pieces.append(text[cursor:start])
        cursor = end + 3
        start = text.find("<!--", cursor)
    pieces.append(text[cursor:])
    return "".join(pieces)


def _yaml_drop_nulls(text: str) -> str:
    lines = text.split("\n")
    keep: list[str] = []
    for i, line in enumerate(lines):
        m = _YAML_NULL.match(line)
        if m is not None:
            if m.group(2):
                continue  # explicit null
            indent = len(m.group(1))
            nxt = next((ln for ln in lines[i + 1 : i + 50] if ln.strip()), "")
            nxt_indent = len(nxt) - len(nxt.lstrip())
            if nxt_indent < indent or (nxt_indent == indent and not nxt.lstrip().startswith("-")):
                continue  # empty value, no children: null
        keep.append(line)
    return "\n".join(keep)


def _yaml_strip_quotes(text: str) -> str:
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _YAML_QUOTED.match(line)
        if m is None:
            continue
        value = m.group(3)
        if _YAML_SPECIAL.match(value) or ": " in value or " #" in value or value != value.strip():
            continue
        lines[i] = m.group(1) + value
    return "\n".join(lines)


def _looks_yaml(text: str) -> bool:
    lines = [ln for ln in text.split("\n")[:400] if ln.strip()]
    if len(lines) < 3 or lines[0].lstrip().startswith(("{", "[", "<", "|")):
        return False
    hits = sum(1 for ln in lines if _YAML_LINE.match(ln))
    return hits >= 3 and hits >= 0.8 * len(lines) and any(":" in ln for ln in lines)


def _kind_of(text: str) -> str | None:
    stripped = text.strip()
    if not stripped:
        return None
    if stripped.startswith("[[json-min:v1") and _MIN_BLOCK.match(text):
        return "json-min"
    if stripped[0] in "[{" and stripped[-1] in "]}":
        return "json"
    if stripped[0] == "<" and stripped[-1] == ">":
        return "xml"
    if _looks_yaml(text):
        return "yaml"
    if "|" in text or "<!--" in text or "  " in text:
        return "markdown"
    return None


# -- choosing strategies -------------------------------------------------------------------


class _Chooser:
    """Keeps each strategy whose view has fewer tokens (or equal tokens, shorter)."""

    def __init__(self, text: str, ctx: EngineContext) -> None:
        self.ctx = ctx
        self.view = text
        self.tokens = ctx.tokens.count(text)
        self.applied: list[str] = []
        self.history: list[tuple[str, int, list[str]]] = []

    def allowed(self, name: str) -> bool:
        return name not in LOSSY or self.ctx.allow_lossy_structure

    def offer(self, name: str, view: str | None) -> bool:
        if view is None or view == self.view:
            return False
        tokens = self.ctx.tokens.count(view)
        if tokens < self.tokens or (tokens == self.tokens and len(view) < len(self.view)):
            self.history.append((self.view, self.tokens, list(self.applied)))
            self.view, self.tokens = view, tokens
            self.applied.append(name)
            return True
        return False

    def undo(self) -> bool:
        if not self.history:
            return False
        self.view, self.tokens, self.applied = self.history.pop()
        return True


def _json_views(chooser: _Chooser, value: Any, spaced: bool) -> None:
    base = _dumps(value, spaced)
    if base is None:
        return
    chooser.offer("minify", base)
    current = value
    for name, fn in (
        ("drop_nulls", _drop_nulls),
        ("flatten", _flatten),
        ("tabular", _tabular),
        ("round_numbers", _round_numbers),
        ("collapse_whitespace", _collapse_strings),
    ):
        if not chooser.allowed(name):
            continue
        candidate = fn(current)
        if chooser.offer(name, _dumps(candidate, spaced)):
            current = candidate
    envelope = encode_refs(current)
    if envelope["_refs"]:
        chooser.offer("dedup_values_with_refs", _dumps(envelope, spaced))
    if chooser.allowed("strip_quotes") and '":' in chooser.view:
        chooser.offer("strip_quotes", _strip_key_quotes(chooser.view))


def _xml_views(chooser: _Chooser) -> None:
    chooser.offer("collapse_whitespace", _XML_TEXT_RUN.sub(" ", chooser.view))
    chooser.offer("minify", _XML_GAP.sub("><", chooser.view))
    if chooser.allowed("strip_html_comments"):
        chooser.offer("strip_html_comments", _strip_comments(chooser.view))


def _yaml_views(chooser: _Chooser) -> None:
    if chooser.allowed("drop_nulls"):
        chooser.offer("drop_nulls", _yaml_drop_nulls(chooser.view))
    if chooser.allowed("round_numbers"):
        chooser.offer(
            "round_numbers",
            _YAML_NUMBER.sub(lambda m: m.group(1) + _round_lexeme(m.group(2)), chooser.view),
        )
    chooser.offer("collapse_whitespace", _YAML_GAP.sub(r"\1 ", chooser.view))
    if chooser.allowed("strip_quotes"):
        chooser.offer("strip_quotes", _yaml_strip_quotes(chooser.view))


def _markdown_views(chooser: _Chooser, critical: set[str], prose: bool) -> None:
    if prose:
        chooser.offer("collapse_whitespace", _collapse_markdown(chooser.view, critical))
    chooser.offer("compact_tables", _compact_tables(chooser.view, critical))
    if chooser.allowed("strip_html_comments"):
        chooser.offer("strip_html_comments", _strip_comments(chooser.view))


def structured_view(
    text: str, ctx: EngineContext, kind: str = "tool_result", command: str | None = None
) -> tuple[str, dict[str, str], list[str]] | None:
    """``(new_text, stash, strategies)`` for one message, or None."""
    if len(text) < MIN_CHARS or len(text) > MAX_CHARS or STASH_LITERAL in text:
        return None
    doc = _kind_of(text)
    if doc is None:
        return None
    label = {"json": "JSON", "json-min": "JSON", "xml": "XML", "yaml": "YAML"}.get(doc, "Markdown")
    if doc in ("json", "json-min"):
        payload = text
        decoded: str | None = None
        if doc == "json-min":
            m = _MIN_BLOCK.match(text)
            assert m is not None
            payload = m.group(1)
            decoded = _decode_min(text)
            if decoded is None:
                return None
        if not ctx.allow_lossy_structure and _compact(payload) and not _repeats(payload):
            return None  # already compact and nothing repeats: no strategy can pay
        ok, value = _parse_json(payload)
        if not ok or not _depth_ok(value):
            return None
        # compact first; ``, ``/``: `` separators keep pretty-printed critical lines readable
        for spaced in (False, True):
            chooser = _Chooser(text, ctx)
            _json_views(chooser, value, spaced)
            result = _finish(text, chooser, ctx, kind, label, command, decoded)
            if result is not None:
                return result
        return None
    chooser = _Chooser(text, ctx)
    if doc == "xml":
        _xml_views(chooser)
    elif doc == "yaml":
        _yaml_views(chooser)
    else:
        if kind != "text" and not _TABLE_SEP_ANY.search(text) and "<!--" not in text:
            return None  # column-aligned tool output is not Markdown
        critical = {line for _, line in critical_lines(text, kind, command)}
        _markdown_views(chooser, critical, prose=kind == "text")
    return _finish(text, chooser, ctx, kind, label, command)


_STRING_RE = re.compile(_STRING)
_OUTSIDE_WS = re.compile(rf"{_STRING}|([ \t\r\n]+)")


def _compact(payload: str) -> bool:
    """Whether a JSON text has (almost) no whitespace between tokens."""
    runs = sum(1 for m in _OUTSIDE_WS.finditer(payload) if m.group(1))
    return runs * 50 < len(payload) // 100 + 1


def _repeats(payload: str) -> bool:
    """Whether some string of at least MIN_REF_CHARS characters repeats enough to alias."""
    counts = Counter(s for s in _STRING_RE.findall(payload) if len(s) >= MIN_REF_CHARS + 2)
    return sum((c - 1) * (len(s) - 6) for s, c in counts.items() if c > 1) >= 400


def _decode_min(text: str) -> str | None:
    try:
        return decode_min(text)
    except ValueError:
        return None


def _finish(
    text: str,
    chooser: _Chooser,
    ctx: EngineContext,
    kind: str,
    label: str,
    command: str | None,
    decoded: str | None = None,
) -> tuple[str, dict[str, str], list[str]] | None:
    """View plus marker, dropping the last strategies until the gate would accept it.

    ``decoded``: the JSON a json-min block stands for; its critical lines must
    stay readable too (the model read them by decoding the block).
    """
    before = ctx.tokens.count(text)
    critical = critical_lines(text, kind, command)
    if decoded is not None:
        critical = critical | critical_lines(decoded, kind, command)
    while chooser.applied:
        marker, key = stash_marker(
            f"structured view ({', '.join(chooser.applied)}) of a {len(text):,}-char "
            f"{label} document; original",
            text,
        )
        new = f"{chooser.view}{HEADER_LINE}{marker}"
        stash = {key: text}
        if (
            ctx.tokens.count(new) < before
            and _visible(critical, new)
            and decode(expanded(new, stash)) == text
            and not check_lossy(text, new, kind, stash, (), command)
        ):
            return new, stash, list(chooser.applied)
        chooser.undo()
    return None


def _visible(critical: frozenset[tuple[str, str]], new: str) -> bool:
    """The gate's critical-line rule: every critical line still readable in ``new``."""
    return not critical or next(hidden_critical(critical, [new]), None) is None


class StructuredEngine(Engine):
    name = "structured"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts = [u.text for u in units]
        candidates = [
            i
            for i, u in enumerate(units)
            if not u.frozen
            and MIN_CHARS <= len(u.text) <= MAX_CHARS
            and STASH_LITERAL not in u.text
        ]
        if not candidates:
            return EngineOutput(texts=texts)
        pointed = PointedAt(units)
        stash: dict[str, str] = {}
        used: Counter[str] = Counter()
        for i in candidates:
            unit = units[i]
            if unit in pointed:
                continue
            if unit.kind == "tool_result" and is_file_read(unit):
                continue
            result = structured_view(unit.text, ctx, unit.kind, unit.command)
            if result is None:
                continue
            new, found, applied = result
            texts[i] = new
            stash.update(found)
            used.update(applied)
        details: dict[str, Any] = {"strategies": dict(sorted(used.items()))} if used else {}
        if used:
            details["documents"] = sum(1 for i in candidates if texts[i] != units[i].text)
        return EngineOutput(texts=texts, details=details, stash=stash)
