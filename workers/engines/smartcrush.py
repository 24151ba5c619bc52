"""``smartcrush``: long JSON arrays in tool results keep the items that matter.

Where: arrays of at least :data:`MIN_ITEMS` items and :data:`MIN_TOKENS`
tokens in a tool result whose whole text is JSON (the array itself or nested
anywhere in the document), in the payload of a ``[[json-min:v1 ...]]`` block
(unless the JSON it encodes has critical lines: the model reads those by
decoding the block, which a marker in the payload would prevent),
and the rows of a ``[[json-table:v1 ...]]`` block (each row line is an item).

Which items stay visible:

- the first and the last item;
- every item that carries an error signal: a key like ``error``,
  ``exception``, ``failure`` with a non-empty value; ``status``/``status_code``
  400-599; ``state``/``status``/``conclusion``/``result`` ``failed``,
  ``error``, ``timed_out``...; ``severity``/``level`` ``error``, ``fatal``,
  ``critical``, ``high`` (and warning-level ``warning``, ``medium``,
  ``moderate``; a lint message with a ``ruleId`` and a numeric severity);
  ``success``/``ok``/``passed`` false; a string value with an error word or
  an exception name;
- every item on which a critical line of the gate sits (error and warning
  lines, findings...: one copy of each distinct line);
- statistical outliers: per numeric field, values whose modified z-score
  (median and MAD) is above 3.5, the most extreme first, at most about
  sqrt(n) per field (when most values are equal, the outliers of the values
  that differ from them);
- the knee of the coverage curve: every item adds the distinct field values
  it shows first (rare values weigh more, ``log2(n/frequency)``; a field
  whose values are nearly all distinct counts by its shape, digits replaced,
  or not at all); sorted by that gain, the items before the knee (gain at
  least the mean gain) stay.  So the number kept follows the variety of the
  array, not a fixed K.

Every maximal run of dropped items becomes one marker where the run was::

    [{"id": 1, ...},
     … 37 of 200 items omitted <<cx:KEY>>,
     {"id": 39, "error": "timeout"},
     … 161 of 200 items omitted <<cx:KEY>>,
     {"id": 200, ...}]

(for string items the marker is a JSON string, so the array stays valid
JSON; for table rows it is a line ``… 37 of 200 rows omitted <<cx:KEY>>``
and the header keeps the original ``rows=``).  The run's exact text is
stashed under ``KEY``: ``expand`` gives back the input byte for byte.  A run
is only dropped when it saves at least :data:`MIN_RUN_SAVING` tokens over
its marker.  Details: ``arrays_crushed``,
``items_kept``, ``items_total``.

Left alone: frozen units, prose, file reads (the read-lifecycle engine owns
those), units that a dedup back-reference or a read-lifecycle marker points
at.  Linear in the text: one regex scan of the structure, one C parse per
item, nothing at all without a ``[`` in a long enough text.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from workers.engines._logs import reads_a_log
from workers.engines._shell import BIG_DATA_READ, DATA_SUFFIXES, is_file_read, read_path
from workers.engines._text import (
    JSON_DOC_START,
    PointedAt,
    json_tail,
    request_terms,
    restores,
    stash_marker,
    term_limit,
    term_spots,
)
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.facts import SOURCE_FILE, critical_lines
from workers.markers.json_min import decode as decode_min
from workers.messages.model import Unit

__all__ = ["MIN_ITEMS", "MIN_TOKENS", "SmartCrushEngine", "crush_text"]

MIN_ITEMS = 5
MIN_TOKENS = 200
MIN_RUN_SAVING = 16  # tokens a dropped run must save over its marker, else it stays
MIN_CHARS = 400  # texts shorter than this cannot hold a 200-token array
NAMED_SPOTS = 400  # places of a request term looked at: its items are counted among them
CRITICAL_CAP = 600  # the gate compares stripped lines truncated to this length
MAX_WALK = 400  # nodes of one item looked at for error signals
MAX_WALK_DEPTH = 8
OUTLIER_Z = 3.5
KNEE_MIN = 0.1  # a coverage curve closer than this to a straight line has no knee
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
# Strings and flat objects (no nested containers) are one token each; a flat
# array (scalars only) is one token too, its commas found by a second scan.
_STRUCT = re.compile(
    rf"({_STRING})|(\{{(?:[^{{}}\[\]\"]++|{_STRING})*+\}})"
    rf"|(\[(?:[^{{}}\[\]\"]++|{_STRING})*+\])|[\[\]{{}},]"
)
_COMMAS = re.compile(rf"{_STRING}|(,)")
_COMMA = re.compile(",")
_TABLE_OPEN = "[[json-table:v1 columns="
_TABLE_CLOSE = "\n[[/json-table]]"
_MIN_OPEN = "[[json-min:v1"
_MIN_CLOSE = "[[/json-min]]"
_MIN_HEADER = re.compile(
    r'\[\[json-min:v1(?: [a-z]{1,12}=(?:"[^"\\\n]{0,40}"|[^\s\]"]{1,40})){0,12}\]\]'
)
_ROWS_ATTR = re.compile(r" rows=(\d{1,9})")
_DIGITS = re.compile(r"\d+|[0-9a-f]{8,}")

_ERR_KEY = re.compile(r"(?i)error|exception|failure|fault|traceback|stack_?trace|panic|fatal")
_ERR_WORD = re.compile(
    r"(?i:\b(?:error|errors|exception|traceback|fatal|panic|failed|failure|segfault|"
    r"denied|refused)\b)|\b[A-Z]\w*(?:Error|Exception)\b"
)
# Words without which an item cannot carry an error signal (found in the raw,
# lower-cased text first, so that most items are never walked).
_TRIGGERS = (
    "error",
    "exception",
    "fail",
    "fatal",
    "panic",
    "segfault",
    "denied",
    "refused",
    "traceback",
    "fault",
    "stack",
    "status",
    "state",
    "conclusion",
    "result",
    "outcome",
    "health",
    "phase",
    "severity",
    "level",
    "priority",
    "risk",
    "impact",
    "success",
    "ok",
    "passed",
    "succeeded",
    "valid",
    "code",
)
_COUNT_KEY = re.compile(r"(?i)count|total|num")
_STATUS_KEY = re.compile(r"(?i)^(?:http_?)?status(?:_?code)?$|^response_?code$")
_STATE_KEY = re.compile(r"(?i)^(?:state|status|conclusion|result|outcome|health|phase)$")
_SEVERITY_KEY = re.compile(
    r"(?i)^(?:(?:issue_?)?severity|level|levelname|log_?level|priority|risk|impact)$"
)
_SUCCESS_KEY = re.compile(r"(?i)^(?:success|ok|passed|succeeded|successful|healthy|valid)$")
_BAD_STATES = frozenset(
    {
        "failed",
        "failure",
        "error",
        "errored",
        "fatal",
        "crashed",
        "timed_out",
        "timedout",
        "timeout",
        "broken",
        "unhealthy",
        "aborted",
        "crashloopbackoff",
    }
)
_BAD_SEVERITIES = frozenset(
    {
        "high",
        "critical",
        "error",
        "err",
        "fatal",
        "crit",
        "alert",
        "emerg",
        "emergency",
        "blocker",
        "severe",
        "warning",
        "warn",
        "medium",
        "moderate",
        "major",
    }
)


# -- finding arrays ----------------------------------------------------------------


@dataclass(slots=True)
class _Array:
    """Items of one array: item i lies in ``text[starts[i]:ends[i]]`` (maybe with blanks)."""

    starts: list[int]
    ends: list[int]
    values: list[Any]
    rows: bool = False  # json-table rows (one line each)
    total_chars: int = 0
    lines: bool = False  # JSON lines (one object per line)

    def span(self, text: str, i: int) -> tuple[int, int]:
        return _strip_span(text, self.starts[i], self.ends[i])


def _strip_span(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a] in " \t\r\n":
        a += 1
    while b > a and text[b - 1] in " \t\r\n":
        b -= 1
    return a, b


def _json_arrays(text: str, a: int, b: int, cut: bool = False) -> list[tuple[int, int, list[int]]]:
    """``(open, close, commas)`` of every array in ``text[a:b]`` with enough items.

    ``cut``: ``text[a:b]`` may be a document cut short (``head -c``, a harness that
    truncates long outputs): an array still open at the end is given too, up to its
    last comma (``close`` is that comma); the item after it is partial and stays.
    """
    stack: list[tuple[int, list[int] | None]] = []
    found: list[tuple[int, int, list[int]]] = []
    for m in _STRUCT.finditer(text, a, b):
        group = m.lastindex
        if group:
            if group == 3 and m.end() - m.start() >= MIN_TOKENS:
                start, end = m.span()
                if text.find('"', start, end) < 0:
                    commas = [c.start() for c in _COMMA.finditer(text, start, end)]
                else:
                    commas = [c.start() for c in _COMMAS.finditer(text, start, end) if c.lastindex]
                if len(commas) >= MIN_ITEMS - 1:
                    found.append((start, end - 1, commas))
            continue
        pos = m.start()
        c = text[pos]
        if c == ",":
            if stack:
                seps = stack[-1][1]
                if seps is not None:
                    seps.append(pos)
        elif c == "[":
            stack.append((pos, []))
        elif c == "{":
            stack.append((pos, None))
        else:
            if not stack:
                return []
            start, seps = stack.pop()
            if (c == "]") != (seps is not None):
                return []
            if seps is not None and len(seps) >= MIN_ITEMS - 1:
                found.append((start, pos, seps))
    if not stack:
        return found
    if not cut:
        return []
    for start, seps in stack:
        if seps is not None and len(seps) >= MIN_ITEMS:
            found.append((start, seps[-1], seps[:-1]))
    return found


def _load(span: str) -> tuple[bool, Any]:
    try:
        return True, orjson.loads(span)
    except orjson.JSONDecodeError:
        pass
    try:
        return True, json.loads(span)
    except (ValueError, RecursionError):
        return False, None


def _array_items(text: str, open_: int, close: int, seps: list[int]) -> list[_Array]:
    """The items of the array at ``text[open_:close + 1]``: one :class:`_Array`, or, when
    some items are no JSON (a line of curl's stderr inside a body, a document cut short:
    ``close`` is then a comma), one per run of at least ``MIN_ITEMS`` items that load;
    the others stay as they are."""
    starts = [open_ + 1, *(p + 1 for p in seps)]
    ends = [*seps, close]
    whole = text[open_ : close + 1] if text[close] == "]" else text[open_:close] + "]"
    ok, values = _load(whole)
    if ok:
        if not isinstance(values, list) or len(values) != len(starts):
            return []
        return [_Array(starts, ends, values, total_chars=close - open_ + 1)]
    arrays: list[_Array] = []
    run: list[int] = []
    run_values: list[Any] = []
    for i in range(len(starts) + 1):
        if i < len(starts):
            ok, value = _load(text[starts[i] : ends[i]])
            if ok:
                run.append(i)
                run_values.append(value)
                continue
        if len(run) >= MIN_ITEMS:
            a, b = starts[run[0]], ends[run[-1]]
            run_starts = [starts[k] for k in run]
            run_ends = [ends[k] for k in run]
            arrays.append(_Array(run_starts, run_ends, run_values, total_chars=b - a))
        run, run_values = [], []
    return arrays


def _json_lines(text: str) -> list[_Array]:
    """Runs of ``MIN_ITEMS`` or more lines that each hold one JSON object (a JSON-lines file,
    ``jq -c`` output, a JSON access log), each run as the items of one array."""
    if not text.startswith("{") and "\n{" not in text:
        return []
    arrays: list[_Array] = []
    starts: list[int] = []
    ends: list[int] = []
    values: list[Any] = []
    pos = 0
    for line in [*text.split("\n"), ""]:
        end = pos + len(line)
        value = None
        if line[:1] == "{" and line.rstrip()[-1:] == "}":
            ok, value = _load(line)
            if not ok or not isinstance(value, dict):
                value = None
        if value is not None:
            starts.append(pos)
            ends.append(end)
            values.append(value)
        else:
            if len(values) >= MIN_ITEMS:
                total = ends[-1] - starts[0]
                arrays.append(_Array(starts, ends, values, total_chars=total, lines=True))
            starts, ends, values = [], [], []
        pos = end + 1
    return arrays


def _table_arrays(text: str) -> Iterable[_Array]:
    """Rows of every ``[[json-table:v1 ...]]`` block, as items."""
    pos = text.find(_TABLE_OPEN)
    while pos >= 0:
        nxt = pos + len(_TABLE_OPEN)
        try:
            columns, col_end = json.JSONDecoder().raw_decode(text, nxt)
        except ValueError:
            pos = text.find(_TABLE_OPEN, nxt)
            continue
        header_end = text.find("]]\n", col_end)
        line_end = text.find("\n", col_end)
        close = text.find(_TABLE_CLOSE, col_end)
        rows_attr = _ROWS_ATTR.match(text, col_end)
        if (
            header_end < 0
            or header_end + 2 != line_end
            or close < 0
            or rows_attr is None
            or not isinstance(columns, list)
        ):
            pos = text.find(_TABLE_OPEN, nxt)
            continue
        body_start = header_end + 3
        starts: list[int] = []
        ends: list[int] = []
        values: list[Any] = []
        start = body_start
        good = True
        while start <= close:
            end = text.find("\n", start, close + 1)
            if end < 0:
                end = close
            ok, row = _load(text[start:end])
            if not ok or not isinstance(row, list):
                good = False
                break
            starts.append(start)
            ends.append(end)
            values.append(
                dict(zip(columns, row, strict=False)) if len(row) == len(columns) else row
            )
            start = end + 1
        if good and len(starts) >= MIN_ITEMS and len(starts) == int(rows_attr.group(1)):
            yield _Array(starts, ends, values, rows=True, total_chars=close - body_start)
        pos = text.find(_TABLE_OPEN, close)


def _decoded_has_critical_lines(block: str, kind: str, command: str | None) -> bool:
    """Whether the JSON a json-min block stands for has critical lines (or cannot be read).

    Such a block stays whole: the model reads those lines by decoding the block,
    which a marker inside the payload would make impossible.
    """
    try:
        decoded = decode_min(block)
    except ValueError:
        return True
    return bool(critical_lines(decoded, kind, command))


def _min_payloads(text: str, kind: str, command: str | None) -> Iterable[tuple[int, int]]:
    pos = text.find(_MIN_OPEN)
    while pos >= 0:
        m = _MIN_HEADER.match(text, pos)
        if m is None:
            pos = text.find(_MIN_OPEN, pos + 1)
            continue
        end = text.find(_MIN_CLOSE, m.end())
        if end < 0:
            return
        if not _decoded_has_critical_lines(text[pos : end + len(_MIN_CLOSE)], kind, command):
            yield m.end(), end
        pos = text.find(_MIN_OPEN, end)


BROKEN_MIN_CHARS = 1000  # a broken document shorter than this holds no array worth crushing
BROKEN_TRIES = 4


def _broken_json(text: str) -> tuple[int, int] | None:
    """The span from the first line that opens a JSON document (maybe after a label) to the
    end of ``text``, when the usual path did not take it: behind a label, cut short (``head
    -c``, a harness's truncation) or broken by other output (curl's stderr in its body).
    Its arrays are crushed by the items that load (:func:`_array_items`).  A document on one
    line with other output after it (``exit status 3``) is that line.  None for JSON lines
    (short lines that each load: each line is a document of its own) and for text with no
    such line."""
    if '":' not in text and '["' not in text and "[[" not in text:
        return None  # no object key, no array of strings or arrays: no document worth a scan
    end = len(text.rstrip(" \t\r\n"))
    for tries, m in enumerate(JSON_DOC_START.finditer(text, 0, end)):
        start = m.end()
        if tries >= BROKEN_TRIES or end - start < BROKEN_MIN_CHARS:
            return None
        line_end = text.find("\n", start, end)
        if line_end < 0:
            line_end = end
        if _load(text[start:line_end])[0] and line_end < end:
            if line_end - start >= BROKEN_MIN_CHARS:
                return start, line_end  # a document on one line, other output after it
            continue  # a JSON line, not a broken document
        # a document that loads to the end stands behind a label (the usual path took it
        # when it is the whole text)
        return start, end
    return None


def _whole_json(text: str) -> tuple[int, int] | None:
    a, b = _strip_span(text, 0, len(text))
    if a >= b or text[a] not in "[{" or text[b - 1] not in "]}":
        return None
    return a, b


# -- choosing the items -------------------------------------------------------------


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "", [], {}) and value == value


_ERR_WORDS = (
    "error",
    "exception",
    "traceback",
    "fatal",
    "panic",
    "fail",
    "segfault",
    "denied",
    "refused",
)
# key -> bit set of the roles it can play (cached: keys repeat across items)
_K_ERR, _K_COUNT, _K_STATUS, _K_STATE, _K_SEVERITY, _K_SUCCESS = 1, 2, 4, 8, 16, 32
_KEY_CLASS: dict[str, int] = {}


def _key_class(key: str) -> int:
    cls = _KEY_CLASS.get(key)
    if cls is None:
        cls = 0
        if _ERR_KEY.search(key):
            cls |= _K_ERR | (_K_COUNT if _COUNT_KEY.search(key) else 0)
        if _STATUS_KEY.match(key):
            cls |= _K_STATUS
        if _STATE_KEY.match(key):
            cls |= _K_STATE
        if _SEVERITY_KEY.match(key):
            cls |= _K_SEVERITY
        if _SUCCESS_KEY.match(key):
            cls |= _K_SUCCESS
        if len(_KEY_CLASS) < 100_000:
            _KEY_CLASS[key] = cls
    return cls


def _error_string(value: str) -> bool:
    if len(value) > 4000:
        return False
    low = value.lower()
    if not any(map(low.__contains__, _ERR_WORDS)):
        return "Error" in value or "Exception" in value
    return _ERR_WORD.search(value) is not None


def _signal(cls: int, value: Any, has_rule: bool, key: str) -> bool:
    if cls & _K_ERR and _truthy(value):
        if not isinstance(value, int | float) or value is True:
            return True
        if cls & _K_COUNT and value > 0:
            return True
    if cls & _K_STATUS:
        code = value if type(value) is int else None
        if isinstance(value, str) and value.isdigit() and len(value) == 3:
            code = int(value)
        if code is not None and 400 <= code <= 599:
            return True
    if isinstance(value, str):
        low = value.strip().lower()
        if cls & _K_STATE and low in _BAD_STATES:
            return True
        if cls & _K_SEVERITY and low in _BAD_SEVERITIES:
            return True
    if cls & _K_SUCCESS and value is False:
        return True
    return has_rule and key == "severity" and type(value) is int and value >= 1


def _has_error_signal(item: Any) -> bool:
    """Whether an item carries an error signal (bounded walk, no recursion)."""
    stack: list[tuple[Any, int]] = [(item, 0)]
    seen = 0
    while stack and seen < MAX_WALK:
        node, depth = stack.pop()
        seen += 1
        if isinstance(node, str):
            if _error_string(node):
                return True
            continue
        if isinstance(node, dict):
            has_rule = "ruleId" in node or "rule_id" in node
            for key, value in node.items():
                cls = _key_class(key) if isinstance(key, str) else 0
                if (cls or has_rule) and _signal(cls, value, has_rule, key):
                    return True
                if depth < MAX_WALK_DEPTH and isinstance(value, dict | list | str):
                    stack.append((value, depth + 1))
        elif isinstance(node, list) and depth < MAX_WALK_DEPTH:
            stack.extend((v, depth + 1) for v in node[:MAX_WALK])
    return False


_MISSING = object()


def _columns(values: list[Any]) -> dict[Any, list[Any]]:
    """Field -> one value per item (``_MISSING`` where an item lacks the field)."""
    n = len(values)
    if all(type(v) is dict for v in values):
        columns: dict[Any, list[Any]] = {}
        for i, value in enumerate(values):
            for key, v in value.items():
                col = columns.get(key)
                if col is None:
                    col = columns[key] = [_MISSING] * n
                col[i] = v
        return columns
    return {None: values}


def _median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _numbers(col: list[Any], only: set[int] | None) -> list[tuple[int, float]]:
    """(index, value) of the finite numbers of a column (integers past float range skipped)."""
    out: list[tuple[int, float]] = []
    for i, v in enumerate(col):
        if (type(v) is int or type(v) is float) and (only is None or i in only):
            try:
                f = float(v)
            except OverflowError:  # an integer beyond 1e308, loaded by the stdlib parser
                continue
            if math.isfinite(f):
                out.append((i, f))
    return out


def _outlier_indexes(
    col: list[Any], n: int, only: set[int] | None = None, depth: int = 0
) -> list[int]:
    """Items of one numeric column far from its median (modified z-score)."""
    numbers = _numbers(col, only)
    if len(numbers) < MIN_ITEMS:
        return []
    values = [v for _, v in numbers]
    med = _median(values)
    mad = _median([abs(v - med) for v in values])
    if mad == 0:
        deviants = {i for i, v in numbers if v != med}
        if not deviants:
            return []
        if len(deviants) > max(1, len(values) // 10):
            # most values equal: the outliers among the ones that differ
            if depth >= 2 or len(deviants) >= len(values):
                return []
            return _outlier_indexes(col, n, deviants, depth + 1)
        chosen = [(i, v) for i, v in numbers if i in deviants]
    else:
        limit = OUTLIER_Z * mad / 0.6745
        chosen = [(i, v) for i, v in numbers if abs(v - med) > limit]
    chosen.sort(key=lambda iv: -abs(iv[1] - med))
    cap = max(2, math.ceil(math.sqrt(n)))
    return [i for i, _ in chosen[:cap]]


def _outliers(columns: dict[Any, list[Any]], n: int) -> set[int]:
    found: set[int] = set()
    for col in columns.values():
        found.update(_outlier_indexes(col, n))
    return found


def _canonical(value: Any) -> Any:
    if isinstance(value, str):
        return value[:80]
    if isinstance(value, dict):
        return ("{}", tuple(sorted(str(k) for k in list(value)[:8])))
    if isinstance(value, list):
        return ("[]", min(len(value), 3))
    if isinstance(value, float) and value != value:
        return "nan"
    return value


def _hashable_column(col: list[Any]) -> list[Any]:
    try:
        set(col)
    except TypeError:
        return [_canonical(v) for v in col]
    if any(type(v) is str and len(v) > 80 for v in col):
        return [v[:80] if type(v) is str else v for v in col]
    return col


def _features(columns: dict[Any, list[Any]], n: int) -> list[list[Any]] | None:
    """Coverage features of each item: values of low-cardinality fields, else their shapes.

    A field with at most ``2*sqrt(n)`` distinct values counts by value; a field
    with more counts by shape (digits replaced), or not at all when the shapes
    are as varied.  None when no field counts.
    """
    limit = max(3, math.ceil(2 * math.sqrt(n)))
    feats: list[list[Any]] | None = None
    for key, raw in columns.items():
        col = _hashable_column(raw)
        distinct = set(col)
        if len(distinct) > limit:
            if not any(type(v) is str for v in distinct):
                continue
            col = [_DIGITS.sub("#", v)[:40] if type(v) is str else type(v) for v in col]
            distinct = set(col)
            if len(distinct) > limit:
                continue
            key = (key, "~")
        if len(distinct) < 2:
            continue
        if feats is None:
            feats = [[] for _ in range(n)]
        for item, v in zip(feats, col, strict=True):
            item.append((key, v))
    return feats


def _knee(columns: dict[Any, list[Any]], n: int, kept: set[int]) -> set[int]:
    """Items before the knee of the coverage curve of distinct field values."""
    feats = _features(columns, n)
    if feats is None:
        return set()
    freq: Counter[Any] = Counter()
    for f in feats:
        freq.update(f)
    weight = {f: math.log2(n / c) for f, c in freq.items() if c < n}
    covered: set[Any] = set()
    for i in kept:
        covered.update(feats[i])
    gains: list[tuple[float, int]] = []
    for i, f in enumerate(feats):
        if i in kept:
            continue
        new = set(f) - covered
        if not new:
            continue
        gain = sum(weight.get(x, 0.0) for x in new)
        if gain > 0:
            gains.append((gain, i))
            covered.update(new)
    if not gains:
        return set()
    gains.sort(key=lambda gi: (-gi[0], gi[1]))
    total = sum(g for g, _ in gains)
    m = len(gains)
    best_k, best_d, cum = m, 0.0, 0.0
    for k, (g, _) in enumerate(gains, start=1):
        cum += g
        d = cum / total - k / m
        if d > best_d + 1e-12:
            best_k, best_d = k, d
    if best_d < KNEE_MIN:
        best_k = m  # no pronounced knee: every first occurrence adds as much
    return {i for _, i in gains[:best_k]}


def _triggered(text: str, arr: _Array) -> Iterable[int]:
    """Items whose text (or table columns) holds a word an error signal needs."""
    first = arr.values[0]
    if arr.rows and isinstance(first, dict):
        names = " ".join(str(k) for k in first).lower()
        if any(word in names for word in _TRIGGERS):
            return range(len(arr.values))
    a, b = arr.starts[0], arr.ends[-1]
    low = text[a:b].lower()
    hits: list[tuple[int, int]] = []
    for word in _TRIGGERS:
        pos = low.find(word)
        while pos >= 0:
            hits.append((a + pos, a + pos + len(word)))
            pos = low.find(word, pos + len(word))
    hits.sort()
    return _overlapping(arr.starts, arr.ends, hits)


_SCALARS = (str, int, float, bool, type(None))


# a linter's or compiler's findings as JSON (golangci-lint's ``Issues``, eslint's ``messages``,
# ruff's, semgrep's, SARIF-like results): a rule, a message and a place in every item
_RULE_KEYS = frozenset(
    {"ruleId", "rule_id", "rule", "FromLinter", "from_linter", "linter", "check_id",
     "check_name", "checkName", "symbol", "message-id"}
)  # fmt: skip
_MESSAGE_KEYS = frozenset({"message", "Message", "Text", "text", "msg", "description", "extra"})
_PLACE_KEYS = frozenset(
    {"Pos", "pos", "line", "Line", "location", "locations", "range", "start", "filename",
     "file", "path", "filePath", "physicalLocation"}
)  # fmt: skip


def _findings(columns: dict[Any, list[Any]]) -> bool:
    """Whether the array's items are findings: a rule, a message and a place in each."""
    keys = columns.keys()
    return bool(
        _RULE_KEYS.intersection(keys)
        and _MESSAGE_KEYS.intersection(keys)
        and _PLACE_KEYS.intersection(keys)
        and all(v is not _MISSING for k in _RULE_KEYS.intersection(keys) for v in columns[k])
    )


