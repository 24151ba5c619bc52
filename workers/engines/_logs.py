"""Log lines: which lines are log lines, and the template and fields of one line.

The miner of the ``logtemplate`` engine.  A line is masked in one regex pass:
every value-like span (timestamp, duration, uuid, URL, ip[:port], address,
hex id, path, ``file:line``, number) becomes a placeholder of its kind, and
the rest of the line is the template.  Each field is either

- a *measure*: a timestamp, a duration, a memory address, or a number whose
  key says it is a pid, an attempt or retry counter, a size or a time
  (``attempt 3``, ``pid=812``, ``"latency_ms":12``, an access log's byte
  count): lines that differ only in measures are the same event, and a run
  of them may be summarised as a range;
- or an *identifier* (everything else: paths, URLs, ids, status codes,
  ports, ``file:line``, hostnames, plain numbers): lines that differ in one
  are different events, so its values are listed, never turned into a range.

Pure, no state between calls; linear in the length of the line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from workers.core.memo import register

__all__ = ["Field", "Masked", "is_log_line", "mask", "value_range"]

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_TIME = r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
_ZONE = r"(?:Z|[+-]\d{2}:?\d{2}|\s?UTC)?"
_JUL_REST = r"\d{1,2}, \d{4},? \d{1,2}:\d{2}:\d{2}(?: [AP]M)?"  # after the month, ``03, 2026 ...``
_TS = re.compile(
    rf"\d{{4}}[-/]\d{{2}}[-/]\d{{2}}(?:[T ]{_TIME}{_ZONE})?"  # ISO, Go's log 2026/03/02
    rf"|\d{{2}}/{_MONTH}/\d{{4}}:{_TIME}(?: [+-]\d{{4}})?"  # access logs
    rf"|{_MONTH}\s{{1,2}}\d{{1,2}}\s{_TIME}"  # syslog, journal
    rf"|{_MONTH} {_JUL_REST}"  # java.util.logging: Dec 03, 2026 4:52:26 PM
    rf"|\d{{2}}:\d{{2}}:\d{{2}}(?:[.,]\d{{1,9}})?{_ZONE}(?![\w:])"  # a time of day alone
)
# _TS as the scan runs it (the same matches: the property test holds it to _TS):
# the alternatives that start with two digits share them, and a position that
# starts neither with a digit nor with a month's initial is passed at once.
_TS_SCAN = re.compile(
    rf"(?=[\dADFJMNOS])(?:\d\d(?:\d\d[-/]\d{{2}}[-/]\d{{2}}(?:[T ]{_TIME}{_ZONE})?"
    rf"|/{_MONTH}/\d{{4}}:{_TIME}(?: [+-]\d{{4}})?"
    rf"|:\d{{2}}:\d{{2}}(?:[.,]\d{{1,9}})?{_ZONE}(?![\w:]))"
    rf"|{_MONTH}(?:\s{{1,2}}\d{{1,2}}\s{_TIME}| {_JUL_REST}))"
)
# Masking is two linear scans: timestamps (they hold spaces), then tokens (runs
# without spaces, quotes or brackets), each classified once by its own shape.
# a token without a digit or a slash is template text: only the others are scanned
_TOKEN = re.compile(r"[^\s\"'`<>\[\](){},;|\d/]*[\d/][^\s\"'`<>\[\](){},;|]*")
# _TOKEN's matches are the words (runs of its token characters) holding a digit or a
# slash, whole: a match starts where a word starts.  Tried only there (the
# lookbehind), the scan is linear instead of rescanning each word from each of
# its characters.  A span that starts inside a word (after a klog stamp or an
# access-log prefix) takes its first partial word from _WORD_REST.
_SEPARATORS = r"\s\"'`<>\[\](){},;|"
_TOKEN_AT_WORD = re.compile(rf"(?<![^{_SEPARATORS}])[^{_SEPARATORS}\d/]*[\d/][^{_SEPARATORS}]*")
_WORD_REST = re.compile(rf"[^{_SEPARATORS}]*")
_SEPARATOR = re.compile(rf"[{_SEPARATORS}]")
_CANDIDATE = re.compile(r"[\d/]")
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "uuid",
        re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    ),
    ("url", re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]{1,15}://\S+")),
    ("ip", re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?")),
    ("addr", re.compile(r"0x[0-9a-fA-F]+")),
    ("fileline", re.compile(r"[\w./-]{0,200}\.[A-Za-z]{1,8}:\d+(?::\d+)?")),
    ("hex", re.compile(r"(?=[0-9a-f]{0,63}[0-9])(?=[0-9a-f]{0,63}[a-f])[0-9a-f]{7,64}")),
    (
        "dur",
        re.compile(
            r"\d{1,9}(?:\.\d{1,9})?(?:ns|us|µs|ms|s|m|h|min|mins|sec|secs)"
            r"(?:\d{1,9}(?:\.\d{1,9})?(?:ms|s|m))*"
        ),
    ),
    ("size", re.compile(r"\d{1,15}(?:\.\d{1,9})?(?:[KMGT]i?B|[kKMGT]|B)")),
    ("num", re.compile(r"-?\d{1,30}(?:\.\d{1,30})?(?:/\d{1,9})?")),
    (
        "path",
        re.compile(
            r"(?:~|\.{1,2})?/?(?:[\w.@+%-]{1,128}/){1,32}[\w.@+%?&=:-]{0,400}|/[\w.@+%?&=-]{1,400}"
        ),
    ),
)
_EDGE = ".:!?*#"  # stripped from a token's ends (sentence punctuation, ``file.py:12:``)


def _classify_plain(token: str) -> str:
    """The first kind of ``_KINDS`` whose pattern matches all of ``token``, else ``word``."""
    for kind, pattern in _KINDS:
        if pattern.fullmatch(token):
            return kind
    return "word"


# The same rule in one pass: an alternation of the kinds, in order, tried as a
# whole-token match, backtracks into the next kind when one does not reach the
# token's end, so the first kind that matches all of it is the group matched
# (the property test holds it to _classify_plain).  Tokens repeat (numbers,
# paths, ids of one log): a bounded memo, emptied with the content caches.
_ONE_KIND = re.compile("|".join(f"(?P<{kind}>{pattern.pattern})" for kind, pattern in _KINDS))


def _classify_one(token: str) -> str:
    match = _ONE_KIND.fullmatch(token)
    return "word" if match is None else str(match.lastgroup)


_classify_memo = register(lru_cache(maxsize=1 << 14)(_classify_one))
_MEMO_TOKEN = 80  # longer tokens (a blob without spaces) are classified afresh, not kept


def _classify(token: str) -> str:
    return _classify_memo(token) if len(token) <= _MEMO_TOKEN else _classify_one(token)


def _token_spans(line: str, begin: int, end_at: int) -> list[tuple[int, int]]:
    """The spans of ``_TOKEN.finditer(line, begin, end_at)``."""
    pos = begin
    spans: list[tuple[int, int]] = []
    if begin > 0 and _SEPARATOR.match(line, begin - 1) is None:
        # the span starts inside a word: its rest is a token when it holds a digit or slash
        rest = _WORD_REST.match(line, begin, end_at)
        pos = rest.end() if rest is not None else begin
        if _CANDIDATE.search(line, begin, pos) is not None:
            spans.append((begin, pos))
    spans.extend(m.span() for m in _TOKEN_AT_WORD.finditer(line, pos, end_at))
    return spans


def _fields(line: str, begin: int, end_at: int) -> list[tuple[str, int, int]]:
    """``(kind, start, end)`` of the fields of ``line[begin:end_at]``, in order."""
    found: list[tuple[str, int, int]] = []
    stamps = [m.span() for m in _TS_SCAN.finditer(line, begin, end_at)]
    stamps = [(a, b) for a, b in stamps if a == 0 or not line[a - 1].isalnum()]
    si = 0
    count = len(stamps)
    for start, end in _token_spans(line, begin, end_at):
        while si < count and stamps[si][1] <= start:
            found.append(("ts", *stamps[si]))
            si += 1
        if si < count and stamps[si][0] < end:
            continue  # inside a timestamp
        token = line[start:end]
        # ``key=value``: the value is the field (a path or URL keeps its query)
        if "=" in token and token[0] != "/" and "://" not in token[: token.index("=")]:
            cut = token.index("=") + 1
            start, token = start + cut, token[cut:]
            if _CANDIDATE.search(token) is None:
                continue
        lead = len(token) - len(token.lstrip(_EDGE))
        token = token.strip(_EDGE)
        if not token:
            continue
        start += lead
        found.append((_classify(token), start, start + len(token)))
    found.extend(("ts", a, b) for a, b in stamps[si:])
    return found


_MEASURE_KEY = re.compile(
    r"(?i)^(?:attempts?|retry|retries|try|tries|round|iteration|iter|pid|tid|ppid|took|elapsed|"
    r"duration|latency|time|rt|ms|bytes|size|len|length|uptime|seq|backoff|delay|wait|"
    r"ts|timestamp|t|@timestamp|memory|mem|rss|heap|cpu|load)$"
    r"|(?:_ms|_us|_ns|_s|_sec|_secs|_seconds|_bytes|_time|_duration|_latency|_size|"
    r"Ms|Seconds|Bytes|Time|Duration|Latency)$"
)
_MEASURE_KINDS = frozenset({"ts", "dur", "addr", "size"})
# a unit written apart from its number: group 1 for a time, else a size
_UNIT_AFTER = re.compile(
    r" (?:(ns|us|µs|ms|s|secs?|seconds?|mins?|minutes?|h|hours?)|[KMGT]i?B|bytes|B)(?![\w/])"
)
_KEYLESS = frozenset({"ts", "url", "addr"})
_KIND_LABEL = {
    "ts": "timestamps",
    "dur": "durations",
    "addr": "addresses",
    "size": "sizes",
    "uuid": "ids",
    "hex": "ids",
    "url": "urls",
    "ip": "hosts",
    "port": "client ports",
    "fileline": "locations",
    "path": "paths",
    "num": "numbers",
    "word": "names",
}

_PLACEHOLDER = {kind: f"\x00{kind}\x00" for kind in _KIND_LABEL}

_LEVEL = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRIT|CRITICAL|SEVERE|PANIC)"
_LOG_LINE = re.compile(
    # a multiplexer's prefix first, if any: ``docker compose logs`` (``api-1  | ...``),
    # ``kubectl logs --prefix`` (``[pod/api-7d9f/api] ...``)
    r"^(?:[\w.-]{1,64} {1,40}\| |\[[\w./:-]{1,200}\] )?"
    rf"(?:\[?{_LEVEL}\]?[\s:]"  # a level first
    rf"|<\d{{1,3}}>|\[?\d{{4}}[-/]\d{{2}}[-/]\d{{2}}[T ]\d{{2}}:\d{{2}}"  # syslog priority, ISO
    rf"|{_MONTH}\s{{1,2}}\d{{1,2}}\s\d{{2}}:\d{{2}}:\d{{2}}\s"  # syslog, journal
    rf"|{_MONTH} {_JUL_REST}\s"  # java.util.logging's first line of a record
    # Apache httpd's error log: ``[Mon Dec 07 11:54:48.701896 2026] [proxy:error] ...``
    rf"|\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) {_MONTH} \d{{2}} {_TIME} \d{{4}}\] "
    r"|\[?\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\]?\s"  # time of day
    r"|[IWEF]\d{4}\s\d{2}:\d{2}:\d{2}\.\d{6}\s"  # klog
    r"|\[\s{0,8}\d{1,9}\.\d{3,9}\]\s"  # dmesg
    # access log (Python's http.server writes a space before the time, not a colon)
    r"|\S{1,200} \S{1,100} \S{1,200} \[\d{2}/\w{3}/\d{4}[: ]\d{2}:\d{2}:\d{2}[^\]]{0,10}\] \""
    # a request log in another layout (HAProxy's ``127.0.0.1:45240 [06/Dec/2026:21:12:11.685]
    # fe be/srv 0/0/0/1/1 200 ...``): the access log's time as the second to fourth field
    r"|(?:\S{1,200} ){1,3}\[\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2}[^\]]{0,10}\] "
    r"|\{\"[^\"]{0,40}\":.{0,400}\"(?:level|lvl|severity|msg|message|ts|time|timestamp)\"\s?:"
    r"|\{\"(?:level|lvl|severity|msg|message|ts|time|timestamp|@timestamp)\"\s?:"
    r"|(?:time|ts)=\S+\s.{0,60}\blevel=\w)"
    r"|\blevel=(?:trace|debug|info|warn|warning|error|fatal|TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b"
)
_KLOG = re.compile(r"[IWEF](\d{4}\s\d{2}:\d{2}:\d{2}\.\d{6})\b")  # I0302 10:00:01.123456
# common and combined log format: host ident user [time] "request" status bytes "referer" "agent"
_ACCESS = re.compile(
    r"^(?P<host>\S{1,200}) (?P<ident>\S{1,100}) (?P<user>\S{1,200}) \[(?P<ts>[^\]]{1,40})\] "
    r"\"(?:(?P<method>[A-Z]{1,20}) (?P<path>\S{1,4000}?)(?: (?P<proto>[A-Z]{1,10}/[\d.]{1,5}))?"
    r"|(?P<request>[^\"]{0,4000}))\" (?P<status>\d{3}) (?P<bytes>\d{1,15}|-)"
    r"(?: \"(?P<referrer>[^\"]{0,4000})\" \"(?P<agent>[^\"]{0,4000})\")?"
)
# group -> (label, measure); the other groups stay in the template
_ACCESS_FIELDS = {
    "host": ("hosts", False),
    "user": ("users", False),
    "ts": ("timestamps", True),
    "method": ("methods", False),
    "path": ("paths", False),
    "request": ("requests", False),
    "status": ("status", False),
    "bytes": ("bytes", True),
    "referrer": ("referrers", False),
    "agent": ("agents", False),
}


def is_log_line(line: str) -> bool:
    """Whether ``line`` starts like a log line (timestamp, level, access-log or JSON shape)."""
    return _LOG_LINE.search(line[:600]) is not None


# what marks a log line beyond a timestamp (a data row has one too: ``2026-12-02T10:00Z,ACME,
# 19.56``): a level word or key, an access log's request, a syslog process, klog's severity
_LOG_MARK = re.compile(
    rf"\b{_LEVEL}\b|\b(?:[Ww]arn(?:ing)?|[Ee]rror|[Ii]nfo|[Dd]ebug)\b"
    r"|\"(?:level|lvl|severity|log\.level)\"\s?:|\blevel=|\] \"[A-Z]{1,20} "
    r"|\"[A-Z]{3,7} /\S{0,4000} HTTP/\d"  # a request anywhere on the line
    # Apache's ``[module:level]`` (``[proxy:error]``, ``[mpm_event:notice]``)
    r"|\] \[\w{1,40}:(?:emerg|alert|crit|error|warn|notice|info|debug|trace\d)\] "
    r"|^\S+\s+\d+\s\d\d:\d\d:\d\d \S+ [\w./-]+(?:\[\d+\])?: |^[IWEF]\d{4}\s"
    rf"|^{_MONTH} {_JUL_REST} [\w.$]+ [\w$<>]+$"  # java.util.logging: the class and method
)


def is_marked_log_line(line: str) -> bool:
    """A log line (:func:`is_log_line`) that says it is one: a level, a request, a process."""
    head = line[:600]
    return _LOG_LINE.search(head) is not None and _LOG_MARK.search(head) is not None


LOG_READ_SAMPLE = 200  # lines of a file read that say whether the file is a log
MIN_LOG_LINES = 4  # a log read, and a unit logtemplate folds, has this many log lines


def reads_a_log(text: str, marked: bool = False) -> bool:
    """Whether a file read's text is a log (``tail -n 200 logs/api.log``, a JSON-lines file):
    most of its first ``LOG_READ_SAMPLE`` non-blank lines are log lines, or log records (a log
    line and the indented lines that continue it: PostgreSQL's multi-line statements, a stack
    trace's ``at`` frames) and at least ``MIN_LOG_LINES`` of them; with ``marked``, lines that
    say so (:func:`is_marked_log_line`: a CSV export's timestamped rows are data)."""
    sample = [
        line
        for line in text.split("\n", LOG_READ_SAMPLE * 2)[: LOG_READ_SAMPLE * 2]
        if line.strip()
    ]
    sample = sample[:LOG_READ_SAMPLE]
    test = is_marked_log_line if marked else is_log_line
    heads = in_records = 0
    inside = False  # in a log record: a log line and the indented lines that continue it
    for line in sample:
        if test(line):
            heads += 1
            in_records += 1
            inside = True
        elif inside and line[:1] in " \t":
            in_records += 1  # a statement's next line, a stack trace's frame
        else:
            inside = False
    if len(sample) < MIN_LOG_LINES:
        return False
    return 2 * heads > len(sample) or (heads >= MIN_LOG_LINES and 2 * in_records > len(sample))


# Named tuples, not frozen dataclasses: a log line makes one Masked and a field of
# each of its values, and a tuple is built at about twice the speed.
class Field(NamedTuple):
    """One variable span of a line: its kind, label (key or kind), value, and class."""

    kind: str
    label: str
    value: str
    measure: bool


class Masked(NamedTuple):
    """A line's template (fields replaced by placeholders), its fields, and what they say."""

    template: str
    fields: tuple[Field, ...]
    status: int | None  # an access log's (or ``status=``) HTTP status


_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-@")


def _key(line: str, start: int) -> tuple[str | None, bool]:
    """The key of the value at ``start``, and whether it is written as one (``key=``, ``key:``).

    ``key=V``, ``key: V``, ``"key":"V"``, else the word before (``attempt 3``, ``took 12ms``).
    """
    k = start
    while k > 0 and start - k < 3 and line[k - 1] in " \"'#(":
        k -= 1
    explicit = k > 0 and line[k - 1] in "=:"
    if explicit:
        k -= 1
        while k > 0 and start - k < 6 and line[k - 1] in " \"'":
            k -= 1
    end = k
    while k > 0 and end - k < 41 and line[k - 1] in _KEY_CHARS:
        k -= 1
    key = line[k:end]
    if not key or not (key[0].isalpha() or key[0] in "_@"):
        return None, False
    return key, explicit


_MEMO_LINE = 600  # longer lines are masked afresh (the memo holds at most 8192 lines)


def mask(line: str) -> Masked:
    """The template and the fields of one (ANSI-free) line."""
    return _mask_memo(line) if len(line) <= _MEMO_LINE else _mask(line)


def _mask(line: str) -> Masked:
    access = _ACCESS.match(line)
    if access is not None:
        return _mask_access(line, access)
    klog = _KLOG.match(line)
    if klog is None:
        parts, fields, status = _mask_span(line, 0, len(line))
        return Masked("".join(parts), tuple(fields), status)
    # klog's level letter is glued to its date: the letter stays in the template
    parts, fields, status = _mask_span(line, klog.end(), len(line))
    stamp = Field("ts", "timestamps", klog.group(1), True)
    return Masked(line[0] + "\x00ts\x00" + "".join(parts), (stamp, *fields), status)


# A pure function of the line, and lines recur: one output in several records, the
# history an agent sends again with each request.  Emptied with the content caches.
_mask_memo = register(lru_cache(maxsize=1 << 13)(_mask))


def _mask_access(line: str, access: re.Match[str]) -> Masked:
    """An access-log line: its columns are the fields; what follows is masked as usual."""
    parts: list[str] = []
    fields: list[Field] = []
    pos = 0
    for name, (label, measure) in _ACCESS_FIELDS.items():
        start, end = access.span(name)
        if start < 0 or (name == "bytes" and access.group(name) == "-"):
            continue
        parts.append(line[pos:start])
        parts.append(f"\x00{name}\x00")
        fields.append(Field(name, label, access.group(name), measure))
        pos = end
    parts.append(line[pos : access.end()])
    rest_parts, rest_fields, _ = _mask_span(line, access.end(), len(line), times=True)
    parts.extend(rest_parts)
    fields.extend(rest_fields)
    return Masked("".join(parts), tuple(fields), int(access.group("status")))


_QUOTED_REQUEST = re.compile(r"\"[A-Z]{3,7} /\S{0,4000} HTTP/\d")
_CLF_TIME = re.compile(r"\[\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2}")
# an ephemeral port after an address (Linux picks them from 32768 up): ``:45614``
_EPHEMERAL_PORT = re.compile(
    r":(3276[89]|327[7-9]\d|32[89]\d\d|3[3-9]\d{3}|[45]\d{4}|6[0-4]\d{3}|65[0-4]\d\d|655[0-2]\d"
    r"|6553[0-5])$"
)


def _mask_span(
    line: str, begin: int, end_at: int, times: bool = False
) -> tuple[list[str], list[Field], int | None]:
    """Template pieces, fields and ``status=`` value of ``line[begin:end_at]``.

    ``times``: a bare decimal is a time (an access log's request time).
    """
    parts: list[str] = []
    fields: list[Field] = []
    status: int | None = None
    pos = begin
    for kind, start, end in _fields(line, begin, end_at):
        value = line[start:end]
        if kind == "ip" and (port := _EPHEMERAL_PORT.search(value)) is not None:
            # ``127.0.0.1:45614``: a client's port the system picked names nobody (a request
            # log's next line has the next one); the host does
            cut = start + port.start()
            parts += (line[pos:start], _PLACEHOLDER["ip"], ":", _PLACEHOLDER["port"])
            fields.append(Field("ip", _KIND_LABEL["ip"], line[start:cut], False))
            fields.append(Field("port", _KIND_LABEL["port"], port.group(1), True))
            pos = end
            continue
        # (the key of a timestamp, URL or address is never read)
        key, explicit = _key(line, start) if kind not in _KEYLESS else (None, False)
        if kind in _MEASURE_KINDS:
            measure = True
            label = key if kind in ("dur", "size") and explicit and key else _KIND_LABEL[kind]
        elif kind == "num" and key is not None and _MEASURE_KEY.search(key):
            measure, label = True, key
        elif kind == "num" and (unit := _UNIT_AFTER.match(line, end)) is not None:
            # ``after 706 ms``, ``in 3.2 s``, ``48 KB``: a duration or a size, its unit apart
            measure, label = True, "sizes" if unit.group(1) is None else "durations"
        elif kind == "num" and times and "." in value:
            measure, label = True, "times"
        else:
            measure, label = False, key if explicit and key else _KIND_LABEL[kind]
            if (
                explicit
                and key is not None
                and key.lower() == "status"
                and len(value) == 3
                and value.isdecimal()
            ):
                status = int(value)
        parts += (line[pos:start], _PLACEHOLDER[kind])
        fields.append(Field(kind, label, value, measure))
        pos = end
    parts.append(line[pos:end_at])
    if (
        status is None
        and '"' in line
        and _QUOTED_REQUEST.search(line, begin, end_at) is not None
        and _CLF_TIME.search(line, begin, end_at) is not None
    ):
        # a request log in another layout (HAProxy: ``... [06/Dec/2026:21:12:11.685] fe
        # be/web1 0/0/0/1/1 500 232 ... "POST /pay HTTP/1.1"``): its status is the first
        # three-digit number of 100 to 599 that is no measure
        status = next(
            (
                int(f.value)
                for f in fields
                if f.kind == "num"
                and not f.measure
                and len(f.value) == 3
                and "100" <= f.value <= "599"
            ),
            None,
        )
    return parts, fields, status


# --- a measure's values as one range ----------------------------------------

_TIME_OF_DAY = re.compile(r"(?<!\d)\d{2}:\d{2}:\d{2}")  # not "26:10:00" of "2026:10:00:22"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|mins?|m|h|secs?)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "h": 3600.0,
}


def value_range(kind: str, values: Sequence[str]) -> str:
    """``lo–hi`` of a measure: timestamps first to last (the date said once), others by size."""
    if kind == "ts":
        lo, hi = values[0], values[-1]
        if lo != hi:
            hi = hi[_common_date(lo, hi) :]
    else:
        keyed = sorted(values, key=lambda v: _magnitude(kind, v))
        lo, hi = keyed[0], keyed[-1]
    return lo if lo == hi else f"{lo}–{hi}"


def _common_date(lo: str, hi: str) -> int:
    """Where the time of day starts in ``hi`` when ``lo`` has the same date before it, else 0."""
    match = _TIME_OF_DAY.search(hi)
    if match is None or match.start() == 0 or lo[: match.start()] != hi[: match.start()]:
        return 0
    return match.start()


def _magnitude(kind: str, value: str) -> float:
    if kind == "addr":
        return float(int(value, 16))
    if kind == "size":
        number = _NUMBER.match(value)
        scale = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
        unit = value.lstrip("0123456789. ")[:1]
        return (float(number.group(0)) if number else 0.0) * scale.get(unit, 1.0)
    if kind == "dur":
        return sum(float(n) * _UNIT_SECONDS.get(u, 1.0) for n, u in _DURATION_PART.findall(value))
    match = _NUMBER.match(value)
    return float(match.group(0)) if match else 0.0