def _error_items(text: str, arr: _Array, columns: dict[Any, list[Any]]) -> set[int]:
    """Items that carry an error signal, judged per distinct value of each field.

    Scalar values are judged once per distinct value; nested values are walked
    item by item, and only in items whose raw text holds a trigger word.
    """
    if _findings(columns):
        return set(range(len(arr.values)))  # each item is a linter's finding: a fact
    found: set[int] = set()
    rule_items = "ruleId" in columns or "rule_id" in columns
    triggered: set[int] | None = None
    for key, col in columns.items():
        cls = _key_class(key) if isinstance(key, str) else 0
        rule = rule_items and key == "severity"
        try:
            distinct = set(col)
        except TypeError:
            distinct = None
        if distinct is not None:  # scalars only: judge each distinct value once
            if cls or rule:
                bad = {
                    v
                    for v in distinct
                    if v is not _MISSING
                    and ((type(v) is str and _error_string(v)) or _signal(cls, v, rule, key))
                }
            else:
                bad = {v for v in distinct if type(v) is str and _error_string(v)}
            if bad:
                found.update(i for i, v in enumerate(col) if v in bad)
            continue
        bad = set()
        judged: set[Any] = set()
        for i, v in enumerate(col):
            if v is _MISSING:
                continue
            if type(v) in _SCALARS:
                if v not in judged:
                    judged.add(v)
                    if (type(v) is str and _error_string(v)) or (
                        (cls or rule) and _signal(cls, v, rule, key)
                    ):
                        bad.add(v)
                if v in bad:
                    found.add(i)
                continue
            if i in found:
                continue
            if cls & _K_ERR and _truthy(v):
                found.add(i)
                continue
            if triggered is None:
                triggered = set(_triggered(text, arr))
            if i in triggered and _has_error_signal(v):
                found.add(i)
    return found


def _overlapping(starts: list[int], ends: list[int], spans: list[tuple[int, int]]) -> set[int]:
    """Indexes of items whose region overlaps any of ``spans`` (sorted)."""
    found: set[int] = set()
    n = len(starts)
    for a, b in spans:
        k = max(bisect_right(starts, a) - 1, 0)
        while k < n and starts[k] < b:
            if ends[k] > a:
                found.add(k)
            k += 1
    return found


def _critical_spans(text: str, kind: str, command: str | None) -> list[tuple[int, int]]:
    """Where the first copy of each critical line of the gate sits in ``text``."""
    lines = {line for _, line in critical_lines(text, kind, command)}
    if not lines:
        return []
    spans: list[tuple[int, int]] = []
    offset = 0
    for raw in text.splitlines(keepends=True):
        stripped = raw.strip()
        if stripped:
            key = stripped[:CRITICAL_CAP]
            if key in lines:
                lines.discard(key)
                start = offset + raw.index(stripped[0])
                spans.append((start, start + len(key)))
                if not lines:
                    break
        offset += len(raw)
    return spans


# -- crushing ------------------------------------------------------------------------


@dataclass(slots=True)
class _Edit:
    start: int
    end: int
    marker: str
    key: str


def _plan(
    text: str,
    arr: _Array,
    crit: list[tuple[int, int]],
    ctx: EngineContext,
    stash: dict[str, str],
    terms: frozenset[str] = frozenset(),
) -> tuple[list[_Edit], int]:
    """The runs of ``arr`` to drop (as edits) and how many items they hold."""
    n = len(arr.values)
    keep = {0, n - 1}
    if terms:
        keep.update(_named_items(text, arr, terms))
    columns = _columns(arr.values)
    keep.update(_error_items(text, arr, columns))
    keep.update(_overlapping(arr.starts, arr.ends, crit))
    keep.update(_outliers(columns, n))
    keep.update(_knee(columns, n, keep))
    if len(keep) >= n:
        return [], 0
    edits: list[_Edit] = []
    omitted = 0
    unit_word = "rows" if arr.rows else "lines" if arr.lines else "items"
    id_column = _id_column(columns)
    # every marker of this array has about the same tokens: count one (hex keys
    # tokenise unevenly, hence the slack) instead of each
    sample, _ = stash_marker(f"{n} of {n} {unit_word} omitted", "")
    marker_tokens = ctx.tokens.count(sample) + 4
    # JSON has far fewer than 6 characters per token: longer runs need no count
    sure = 6 * (marker_tokens + MIN_RUN_SAVING)
    i = 0
    while i < n:
        if i in keep:
            i += 1
            continue
        j = i
        while j + 1 < n and j + 1 not in keep:
            j += 1
        a, b = arr.span(text, i)[0], arr.span(text, j)[1]
        strings = not arr.rows and all(isinstance(arr.values[k], str) for k in range(i, j + 1))
        if strings:
            a, b = a + 1, b - 1
        original = text[a:b]
        named = _ids_note(id_column, i, j)
        marker, key = stash_marker(f"{j - i + 1} of {n} {unit_word} omitted{named}", original)
        cost = marker_tokens + (ctx.tokens.count(named) if named else 0)
        if len(original) >= sure or cost + MIN_RUN_SAVING <= ctx.tokens.count(original):
            edits.append(_Edit(a, b, marker, key))
            stash[key] = original
            omitted += j - i + 1
        i = j + 1
    return edits, omitted


# a field that names its item (``"id": "inv_00002"``, ``"order_id": 12``, ``"userId"``)
_ID_FIELD = re.compile(r"^(?:id|ID|Id|uuid|[A-Za-z0-9]+_id|[a-z][A-Za-z0-9]*Id)$")
MAX_NAMED = 6  # ids an omitted run's note names (a longer run of other ids names none)
_ID_NUMBER = re.compile(r"(\D*?)(\d{1,18})")  # an id's prefix and its number
MAX_ID_CHARS = 40


def _id_column(columns: dict[Any, list[Any]]) -> tuple[str, list[Any]] | None:
    """The field that names each item (``id`` first), when every item has a short string or
    integer there: an omitted run's note names its items by it."""
    found = [key for key in columns if isinstance(key, str) and _ID_FIELD.match(key)]
    found.sort(key=lambda key: key.lower() != "id")
    for key in found:
        col = columns[key]
        if all((type(v) is str or type(v) is int) and len(str(v)) <= MAX_ID_CHARS for v in col):
            return key, col
    return None


def _ids_note(id_column: tuple[str, list[Any]] | None, i: int, j: int) -> str:
    """`` (id inv_00002, inv_00008)``: the ids of items ``i`` to ``j`` (consecutive numbers as a
    range: `` (id 4018–4051)``), or "" (no id field, or more ids than a note names)."""
    if id_column is None:
        return ""
    key, col = id_column
    ids = [str(v) for v in col[i : j + 1]]
    if len(ids) > 2:
        numbered = [_ID_NUMBER.fullmatch(v) for v in ids]
        if all(numbered) and len({m.group(1) for m in numbered if m}) == 1:
            numbers = [int(m.group(2)) for m in numbered if m]
            if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
                return f" ({key} {ids[0]}–{ids[-1]})"
    if len(ids) > MAX_NAMED:
        return ""
    return f" ({key} {', '.join(ids)})"


def _named_items(text: str, arr: _Array, terms: frozenset[str]) -> set[int]:
    """Items holding a term of the latest request that at most a few items hold
    (:func:`~workers.engines._text.term_limit`; as a whole word, case-insensitive): the
    ticket the user asks about, not a key every item has."""
    a, b = arr.starts[0], arr.ends[-1]
    body = text[a:b].lower()
    if len(body) != b - a:
        return set()
    found: set[int] = set()
    for term in terms:
        if term not in body:
            continue
        limit = term_limit(term)
        hits: set[int] = set()
        for at in term_spots(body, term, NAMED_SPOTS):
            hits.add(bisect_right(arr.starts, a + at) - 1)
            if len(hits) > limit:
                break
        if len(hits) <= limit:
            found.update(hits)
    return found


def _inside(pos: int, runs: list[tuple[int, int]]) -> bool:
    k = bisect_left(runs, (pos + 1, -1)) - 1
    return k >= 0 and runs[k][0] <= pos < runs[k][1]


@dataclass(slots=True)
class CrushResult:
    text: str
    stash: dict[str, str]
    arrays: int
    kept: int
    total: int


def crush_text(
    text: str,
    ctx: EngineContext,
    kind: str = "tool_result",
    command: str | None = None,
    terms: frozenset[str] = frozenset(),
) -> CrushResult | None:
    """Crush the long arrays of one tool result; None when nothing changes.

    ``command`` is the tool call's command: the gate's critical lines depend on it.
    ``terms``: words of the latest request (:func:`~workers.engines._text.request_terms`);
    the few items that hold one (``ticket 88123``) stay.
    """
    if len(text) < MIN_CHARS or ("[" not in text and "{" not in text):
        return None
    arrays: list[_Array] = []
    if _TABLE_OPEN in text:
        arrays.extend(_table_arrays(text))
    regions: list[tuple[int, int]] = []
    if _MIN_OPEN in text:
        regions.extend(_min_payloads(text, kind, command))
    elif _TABLE_OPEN not in text:
        whole = _whole_json(text)
        if whole is not None and _load(text[whole[0] : whole[1]])[0]:
            regions.append(whole)
        elif (tail := json_tail(text)) is not None:
            # a JSON report after a few lines of something else (bandit's ``[main] INFO``)
            regions.append(_strip_span(text, tail, len(text)))
    cut = not regions and not arrays
    if cut:
        broken = _broken_json(text)
        if broken is not None:
            regions.append(broken)
        elif (text.startswith("{") or "\n{" in text) and not reads_a_log(text, marked=True):
            # JSON lines that are data (a JSON-lines file, ``jq -c``, an access log of
            # requests): crushed as an array; a log's lines that say so (a level) are
            # logtemplate's, as any log's
            arrays.extend(_json_lines(text))
    for a, b in regions:
        for open_, close, seps in _json_arrays(text, a, b, cut):
            if close - open_ < MIN_TOKENS:
                continue
            arrays.extend(_array_items(text, open_, close, seps))
    if not arrays:
        return None
    arrays.sort(key=lambda x: x.starts[0])
    crit = _critical_spans(text, kind, command)
    stash: dict[str, str] = {}
    edits: list[_Edit] = []
    runs: list[tuple[int, int]] = []
    crushed = kept = total = 0
    for arr in arrays:
        if runs and _inside(arr.starts[0], runs):
            continue  # nested in a dropped run: stashed with it
        if arr.total_chars < 6400:
            a, b = arr.starts[0], arr.ends[-1]
            if ctx.tokens.count(text[a:b]) < MIN_TOKENS:
                continue
        planned, omitted = _plan(text, arr, crit, ctx, stash, terms)
        if not planned:
            continue
        edits.extend(planned)
        runs.extend((e.start, e.end) for e in planned)
        runs.sort()
        crushed += 1
        total += len(arr.values)
        kept += len(arr.values) - omitted
    if not edits:
        return None
    edits.sort(key=lambda e: e.start)
    pieces: list[str] = []
    cursor = 0
    for edit in edits:
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.marker)
        cursor = edit.end
    pieces.append(text[cursor:])
    new = "".join(pieces)
    used = {e.key: stash[e.key] for e in edits}
    if not restores(text, new, used):
        return None
    return CrushResult(new, used, crushed, kept, total)


def _skipped(unit: Unit, pointed: PointedAt) -> bool:
    return (
        unit.frozen
        or unit.kind != "tool_result"
        or unit in pointed
        or (is_file_read(unit) and not _crushable_read(unit))
    )


def _crushable_read(unit: Unit) -> bool:
    """A file read smartcrush may shorten: a big data file (``.json``, ``.csv``, ...), or a
    big file that is no source code and holds a JSON document from its first line
    (``reservations.txt``: ``DATA [{...}]``)."""
    if len(unit.text) < BIG_DATA_READ:
        return False
    path = read_path(unit)
    if path is None:
        return False
    return path.lower().endswith(DATA_SUFFIXES) or (
        JSON_DOC_START.match(unit.text) is not None and SOURCE_FILE.search(path) is None
    )


class SmartCrushEngine(Engine):
    name = "smartcrush"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts = [u.text for u in units]
        candidates = [
            i
            for i, u in enumerate(units)
            if u.kind == "tool_result"
            and len(u.text) >= MIN_CHARS
            and ("[" in u.text or "{" in u.text)
        ]
        if not candidates:
            return EngineOutput(texts=texts)
        pointed = PointedAt(units)
        terms = request_terms(ctx.latest_user_text)
        stash: dict[str, str] = {}
        arrays = kept = total = 0
        for i in candidates:
            unit = units[i]
            if _skipped(unit, pointed):
                continue
            result = crush_text(unit.text, ctx, unit.kind, unit.command, terms)
            if result is None:
                continue
            texts[i] = result.text
            stash.update(result.stash)
            arrays += result.arrays
            kept += result.kept
            total += result.total
        details: dict[str, Any] = (
            {"arrays_crushed": arrays, "items_kept": kept, "items_total": total} if arrays else {}
        )
        return EngineOutput(texts=texts, details=details, stash=stash)
