"""What a text must keep: protected spans and critical lines.

Two families, both named by kind in gate violations and dead letters:

- *recoverable* spans (numbers, URLs, paths, identifiers, versions, inline
  and fenced code, JSON keys): after a lossy engine each must still be in the
  message, or inside a stash the message points at (``<<cx:HASH>>``);
- *visible* lines (error and warning lines, failing tests (``--- FAIL:``,
  ``●``, ``not ok``, pytest's ``____ test_x ____``, numbered failures under a
  ``Failures:`` header, rspec's rerun lines) with their assertion lines
  (jest's message line, the changed lines of a ``- Expected`` / ``+ Received``
  diff) and their first frame in user code, the test summary, diff file and
  hunk headers, compiler/linter findings, git status paths, a traceback's
  exception line (whatever its name), its innermost frame and its innermost
  frame in user code, a Rust panic's message line, the first user frame under a
  crash headline (Go, sanitizers, valgrind, JVM, JavaScript), constraint and
  negation lines of prose): each must still be readable in the message itself.
  A test runner's JSON events (``go test -json``) are read by the line each prints.

Extraction is cached per text, because the text an engine receives is the
text the previous engine produced.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import accumulate

import orjson

from workers.core.ansi import ANSI
from workers.core.literals import scanner
from workers.core.memo import Memo, register
from workers.core.shell import command_segments
from workers.fidelity.testlogs import has_go_runs, passing_test_logs

__all__ = [
    "MIETTE_HEAD",
    "REQUEST_KEY",
    "SHAPED_KINDS",
    "SOURCE_FILE",
    "SYSTEM_HEADER_NOTE",
    "SYSTEM_HEADER_STEP",
    "command_family",
    "critical_lines",
    "is_crash_headline",
    "is_error_line",
    "is_lint_warning",
    "is_user_frame",
    "line_shape",
    "protected_spans",
    "repeat_key",
    "visible_lines",
]

# Error and warning lines that differ only in volatile fields (timestamps,
# durations, sizes, pids, addresses, counters) are repeats of one distinct
# line: one of them visible (with the rest stashed and a count) keeps the
# fact visible.  What identifies a thing (paths, file:line positions, status
# codes, ids, named things with a number, host:port) is part of the shape:
# ``GET /api/orders/338`` and ``GET /api/orders/412`` are two facts.
SHAPED_KINDS = frozenset({"error_line"})
# A token without a digit and without a run of 7 letters a-f (nothing in it
# is a number or a hex id), up to the end or a blank run that no alternative
# of ``_SHAPE_TOKEN`` crosses.
_COLD_TOKEN = r"(?:[^\s\da-f]++|[a-f]{1,6}+(?![a-f]))++(?=\s++(?![\d=:#+-])|\Z)"
_TIMESTAMP = (
    r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
    r"|\d\d?/[A-Z][a-z]{2}/\d{4}(?::\d\d:\d\d:\d\d(?: [+-]\d{4})?)?"
    r"|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?"
)
_THREAD_NAME = (
    r"\b(?:pool-\d+-thread-\d+|(?:(?:https?|ajp)-)?(?:nio2?|bio|apr)-(?:[\w.]+-)?\d+-exec-\d+"
    r"|ForkJoinPool(?:\.commonPool|-\d+)-worker-\d+|Thread-\d+|ThreadPoolExecutor-\d+_\d+)\b"
)
_SHAPE_TOKEN = re.compile(
    # Fast paths first (tests/property/test_facts_fastpaths.py holds the plain
    # pattern and checks both agree).  ``cold`` is kept as written, in one
    # match: blanks and punctuation other than ``.~%+/:#-`` (no alternative
    # starts at one), the rest of a word after its first character but for
    # digits and ``H`` (inside a word only ``HTTP/``, a number or a time
    # starts), and tokens without a digit and
    # without 7 letters a-f in a row: every alternative below that changes a
    # text needs a digit or such a run, and none reaches over a blank run
    # followed by neither a digit nor one of ``=:#+-`` (the only characters an
    # alternative takes after blanks), so the plain scan would keep each piece
    # unchanged and stand at its end too.  The lookaheads ``(?=...)`` further
    # down are necessary conditions of the alternative they guard (they spare
    # its backtracking on words that cannot match).
    r"(?P<cold>(?:[^\w.~%+/:#-]++|(?<=\w)[^\W\dH]++|(?<!\S)" + _COLD_TOKEN + r")++)"
    # A bare number after a blank, ``[`` or ``(`` and before a blank, ``,;)]``
    # or a ``:`` that starts no position or time: no alternative below but
    # the last two can match there, so it folds (no group, as they have none).
    r"|(?<![^\s\[(])\d++(?=[ \t,;)\]]|:(?![\[\d]))"
    # Volatile fields fold to "#": timestamps first (their digits look like
    # paths and positions), then, after the identifying spans, any other
    # number or hex id (durations, sizes, pids, addresses, counters).
    r"|(?P<ts>" + _TIMESTAMP + ")"
    # a worker thread's name folds as a pid does (``[pool-2-thread-3]``, Tomcat's
    # ``http-nio-8080-exec-7``, ``Thread-12``): the same failure on another thread is one fact
    r"|" + _THREAD_NAME +
    # Identifying spans stay as written: file:line positions (group ``pos``,
    # the numbers in group ``at``), paths, status codes, ids, named things with
    # a number (host-12, case_5, E0308; in an error, not a warning: ``order 12``,
    # ``loss record 2``), the value of an exception (``KeyError: 12``), host:port (an IPv4 address's
    # too), #123.
    r"|(?P<pos>(?<![\w.~%+/-])(?=[\w.~%+/-]*+(?::\[?\d|\(\d))"
    r"(?:[\w.~%+-]*/)*(?:[\w-]+\.[A-Za-z]\w{0,9}|[\w-]*[Mm]akefile)"
    r"(?P<at>:\[?\d+(?:[:,]\d+)*\]?|\(\d+(?:,\d+)?\))|\bline \d+)"
    r"|(?P<keep>"
    r"HTTP/\d(?:\.\d)?\"?\s+\d{3}\b"
    r"|(?<![\w.~%+/-])(?=[\w.~%+-]*+/)(?=\S*?[A-Za-z_])[\w.~%+-]*(?:/[\w.~%+-]+)+"
    r"|\b(?:status|code|Status|HTTP|status_code|statusCode)\"?[=: ]{1,3}\d{3}\b"
    r"|\b(?=\w++(?<=id|Id|ID)\"?[=:# ]{1,3}\d)(?:\w+_id|\w*[a-z]Id|ID|id)\b\"?[=:# ]{1,3}\d+"
    r"|\b(?=[A-Za-z][A-Za-z_]*+-?\d)[A-Za-z][A-Za-z_]*[-_]?\d+(?:-\d+)*\b"
    r"|(?P<named>\b(?=(?i:[abceijoprstu])\w*+(?<=(?i:[bdehkmnprstwxy])) #?\d)(?i:(?:record|row|item|order|job|task|case|shard|partition"
    r"|offset|page|request|index|entry|element|account|customer|invoice|user|test|chunk|batch"
    r"|column|step|ticket|issue)s?) #?\d+\b)"
    r"|(?<=Error: )-?\d+(?:\.\d+)?$|(?<=Exception: )-?\d+(?:\.\d+)?$"
    r"|(?<=[A-Za-z]):\d{2,5}\b"
    # an IPv4 host:port (a client's address alone folds, and so does a client's host:port:
    # Apache's ``[client 127.0.0.1:42130]``, a request log's ``remote=127.0.0.1:33054``, the
    # port is ephemeral; ``from 10.0.0.3:5432`` is as often a server as a client: it stays)
    r"|(?<!client )(?<!client=)(?<!remote=)(?<!peer=)(?<!remote_addr=)(?<!remoteAddr=)"
    r"\b\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}\b"
    r"|#\d+"
    r")"
    r"|0x[0-9a-fA-F]+|\b[0-9a-f]{7,64}\b|\d+"
)
# Where a text can change at all: a digit or 7 hex letters in a row.
_HOT = re.compile(r"\d|[a-f]{7}")
_DIGITS = re.compile(r"\d+")
_PATH_NUMBER = re.compile(r"(?<=/)\d+(?=/|$)")  # a path's segment that is a number
_PROC_PID = re.compile(r"/proc/\d+(?:/task/\d+)?")  # pids inside paths
# Words of an error (not a mere warning): a warning repeated at several
# positions of one file is one fact (its kind and file); errors at two
# positions are two.
_ERROR_LEVEL = re.compile(
    r"\b(?:error|errors|ERROR|Error|FAIL\w*|[Ff]ail(?:ed|ures?)|fatal|FATAL|Fatal|panic\w*|"
    r"Exception|Traceback|CRITICAL|critical|denied|refused|[A-Z]\w*(?:Error|Exception))\b"
)
# Every match of _ERROR_LEVEL holds one of these (a search without ``\b`` at
# every position is several times cheaper).
_ERROR_LEVEL_HINT = re.compile(
    r"rror|RROR|FAIL|ail|atal|ATAL|panic|xception|Traceback|RITICAL|ritical|denied|refused"
)
_WARNING_WORD = re.compile(
    r"\b(?:Warning|WARNING|warning|WARN)\b|^npm warn "
    # levels that say warn without the word: winston's ``[warn]``, pino's ``"level":40``
    r'|\[warn\]|\[WRN\]|"(?:level|severity|lvl)":\s?(?:40\b|"warn")'
)
# a request's or trace's id (``reqId=req-ec692``, ``"traceId":"4bf9..."``, ``"req_id":8``): the
# request a line was logged for, not what failed; one warning or error per request is one
# fact (another order's or user's id stays: ``"order_id":12`` is what failed)
_REQUEST_KEY_WORDS = r"(?:req(?:uest)?|trace|span|correlation)[-_]?id"
REQUEST_ID = re.compile(rf"(?i)\b({_REQUEST_KEY_WORDS}\"?\s?[=:]\s?\"?)[\w.:-]+")
#: a field name that holds a request's or trace's id (``request_id``, ``traceId``)
REQUEST_KEY = re.compile(rf"(?i){_REQUEST_KEY_WORDS}$")


# A compiler or linter warning (gcc/clang ``file:12:5: warning: ...``, javac,
# tsc, rustc's ``warning: ...``, eslint's ``  3:7  warning  ...``): its quoted
# names fold too, so one kind of warning in one file is one fact
# (``unused variable 'a'`` and ``unused variable 'b'``); the toolfilter
# engine shows the first and lists every location of the rest.
_DIAG_WARNING = re.compile(
    r"^(?:\S+?:\d+(?::\d+)?: warning: |\S+\(\d+,\d+\): warning |warning(?:\[[\w:]+\])?: "
    r"|\d+:\d+\s+warning\s)"
)
_QUOTED = re.compile(r"'[^'\n]{1,200}'|`[^`\n]{1,200}`|\"[^\"\n]{1,200}\"|‘[^’\n]{1,200}’")
# A linter's coded finding that is a warning by its code, whatever words its message holds:
# flake8/ruff/pycodestyle's ``path:55:80: E501 line too long (88 > 79 characters)``, ``W291``,
# ``C901``, ``D100``, ``N802``, ``B006``, ``ANN201``, ``F401`` (unused import), pylint's
# ``path:12:0: W0611: Unused import os (unused-import)``, ``C0301``, ``R0913``.  Not a warning:
# pylint's ``E1101``/``F0001``, pyflakes' undefined and redefined names (``F811``, ``F821``),
# syntax errors (``E999``), ``F63x``/``F7xx`` (invalid comparisons, misplaced statements).
# As a compiler's warning, one kind in one file is one fact (the tool filter lists the places).
_LINT_WARNING = re.compile(
    r"^\S+?:\d+(?::\d+)?:? (?!E9\d\d\b|F8[0-2]\d\b|F63\d\b|F7\d\d\b|[EF]\d{4}\b)"
    r"[A-Z]{1,4}\d{3,4}:? "
)
# gcc/clang's ``file:line:col: note: ...`` under a finding: it folds as a warning does
# (positions and quoted names), so a note repeated with its warning at another place
# is the same fact (the tool filter lists the warning's places)
_DIAG_NOTE = re.compile(r"^\S+?:\d+(?::\d+)?: note: ")
_BLANKS = re.compile(r"[ \t]{2,}")
# ... and such a note inside the system's or a toolchain's headers (g++'s ``/usr/include/c++/
# 12/bits/basic_string.h:3432:5: note: candidate: ...``, clang's ``candidate template
# ignored`` under ``/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/``): help text of the finding above it, as a library frame is of an exception, so
# no fact; the finding, and notes in the project's own files, stay facts
_SYSTEM_HEADER = (
    r"^(?:/usr/(?:local/)?(?:bin/\.\./)?(?:include|lib|lib64|share)/|/nix/store/|/Library/Developer/"
    r"|/Applications/Xcode[^/]*\.app/|/opt/(?:homebrew|local|rh|intel|cuda|rocm)/"
    r"|[A-Za-z]:[\\/]Program Files(?: \(x86\))?[\\/])[^:\n]*"
)
SYSTEM_HEADER_NOTE = re.compile(_SYSTEM_HEADER + r":\d+(?::\d+)?: note: ")
# ... and a step of a template's instantiation chain inside them (``/usr/include/c++/12/bits/
# stl_algo.h:1809:14:   required from 'void std::__insertion_sort(...)'``, the chain's
# ``/usr/include/c++/12/bits/predefined_ops.h: In instantiation of '...':``): a library frame of
# the error, no fact; the step in the project's own code (``geom.cpp:17:14:   required from
# here``) and the error line stay facts
SYSTEM_HEADER_STEP = re.compile(
    _SYSTEM_HEADER + r"(?::\d+(?::\d+)?:   required (?:from|by) |: In instantiation of )"
)


# eslint's stylish row of an error under its file header (``  12:3  error  'describe' is not
# defined  no-undef``): its position names no file, so no position rule above keeps it
_ESLINT_ERROR = re.compile(r"^([ \t]*\d+:\d+)([ \t]+(?:error|✖|✗|✘|×)[ \t].*)$", re.S)
_ESLINT_FIRST = frozenset(" \t0123456789")


def _shape_token(match: re.Match[str]) -> str:
    return "#" if match.lastgroup is None or match.lastgroup == "ts" else match.group()


def _time_token(match: re.Match[str]) -> str:
    return "#" if match.lastgroup == "ts" else match.group()


# An assertion compares values: every number of it identifies the failure
# (``assert 53.0 == 53.97``, ``expected:<0> but was:<1>``); only timestamps fold.
_ASSERTION_WORDS = re.compile(
    r"\s[!=]==?\s|\bexpected\b|\bbut was\b|\bwant\b|\bgot\b|\bExpected\b|\bReceived\b|\bassert"
)
_ASSERTION_HINT = re.compile(r"[!=]=|xpected|but was|want|got|Received|assert")  # in every match


def _warning_shape_token(match: re.Match[str]) -> str:
    group = match.lastgroup  # the outer group: ``keep`` for ``named``, ``pos`` for ``at``
    if group == "cold":
        return match.group()
    if group == "keep":
        if match.group("named") is not None:
            # a warning repeated per batch, row or item is one fact (``batch 3 of 900: slow``)
            return _DIGITS.sub("#", match.group())
        token = match.group()
        if "/" in token and token[:4] != "HTTP":
            # ... and so is one per resource of a route (``GET /items/42 -> 429``): a path's
            # number segments fold (an error's stay: ``/api/orders/338`` failed, not 412)
            return _PATH_NUMBER.sub("#", token)
        return token
    if group == "pos":
        at = match.group("at")
        if at is None:
            return "line #"
        return match.group()[: -len(at)] + _DIGITS.sub("#", at)
    return "#" if group is None or group == "ts" else match.group()


# What a repeat of one error line may change and still be the same fact, for the engines
# that condense (aging, budget): a timestamp, a thread's name, a pid (``/proc/412``,
# ``pid=412``, a logger's `` [3625] ``, syslog's ``sshd[812]:``), a hex address, a duration or
# size with its unit (``1138 ms``, ``0.96s``, ``12 MB``), an attempt counter (``attempt 3/5``).
# Any other number identifies: a version (``types-requests 2.31.0.7 depends on urllib3>=2``), a
# parametrised test's id (``test_refund[338]``), a line number, an error code, a count.
_VOLATILE = re.compile(
    _TIMESTAMP + "|" + _THREAD_NAME + r"|/proc/\d+(?:/task/\d+)?"
    r"|\b0x[0-9a-fA-F]+"
    r"|(?<![\w.])\d+(?:[.,]\d+)?[ \t]?(?:ms|s|secs?|seconds?|us|µs|ns|mins?|minutes?|h|hrs?|hours?"
    r"|[KMGT]i?B|kB|bytes?|B|%)(?!\w)"
    r"|\b(?i:pid|tid|attempt|retry|try)[=:# ]{0,2}\d+(?:/\d+)?\b"
    r"|(?<=\w)\[\d+\](?=:)|(?<!\S)\[\d+\](?!\S)"
)


# klog's and glog's header of a warning: ``W1203 07:02:14.830000    8629 reflector.go:535] ...``
_KLOG_WARNING = re.compile(r"W\d{4} \d\d:\d\d:\d\d")


def _is_warning(line: str) -> bool:
    """Whether ``line`` is a warning or a compiler's note (as :func:`line_shape` reads one, or
    a klog line of level W)."""
    if ": note: " in line and _DIAG_NOTE.match(line) is not None:
        return True
    if line.startswith("W") and _KLOG_WARNING.match(line) is not None:
        return True
    return _has_warning_word(line)


@register
@lru_cache(maxsize=1 << 16)
def repeat_key(line: str) -> str:
    """What makes error lines one fact for the engines that condense (aging, budget).

    Two lines with one key are one fact: one of them visible is enough.  The key is finer
    than :func:`line_shape` (a line of each key visible shows every shape the gate checks):
    a warning (klog's ``W1203 ...`` too) or a compiler's note in a system header folds as the
    gate folds it (one warning of one kind in one file); a note in the project's files and an error line folds only the fields of ``_VOLATILE`` (timestamps, thread names,
    pids, addresses, durations, sizes, attempt counters), so lines that differ in anything
    else (a version, a test's id, a line number, an error code, a count) are two facts, and
    lines that are the same text are one.
    """
    shape = line_shape(line)
    if shape == line:
        return shape
    if _is_warning(line):
        if ": note: " not in line or SYSTEM_HEADER_NOTE.match(line) is not None:
            return shape
        # a compiler's note in the project's files (``image.h:26:5: note: 'ppm_write'
        # declared here``) points at one place: each place is a fact for aging and budget
        return shape + "\x00" + _VOLATILE.sub("#", line)
    if "/proc/" in line:
        # lsof's and ps's columns repeat the pid of the line's /proc path: a pid there too
        pids = {n for m in _PROC_PID.finditer(line) for n in _DIGITS.findall(m.group())}
        if pids:
            alternatives = "|".join(sorted(pids))
            line = re.sub(rf"(?<![\w.])(?:{alternatives})(?![\w.])", "#", line)
    return shape + "\x00" + _VOLATILE.sub("#", line)


def _is_note(line: str) -> bool:
    """A compiler's ``file:line:col: note:`` or a linter's warning row."""
    return (": note: " in line and _DIAG_NOTE.match(line) is not None) or (
        line[:1] not in " \t" and _LINT_WARNING.match(line) is not None
    )


def _has_warning_word(line: str) -> bool:
    """A warning word and no error word."""
    return _WARNING_WORD.search(line) is not None and (
        _ERROR_LEVEL_HINT.search(line) is None or _ERROR_LEVEL.search(line) is None
    )


def is_warning_shaped(line: str) -> bool:
    """Whether :func:`line_shape` reads ``line`` as a warning (a warning word and no error
    word, or a compiler's note): a warning repeated per item, row or resource is one fact."""
    return _is_note(line) or _has_warning_word(line)


@register
@lru_cache(maxsize=1 << 16)
def line_shape(line: str) -> str:
    """The line with its volatile numbers and hex ids replaced by ``#``.

    An eslint error row's ``line:col`` stays.  In a warning (a warning word, no error word)
    and in a compiler's ``file:line:col: note:`` the line and column of a position fold too; in
    an assertion (``==``, ``expected``, ``got`` ...) only timestamps fold (and, in any line,
    the id of the request it was logged for: :data:`REQUEST_ID`).
    """
    if line[:1] in _ESLINT_FIRST:
        eslint = _ESLINT_ERROR.match(line)
        if eslint is not None:  # an eslint error's ``12:3`` is where it is: two places, two facts
            return eslint.group(1) + line_shape(eslint.group(2))
    if "d" in line or "D" in line:
        line = REQUEST_ID.sub(r"\1#", line)
    if "/proc/" in line:
        line = _PROC_PID.sub(lambda m: _DIGITS.sub("#", m.group()), line)
    note = _is_note(line)
    if note or _has_warning_word(line):
        if note or _DIAG_WARNING.match(line):
            # quoted names fold, and so does the padding that aligns a linter's columns
            # (eslint pads each message to its file's longest)
            line = _BLANKS.sub(" ", _QUOTED.sub("'#'", line))
        if _HOT.search(line) is None:
            return line  # no number and no hex id: nothing folds
        return _SHAPE_TOKEN.sub(_warning_shape_token, line)
    if _HOT.search(line) is None:
        return line
    if _ASSERTION_HINT.search(line) is not None and _ASSERTION_WORDS.search(line) is not None:
        return _SHAPE_TOKEN.sub(_time_token, line)
    return _SHAPE_TOKEN.sub(_shape_token, line)


# --- recoverable spans -----------------------------------------------------

_SPAN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", re.compile(r"\b(?:https?|ftp|file|s3|gs)://[^\s<>\"'`)\]]{1,2000}")),
    (
        "fenced_code",
        re.compile(r"^(?:```|~~~)[^\n]{0,200}\n[\s\S]{0,200000}?\n(?:```|~~~)[ \t]*$", re.M),
    ),
    ("inline_code", re.compile(r"`[^`\n]{1,300}`")),
    ("path", re.compile(r"(?<![\w/.-])(?:~|\.{1,2})?/?(?:[\w.@+-]{1,255}/){1,64}[\w.@+-]{1,255}")),
    ("version", re.compile(r"\bv?\d{1,6}\.\d{1,6}\.\d{1,6}(?:[-+.][\w.]{1,40})?\b")),
    (
        "identifier",
        re.compile(
            r"\b[A-Z][A-Z0-9]{1,40}(?:_[A-Z0-9]{1,40}){1,8}\b|\b[a-zA-Z_]\w{0,60}(?:\.[a-zA-Z_]\w{0,60}){1,8}(?=\()|\b[a-zA-Z_]\w{0,60}(?=\()"
        ),
    ),
    ("json_key", re.compile(r"\"([^\"\\\n]{1,100})\"\s*:")),
    ("number", re.compile(r"(?<![\w.])-?\d{1,300}(?:\.\d{1,300})?(?:[eE][+-]?\d{1,4})?(?![\w])")),
)


def _iter_spans(text: str) -> Iterable[tuple[str, str]]:
    for kind, pattern in _SPAN_PATTERNS:
        if kind == "fenced_code" and "```" not in text and "~~~" not in text:
            continue
        if kind == "inline_code" and "`" not in text:
            continue
        if kind == "url" and "://" not in text:
            continue
        for match in pattern.finditer(text):
            token = match.group(1) if kind == "json_key" else match.group(0)
            yield kind, token


# --- visible lines ---------------------------------------------------------

# a line of the source a compiler quotes under its finding: its number, then rustc's and gcc's
# ``|`` (rustc's suggestions: ``-`` and ``+``), miette's ``│``
_CODE_GUTTER = re.compile(r"\s*\d+ +[|│+-](?: |$)")
# the part of a finding's headline that says a quoted source may follow
_COMPILER_HEAD = re.compile(r":\d+(?::\d+)?: (?:fatal )?(?:error|warning|note)(?:\[\w+\])?: ")
_ERROR_LINE = re.compile(
    # (pytest 9's subtests report ``SUBFAILED(total=10, parts=6) tests/...::test_x``)
    r"\b(?:error|errors|ERROR|Error|FAILED|SUBFAILED|FAIL|FAILURE|FAILURES|failed|Failed|"
    r"failure|failures|"
    r"Failure|Failures|fatal|FATAL|Fatal|panic|panicked|PANIC|Exception|Traceback|CRITICAL|critical|"
    r"Warning|WARNING|warning|WARN|denied|refused|[A-Z]\w*(?:Error|Exception)"
    # the kernel's OOM killer and crash reports (``kernel: Out of memory: Killed process
    # 4242 (postgres)``, ``invoked oom-killer``, ``segfault at 0 ip ...``): no error word
    r"|Out of memory|oom-kill(?:er)?|segfault|SEVERE"
    # a name or a certificate a client could not use (curl's ``Could not resolve host: x``,
    # ``SSL certificate problem: self-signed certificate``, npm's ``Could not resolve dependency``)
    r"|Could not resolve|certificate problem"
    # ctest's closing line (``Errors`` alone is a table header: tsc's ``Errors  Files``)
    r"|Errors while running)\b"
    # the linker's errors (``main.c:(.text+0x93): undefined reference to `pool_start'``)
    r"|undefined reference to|undefined symbol|multiple definition of"
    # an error code in CONST_CASE (memcached's ``SERVER_ERROR object too large``,
    # ``CLIENT_ERROR``, ``INTERNAL_ERROR``, ``E_FATAL``): ``_`` glues it, so no word boundary
    # (not a name that says none happened or what to do on one: ``NO_ERROR``, ``EXIT_FAILURE``,
    # ``ON_ERROR``)
    r"|\b(?!(?:NO|EXIT|ON|IF|WHEN|IGNORE|SKIP|ALLOW|RETRY|EXPECT|EXPECTED|LOG|MAX|MIN|HANDLE)_)"
    r"[A-Z][A-Z0-9]*_(?:ERROR|FAILED|FAILURE|FATAL)\b(?![=(])"
    # a linter's positional row marked by a cross, not a word (stylelint's and biome's
    # ``  3:28  ✖  Unexpected invalid hex color "#ggg"  color-no-invalid-hex``)
    r"|^\s*\d+:\d+\s+[✖✗✘×⚠]\s"
    # ctest's other ways to fail: ``***Timeout   3.00 sec``, ``5 - lru_stress (Timeout)``
    r"|\*\*\*(?:Timeout|Not Run|SEGFAULT|Subprocess aborted|Child aborted)"
    r"|^\s*\d+ - \S+ \((?:Timeout|Not Run|SEGFAULT|NUMERICAL|Subprocess aborted)\)$"
    # npm 10's and 11's warnings (``npm warn peer typescript@">=4.3 <7" from ts-jest@29.4.15``;
    # npm 9 wrote ``npm WARN``)
    r"|^npm warn "
    # Kubernetes: a pod's state or an event's reason that is a failure
    r"|\b(?:CrashLoopBackOff|OOMKill(?:ed|ing)|ImagePullBackOff|ErrImagePull|Evicted)\b"
    # a shell's word for a program killed by a signal (``bash: line 1: 26463 Segmentation
    # fault  valgrind ...``, ``Aborted (core dumped)``)
    r"|\b(?:Segmentation fault|Bus error|Illegal instruction|Floating point exception"
    r"|core dumped)"
    # pino's and bunyan's JSON lines say warn, error and fatal as numbers (40, 50, 60)
    r'|"level":\s?[456]0(?![\d.])'
    # levels written in lower case: nginx's error log and winston (``[warn]``, ``[crit]``,
    # ``[alert]``, ``[emerg]``), zap's and winston's JSON (``"level":"warn"``)
    r"|\[(?:warn|crit|alert|emerg)\]"
    r'|"(?:level|severity|lvl)":\s?"(?:warn|crit|alert|emerg|dpanic)"'
    # klog (Kubernetes components): the level is the letter of ``E1203 16:41:11.123456``
    r"|^[EWF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s"
)
# error shapes without an error word, rarer than the words above: searched only on a line those
# do not match (one big alternation is slower on every line)
_ERROR_RARE = re.compile(
    # a DNS answer's failing status: dig's ``status: NXDOMAIN``, dnsmasq's ``is NXDOMAIN``,
    # nslookup's ``server can't find x: NXDOMAIN`` (not a resolver's query log or counters:
    # CoreDNS's ``"AAAA IN x. udp 73 false 512" NXDOMAIN``, ``rcode="SERVFAIL"``)
    r"(?:status: |\bis |\()(?:NXDOMAIN|SERVFAIL|REFUSED)\b|: (?:NXDOMAIN|SERVFAIL|REFUSED)$"
    # short level tags: nats-server's ``[ERR]``/``[WRN]``/``[FTL]``, logrus's ``ERRO[0003]``
    r"|(?<![\w\]])\[(?:ERR|FTL|CRT|WRN)\]|\b(?:ERRO|FATA|PANI)\[[\d:T.Z+-]+\]"
    # HAProxy's ``[ALERT]    (11809) : config : [haproxy.cfg:17] : unknown keyword 'chek'``
    # (its errors; ``[WARNING]`` and ``[NOTICE]`` are the others), syslog's emergencies
    r"|^\[(?:ALERT|EMERG)\] "
    # Serilog's ``[12:00:09 ERR]``, zerolog's console ``3:05PM ERR upstream unavailable``
    r"|\[\d\d:\d\d:\d\d (?:ERR|FTL)\]|\b\d{1,2}:\d\d[AP]M (?:ERR|FTL) "
    # a result code or an error value in key=value form: slapd's ``RESULT tag=97 err=49``,
    # logfmt's ``err="connection refused"``, ``err=EOF`` (not ``err=0``, ``err=<nil>``,
    # ``err=""``, ``err="<nil>"``, nor slapd's ``err=14``: a SASL bind's step in progress)
    r"|\berr=(?:(?!14\b)-?[1-9]\d*\b|\"(?!(?:<nil>|nil|null|none|None)\")[^\"]|'[^']"
    r"|(?!(?:nil|null|none|None)\b)[A-Za-z][\w.]*)"
)


def _error_search(line: str) -> bool:
    """``_ERROR_LINE`` or ``_ERROR_RARE`` matches ``line``."""
    return _ERROR_LINE.search(line) is not None or _ERROR_RARE.search(line) is not None


# Every match of _ERROR_LINE contains one of these substrings; searching for
# them first halves the cost on lines without any (most lines).
# what every line ``_ERROR_LINE`` matches holds: a cheap test first (a property test holds
# ``is_error_line`` to ``_ERROR_LINE``); its literals are scanned in one pass over a whole
# output where Hyperscan is at hand (:func:`_hinted_rows`)
_ERROR_HINT_LITERALS = (
    "rror", "RROR", "ailed", "ailure", "FAIL", "atal", "FATAL", "anic", "ANIC", "xception",
    "Traceback", "RITICAL", "ritical", "arning", "WARN", "denied", "refused", "of memory",
    "oom-kill", "segfault", "SEVERE", "NXDOMAIN", "SERVFAIL", "REFUSED", "ould not resolve",
    "certificate problem", "[ERR]", "[FTL]", "[CRT]", "[WRN]", "ERRO[", "FATA[", "PANI[", "err=", " ERR]", " FTL]", "M ERR ", "M FTL ", "[ALERT] ", "[EMERG] ", '"level":', "warn]", "crit]", "alert]", "emerg]",
    'warn"', 'crit"', 'alert"', 'emerg"', 'dpanic"', "***", "Timeout)", "Not Run)",
    "SEGFAULT)", "NUMERICAL)", "aborted)", "BackOff", "OOMKill", "ErrImagePull", "Evicted",
    "Segmentation", "Bus error", "Illegal instr", "Floating point", "core dumped",
    "undefined reference", "undefined symbol", "multiple definition", "npm warn ",
)  # fmt: skip
# a linter's crosses (outside ASCII: found by ``str.find``, not by the Hyperscan pass)
_CROSS_HINTS = ("✖", "✗", "✘", "×", "⚠")
_KLOG_HINT = r"^[EWF]\d{4} "  # klog's level letter glued to its date: ``E1130 06:00:37``
_ERROR_HINT = re.compile(
    "|".join(map(re.escape, (*_ERROR_HINT_LITERALS, *_CROSS_HINTS))) + "|" + _KLOG_HINT
)
# ... at a line's start after any blanks (the lines are read stripped), in lines joined by "\n"
_KLOG_ROW = re.compile(r"^[^\S\n]*[EWF]\d{4} ", re.M)


def _hinted_rows(lines: list[str]) -> frozenset[int] | None:
    """Indexes of the lines (stripped as :func:`_tool_lines` reads them) where ``_ERROR_HINT``
    may match: a superset, found by one Hyperscan pass over the lines; None without it."""
    found = scanner(_ERROR_HINT_LITERALS)
    if found is None or len(lines) < _HINT_SCAN_LINES:
        return None
    text = "\n".join(lines)
    starts = [0, *accumulate(len(line) + 1 for line in lines)]
    rows = {
        bisect_right(starts, at) - 1 for spots in found.positions(text).values() for at in spots
    }
    rows.update(bisect_right(starts, m.start()) - 1 for m in _KLOG_ROW.finditer(text))
    for cross in _CROSS_HINTS:
        at = text.find(cross)
        while at >= 0:
            row = bisect_right(starts, at) - 1
            rows.add(row)
            at = text.find(cross, starts[row + 1] if row + 1 < len(starts) else len(text))
    return frozenset(rows)


_HINT_SCAN_LINES = 8  # fewer lines are tested one by one


def is_error_line(line: str) -> bool:
    """Whether ``line`` holds an error or warning word (``_ERROR_LINE``)."""
    return _ERROR_HINT.search(line) is not None and _error_search(line)


_SUMMARY_LINE = re.compile(
    r"^=+ .*\b(?:passed|failed|error|errors|skipped|xfailed|deselected)\b.* =+$"
    r"|^(?:Tests?|Test Suites):\s+.*\b(?:passed|failed|total)\b"
    r"|^(?:FAIL|ok|PASS)\s+\S+\s+(?:[\d.]+s|\(cached\))(?:\s+coverage: [\d.]+% of statements)?$"
    r"|^All files\s*\|"  # istanbul's coverage table (jest, vitest, nyc): its total row
    # autocannon's responses by class
    r"|^\d+ 2xx responses, \d+ non 2xx responses$"
    r"|^TOTAL\s+\d+\s+\d+(?:\s+\d+\s+\d+)?\s+\d+(?:\.\d+)?%$"  # coverage.py's report
    r"|^test result: "
    r"|^Ran \d+ tests? in "
    r"|^(?:OK|FAILED)(?: \(.*\))?$"
    r"|^Found \d+ (?:errors?|data race)"
    r"|^\d+ (?:problems?|errors?|warnings?)\b"
    r"|^\d+ files? would be reformatted\b"  # black --check, ruff format --check
    r"|^Successfully installed "
    r"|^added \d+ packages?"
    r"|^(?:Installed|Uninstalled|Resolved|Prepared|Audited) \d+ packages?"
    r"|^Packages: [+-]\d+"
    r"|^(?:up to date|removed \d+ packages?|changed \d+ packages?)"
    r"|^BUILD (?:SUCCESS|FAILURE|FAILED)"
    r"|^(?:Planning|Execution) Time: [\d.]+ ms$"  # EXPLAIN ANALYZE's totals (Postgres)
    r"|^\d+ (?:passing|failing|pending)\b"  # mocha
    r"|^\d+ examples?, \d+ failures?"  # rspec
    # phpcs's per file and its fixable count; rubocop's
    r"|^FOUND \d+ ERRORS?(?: AND \d+ WARNINGS?)? AFFECTING \d+ LINES?$"
    r"|^PHPCBF CAN FIX THE \d+ MARKED SNIFF VIOLATIONS? AUTOMATICALLY$"
    r"|^\d+ files? inspected, (?:no|\d+) offenses? detected"
    r"|^System check identified (?:no issues|\d+ issues?)"  # Django's
    r"|^Tests: \d+, Assertions: \d+|^(?:FAILURES|ERRORS)!$"  # phpunit
    r"|^# (?:tests|suites|pass|fail|cancelled|skipped|todo) \d+$"  # TAP (node --test)
    # node --test's spec reporter: its totals, zeros too (``ℹ fail 0`` says no test failed)
    r"|^ℹ (?:tests|pass|fail|cancelled|skipped|todo) \d+$"
    r"|^Your code has been rated at -?\d"  # pylint's score
    r"|^\d+ director(?:y|ies), \d+ files?$"  # tree's count
    r"|^(?:Test Files|Tests)  +\d+ (?:passed|failed|skipped|todo)\b"  # vitest
    # meson test's totals (``Ok:  1``, ``Fail:  2``, ``Timeout:  1``)
    r"|^(?:Ok|Fail|Timeout|Expected Fail|Unexpected Pass|Skipped|Total|Passed):\s+\d+$"
    # turbo's run summary (``Tasks:    3 successful, 3 total``, ``Cached:    4 cached, 6 total``)
    r"|^(?:Tasks|Cached):\s+\d+ (?:successful|cached), \d+ total$"
    r"|^Files=\d+, Tests=\d+, |^Result: (?:PASS|FAIL|NOTESTS)$"  # prove (Perl's TAP harness)
    # coverage totals: gcov's per file and overall, lcov's summary
    r"|^Lines executed:[\d.]+% of \d+$|^lines\.+: [\d.]+% \(\d+ of \d+ lines?\)$"
    # a benchmark's result rows: go test -bench, Rust's libtest, Python's timeit
    r"|^Benchmark\S+\s+\d+\s+[\d.]+ ns/op\b"
    r"|^test \S+ +\.\.\. bench: +[\d,.]+ ns/iter\b"
    r"|^\d+ loops?, best of \d+: [\d.]+ \w+ per loop$"
    # strace -c's and ltrace -c's total row (``100.00    0.003552    15 total``)
    r"|^100\.00\s+[\d.]+(?:\s+\d+){1,3}\s+total$",
    re.M,
)
# what else says how a run ended: GoogleTest's totals (``[  PASSED  ] 0 tests.``,
# ``[==========] 56 tests from 9 test suites ran. (12 ms total)``), criterion's comparison
# with the last run (``change: [-37.217% -29.409% -20.716%] (p = 0.00 < 0.05)`` and its
# verdict), and an exit status as a script or an agent printed it (``exit=1``,
# ``Exit code: 2``, go's ``exit status 1``, ``Process finished with exit code 137``)
_RUN_OUTCOME = re.compile(
    r"^\[\s+(?:PASSED|FAILED)\s+\] \d+ tests?(?:\.|, listed below:)$"
    r"|^\[=+\] \d+ tests? from \d+ test (?:suites?|cases?) ran\."
    r"|^change:\s+\[[+-]?[\d.]+% [+-]?[\d.]+% [+-]?[\d.]+%\]"
    r"|^(?:Performance has (?:improved|regressed)|No change in performance detected"
    r"|Change within noise threshold)\.$"
    r"|^(?:exit|EXIT|Exit)(?:\s*[=:]\s*|[ _](?:code|status|Code|Status)\s*[=:]?\s*)"
    r"-?(?!0+$)\d{1,3}$"
    r"|\bexited with (?:exit )?(?:code|status) -?(?!0\b)\d{1,3}\.?$"
    r"|^Process finished with exit code -?(?!0$)\d{1,3}$"
)
# a benchmark's result row in other runners: pytest-benchmark's ``test_total_2000_lines
# 1,527,373.9991 (>1000.0) ...``, Google Benchmark's ``BM_RingPush/64  3.06 ns  3.02 ns
# 23153093``, JMH's ``InvoiceBench.totalLong  1000  avgt  3  768.828 ± 640.985  ns/op``
_BENCH_ROW = re.compile(
    r"^test_\S+\s+[\d,]+\.\d+ \((?:[\d.]+|>1000\.0)\)"
    r"|^BM_\S+\s+[\d.]+ (?:ns|us|ms|s|N)\s+[\d.]+ (?:ns|us|ms|s|N)\b"
    r"|^\S+\s+(?:\S+\s+){0,3}(?:thrpt|avgt|sample|ss)\s+\d+\s+[\d.,]+(?:\s+±\s+[\d.,]+)?\s+\S+/\S+$"
)
# a load test's count per status code (hey's ``  [502]\t200 responses``)
_STATUS_COUNT = re.compile(
    r"^\[[1-5]\d\d\]\s+\d+ responses$|^Non-2xx(?: or 3xx)? responses:\s+\d+$"
)
# a load test's throughput: redis-benchmark's ``GET: 51948.05 requests per second``,
# ab's ``Requests per second:    1480.27 [#/sec] (mean)``, wrk's ``Requests/sec:  2304.12``
_THROUGHPUT_ROW = re.compile(
    r"^[\w ()-]{1,60}: [\d.]+ requests per second\b|^Requests(?: per second:|/sec:)\s+[\d.]+"
    r"|^\d+ requests completed in [\d.]+ seconds$|^[\d.]+ requests per second\b"
)
# criterion's result row (``parse_line              time:   [93.1 ns 93.5 ns 94.0 ns]``)
_CRITERION_ROW = re.compile(r"^\S.{0,120}?\s+time:\s+\[[\d.]+ \S+ [\d.]+ \S+ [\d.]+ \S+\]$")
# biome's (rome's) diagnostic headline: the file (with its place when it has one), the
# category, flags, then a rule of heavy lines (``.nyc_output/x.json format ━━━━━━━``)
_BOXED_HEAD = re.compile(r"^\S+ [\w/.-]+(?:  [A-Z]+)*\s+━{3,}$")
# a diff's headers: git's, and rustfmt's hunk header (``cargo fmt --check``'s ``Diff in
# /src/parse.rs:9:``, older ``Diff in /src/parse.rs at line 9:``)
_DIFF_HEADER = re.compile(
    r"^(?:diff --git .*|@@ .* @@.*|\+\+\+ \S.*|--- (?:a/|b/|/dev/null).*|rename (?:from|to) .*|new file mode .*|deleted file mode .*"
    r"|Diff in \S+(?::\d+| at line \d+):)$",
    re.M,
)
# (not a Go frame's function line, ``main.stage(0x9, 0xc000070, ...)``: its arguments are hex)
# (an extension holds a letter: ``127.0.0.1:45614 [06/Dec/...] ...``, a request log's client,
# is no file and line)
_FINDING = re.compile(
    r"^\s*[\w./\\@+-]{1,400}\.(?=\d{0,11}[A-Za-z])[A-Za-z0-9]{1,12}(?::|\((?!0x))\d+(?:[:,]\d+)?\)?:?.*$",
    re.M,
)
_GIT_STATUS = re.compile(
    r"^\s*(?:modified|new file|deleted|renamed|copied|typechange|both modified|both added|both deleted|added by us|added by them|deleted by us|deleted by them):\s+\S.*$"
    r"|^\s*[MADRCU?!][MADRCU? ]? \S.*$",
    re.M,
)
_CONSTRAINT = re.compile(
    r"\b(?:must|never|do not|don't|dont|always|required|requires|require|security|shall|should not|"
    r"shouldn't|cannot|can't|mustn't|forbidden|prohibited|only|important|IMPORTANT|MUST|NEVER|DO NOT|ALWAYS)\b",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|unless|except|isn't|aren't|wasn't|"
    r"weren't|doesn't|don't|didn't|won't|wouldn't|can't|cannot|couldn't|shouldn't|mustn't|hasn't|"
    r"haven't|hadn't)\b",
    re.I,
)
_TRACE_FRAME = re.compile(
    r'^\s*File "[^"]+", line \d+|^\s+at (?:[\w.-]+(?:@[\w.-]+)?/{1,2})?[\w$.<>]+\(.*:\d+\)'
    r"|^\s+at .+ \(.+:\d+:\d+\)$"
)


# Content families (whatever the command): lines that carry a fact without
# an error word, or that must count exactly rather than by shape.
#
# Locations of a finding (kind ``finding``): rustc's `` --> file:line:col``,
# go test's indented ``file_test.go:18: message``, javac through maven
# ``[ERROR] /path/File.java:[12,5]``.  eslint's (and remark's) ``  3:7  error
# message`` lines are error lines (one per shape); the file header line right
# above them (or above the stash marker that holds them) is a finding.
_LOCATION = re.compile(
    r"^\s*--> \S+:\d+"
    r"|^\s+[\w./-]+\.go:\d+: \S"
    r"|^\[ERROR\] \S+\.\w+:\[\d+,\d+\]"
    r"|^\s*❯ (?:\S+ )?\S+:\d+:\d+$"  # vitest (with the function name, when it has one)
    r"|^\s*location: '\S+:\d+:\d+'$"  # node --test (TAP)
    # a report's labelled location (bandit's ``   Location: src/app/admin.py:10:11``), a
    # file and line, not a URL
    # (ansible's ``Origin: /srv/play.yml:8:7`` under its ``[ERROR]:``)
    r"|^\s*Location: (?!\S*://)\S+\.\w{1,12}:\d+(?::\d+)?$"
    r"|^\s*Origin: (?!\S*://)\S*/\S+\.\w{1,12}:\d+(?::\d+)?$"
    # a format check's finding: the file it would change (black --check, ruff format --check)
    r"|^[Ww]ould reformat:? \S+$"
    r"|^>> Issue: \[\w+:\w+\] \S"  # bandit's finding headline, above its Location line
    # miette's frame opening (oxlint, swc, rspack; rolldown's, under vite, pads the place)
    r"|^\s*(?:,-|╭─)\[ ?[^\s\]]+:\d+:\d+ ?\]$"
)
# miette's finding headline (``  x eslint(no-debugger): ...``, ``  ! ...`` a warning; ``×``
# and ``⚠`` in unicode): a finding when its frame's location follows within 3 lines
# a test's verdict alone on its line, under the test's name (a build tool's task prefix aside)
_VERDICT_BELOW = re.compile(r"^(?:\[[\w.-]+\]\s+)?(?:FAILED|Caused an ERROR)$")
MIETTE_HEAD = re.compile(r"^ {0,4}[x×!⚠] \S")
# A related location on its own indented line: tsc --pretty's ``  src/types.ts:1:51`` above
# the snippet of what an error refers to (``'unitCents' is declared here.``), kind ``finding``
# (esbuild writes it with a colon: ``    web/main.js:4:21:`` under ``✘ [ERROR] Could not resolve``)
RELATED_LOCATION = re.compile(r"^\s+(?:[\w.@~+-]*[/\\])*[\w.@~+-]+\.\w{1,12}:\d+:\d+:?$")
# A property-based test's failing example (hypothesis: ``Falsifying example: test_x(`` or,
# since 6.1xx, ``Failing test case: test_x(``, with or without pytest's ``E`` in front): its
# argument lines up to the closing ``)`` are the failure (kind ``test_failure``), what
# reproduces it.
EXAMPLE_HEAD = re.compile(r"^(?:E\s+)?(?:Falsifying example|Failing test case): \S+\($")
EXAMPLE_END = re.compile(r"^(?:E\s*)?\)$")
# pip's resolver: the indented lines under ``The conflict is caused by:`` (``The user requested
# urllib3<2``, ``types-requests 2.32.4 depends on urllib3>=2``) say why it failed (kind
# ``error_line``: one per shape, so a version repeated 27 times is one fact)
CONFLICT_HEAD = "The conflict is caused by:"
# a Django system check message: its object (``?`` for the project) and its id
_DJANGO_CHECK = re.compile(r"(?:\?|[A-Za-z_][\w.]{0,100}): \((?:[a-z_]+\.)+[EWCI]\d{3}\) \S")
# a row of phpcs's full report (``  11 | WARNING | [ ] Line exceeds 120 characters``)
_PHPCS_ROW = re.compile(r"\d+ \| (?:ERROR|WARNING) +\| ")
_ESLINT_FINDING = re.compile(r"^\s+\d+:\d+\s+(?:error|warning)\s")
# A grouped linter report's finding (kind ``finding``, each one exactly): ``  32:29 ANN001
# Missing type annotation ...`` under its file's header line (``ruff --output-format
# grouped``, flake8's and pycodestyle's grouped formatters): line:col and a rule code, no
# error word.
CODED_FINDING = re.compile(r"^\s+\d+:\d+\s+[A-Z]{1,6}\d{2,5}\b")
_PATH_HEADER = re.compile(r"^(?:[A-Za-z]:)?[\w.@~+-]*(?:[/\\][\w.@~+-]+)+\.\w{1,12}:?$")
#: a finding that names no file, only ``line:col`` (eslint's stylish ``  9:23  error  ...``,
#: grouped linters' ``  32:29 ANN001 ...``): it is the finding of the file header above it
POSITIONAL_FINDING = re.compile(r"^\s+\d+:\d+\s")


def finding_sections(lines: Sequence[str]) -> list[str] | None:
    """For each line, the file header its positional finding sits under (``""`` for any
    other line); None when no line is such a finding.

    The same finding text (``9:23  error  Expected '===' ...  eqeqeq``) under two files is
    two facts, each with its own location: an engine that keeps one copy of each critical
    line keeps one per file."""
    if not any(POSITIONAL_FINDING.match(line) for line in lines):
        return None
    out: list[str] = []
    header = ""
    for line in lines:
        stripped = line.strip()
        if line[:1] not in ("", " ", "\t") and "." in stripped and _PATH_HEADER.match(stripped):
            header = stripped
        out.append(header if POSITIONAL_FINDING.match(line) else "")
    return out


# Go test results (kind ``test_failure``): ``--- FAIL: TestDiscount/case_5 (0.00s)``.
_GO_FAIL = re.compile(r"^\s*--- FAIL: \S")
# ``commit 782d22417f776f4e4fd05782c9c9d6bd2942b3fc`` (git log, git show; kind ``commit``): the
# id a later step names (``git revert``, ``git show``); aging kept 14 of 52 of an older log's
_GIT_COMMIT = re.compile(r"^commit [0-9a-f]{40}\b")
# a full commit id that opens a sentence (``d3fa0b85… is the first bad commit``, git bisect's
# answer): the commit it names is a fact in any output (not a plumbing row: ``git blame -l``,
# ``show-ref``, ``cat-file --batch-check`` put a sha in front of every line)
_SHA_SENTENCE = re.compile(r"^[0-9a-f]{40} (?:is|was|were|has|had|seems) \w")
# git's --stat summary of a commit or a diff (`` 2 files changed, 9 insertions(+), 1 deletion(-)``)
_STAT_SUMMARY = re.compile(
    r"^\d+ files? changed(?:, \d+ insertions?\(\+\))?(?:, \d+ deletions?\(-\))?$"
)
# ``git log --oneline [--graph]``: ``* 4d8a4d6 (HEAD -> main) Fix ...``, ``| * a0e3378 Add ...``
_ONELINE_COMMIT = re.compile(r"^(?:[*|/\\_][*|/\\_ ]*)?[0-9a-f]{7,12} \S")
# Crash and report headlines without an error word (kind ``error_line``):
# sanitizer summaries and leak reports, valgrind's findings, leak summary and the heap
# summary's ``in use at exit:`` when memory is left,
# make's ``*** ...`` lines, Rust panics, C++'s ``terminate called after throwing an
# instance of 'std::out_of_range'``, HTTP 5xx access-log lines.
# the thread checkers' findings (helgrind, DRD): ``Possible data race during read of size 8 at
# 0x10C060 by thread #3``, ``Conflicting store by thread 1 at 0x...``, ``Thread #1 unlocked a
# not-locked lock``, ``Thread #3: lock order "0x.. before 0x.." violated`` (not a thread's
# announcement: ``Thread #3 was created``)
_VALGRIND_THREAD_ERRORS = (
    r"Possible data race during |Conflicting (?:load|store) by thread "
    r"|Thread #\d+(?! was created| is the program's root thread)(?::|'s call to| \w+ (?:a|the) )"
)
_CRASH_HEAD = re.compile(
    r"^(?:SUMMARY: \w*Sanitizer: |(?:Direct|Indirect) leak of |make(?:\[\d+\])?: \*\*\* "
    r"|thread '[^']*' panicked at "
    r"|terminate called (?:after throwing an instance of |without an active exception)"
    r"|Program (?:received|terminated with) signal SIG[A-Z]+"  # gdb
    r"|(?:\[pid\s+\d+\] )?(?:--- SIG(?:SEGV|BUS|FPE|ILL|ABRT|SYS) \{|\+\+\+ killed by SIG[A-Z]+"
    r"|--- SIGCHLD \{.*si_status=SIG(?:SEGV|BUS|FPE|ILL|ABRT|SYS|KILL)\b)"
    r"|< HTTP/\d(?:\.\d)? 5\d\d\b"  # curl -v: the server's answer, a 5xx
    # a JVM thread dump's deadlock report and its count; a Go runtime's signal dump
    # (``SIGQUIT: quit``, ``SIGSEGV: segmentation violation``) above every goroutine's stack
    r"|Found (?:one|\d+) Java-level deadlocks?:|Found \d+ deadlocks?\.$"
    # git's merge and rebase conflicts: the file in conflict, the commit that did not apply
    r"|CONFLICT \([\w/ -]{1,40}\): |Could not apply [0-9a-f]{7,40}\.\.\. "
    r"|Automatic merge failed; "
    r"|SIG[A-Z]{2,8}: [a-z][\w ]{0,40}$"
    r"|==\d+==\s*(?:definitely lost:|possibly lost:|in use at exit: [1-9]"
    r"|Invalid (?:read|write|free)|Conditional jump|Use of uninitialised|Mismatched free|Syscall param|Source and destination"
    r"|[\d,]+ (?:\([\d,]+ direct, [\d,]+ indirect\) )?bytes in [\d,]+ blocks are"
    r" (?:definitely|possibly) lost|" + _VALGRIND_THREAD_ERRORS + "))"
)
_HTTP_5XX = re.compile(
    r'"(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|CONNECT|TRACE) \S+ HTTP/[\d.]+"\s+5\d\d\b'
    # HAProxy's httplog: the timers (``Tq/Tw/Tc/Tr/Ta``), then the status, the request last
    r"|(?:-?\d{1,9}/){3,4}\+?-?\d{1,9} 5\d\d \d"
)
# the status line of a response ``curl -v`` (``-i`` without the ``<``) received: what a request
# came to
_RESPONSE_STATUS = re.compile(r"< HTTP/\d(?:\.\d)? [1-5]\d\d\b")
# ``curl -i``'s status line when the request failed (``HTTP/1.1 404 Not Found``)
_FAILED_RESPONSE = re.compile(r"HTTP/\d(?:\.\d)? [45]\d\d\b")
# a request answered with a 5xx in other access-log shapes: a method, a path and the status
# (morgan's ``GET /orders/3 500 4.123 ms - 148``), squid's ``TCP_MISS/503 3466 GET http://...``,
# a structured log's ``status=502`` (logfmt, tracing) or ``"status": 500`` (JSON; not a
# metric's label, ``status="503"``)
_REQUEST_5XX = re.compile(
    # the method, the path, the status and a time taken (not a test's title: ``GET /x 500
    # when the db is down``)
    r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /\S* 5\d\d (?:[\d.]+ ?(?:ms|s|µs)|\S+ - [\d.]+ ?ms)\b"
    r"|\b[A-Z]+(?:_[A-Z_]+)?/5\d\d \d+ (?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|CONNECT) "
    r"|\[GIN\] .*\| 5\d\d \|"  # gin: ``[GIN] 2024/03/01 - 12:00:01 | 500 | 12ms | ...``
    # PHP's built-in server: ``[Mon Dec  7 23:00:30 2026] 127.0.0.1:50246 [500]: GET /transfer/3``
    r"|\[5\d\d\]: (?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /"
    # a structured log's status beside the request it answers
    r"|\bstatus(?:_code|Code)?=5\d\d\b(?=.*\b(?:method|path|uri|url|route)=)"
    r"|\b(?:method|path|uri|url|route)=.*\bstatus(?:_code|Code)?=5\d\d\b"
    r"|\"status(?:_code|Code)?\": ?5\d\d\b(?=.*\"(?:method|path|uri|url|request)\")"
    r"|\"(?:method|path|uri|url|request)\".*\"status(?:_code|Code)?\": ?5\d\d\b"
    # pino-http's and Fastify's ``"res":{"statusCode":500}`` (the url was on the request's
    # ``incoming request`` line), or a status beside the request's id or its response time
    r"|\"res\": ?\{[^{}\n]{0,200}?\"status(?:_code|Code)?\": ?5\d\d\b"
    r"|\"status(?:_code|Code)?\": ?5\d\d\b(?=.*\"(?:req_?[iI]d|request_?[iI]d|response_?[tT]ime)\")"
    r"|\"(?:req_?[iI]d|request_?[iI]d|response_?[tT]ime)\".*\"status(?:_code|Code)?\": ?5\d\d\b"
)
# The indented line under ``CMake Error at CMakeLists.txt:12 (add_executable):``
# (``  No SOURCES given to target: app``) is a fact too (kind ``error_detail``), and so is
# the message line under a Rust panic's ``thread 'main' panicked at src/x.rs:60:23:``
# (``index out of bounds: the len is 3 but the index is 7``, ``called `Result::unwrap()`
# on an `Err` value: ...``): the headline ends in a colon and the message is the next line;
# as is C++'s ``  what():  map::at`` under ``terminate called after throwing an instance of``.
# a bare error headline whose message is the next line (jshell's ``|  Error:`` above
# ``|  incompatible types: java.lang.String cannot be converted to int``), and an exception's
# bare class name (rspec's ``NameError:`` above ``  uninitialized constant Invoicer::TaxRate``)
_BARE_ERROR_HEAD = re.compile(
    r"(?:^|[\s>|])(?:Error|ERROR|error|Fatal error|FATAL ERROR):$|^(?:FAILED|Failed):$"
    r"|^(?:[A-Z]\w*(?:::|\.))*[A-Z]\w*(?:Error|Exception):$"
)
_PANIC_WITH_MESSAGE_BELOW = re.compile(
    r"^thread '[^'\n]{0,200}'(?: \(\d+\))? panicked at \S+:$"
    r"|^terminate called after throwing an instance of "  # C++: ``  what():  ...`` below
)
# PostgreSQL's lines under an ERROR (psql's and the server log's): ``DETAIL:  Key (email)=(a@b)
# already exists.``, ``HINT:  Perhaps you meant to reference the column "o.total_cents".``
_PG_DETAIL = re.compile(r"(?:^|\s)(?:DETAIL|HINT):  \S")
# ... within this many lines under the error (psql's ``LINE 1:`` and caret come between; a
# server log's routine ``DETAIL:  parameters: $1 = ...`` under a statement is no fact)
_PG_DETAIL_WINDOW = 3
_PG_LOG = re.compile(r"(?:^|\s)LOG:  ")
# a TypeScript diagnostic's code and message on its own line (ts-loader under webpack)
_TS_CODE = re.compile(r"^TS\d{4,5}: \S")
# javac's ``symbol:`` line under ``File.java:6: error: cannot find symbol`` (after the source
# line and its caret; ``required:``/``found:`` under an older ``incompatible types``): what the
# error is about, a fact as a panic's message is (``location:`` is help text)
_JAVAC_HEADLINE = re.compile(r"^\S+\.java:\d+: error: |^\[ERROR\] \S+\.java:\[\d+,\d+\] ")
_JAVAC_DETAIL = re.compile(r"^\s+(?:symbol|required|found):\s+\S")
_JAVAC_DETAIL_WINDOW = 4  # lines under the headline where it may stand
# A line that says again, behind a log level, what a line above said (maven's ``Failed to
# execute goal ... Compilation failure:`` lists every compiler error a second time, each
# line as ``[ERROR]   symbol:   variable yr``): the line above is the fact
RELOGGED = re.compile(r"^\[(?:ERROR|WARNING|WARN)\] ")
# A build tool's advice behind its error level, the same after every failure (maven's
# ``[ERROR] -> [Help 1]``, ``[ERROR] Re-run Maven using the -X switch ...``, its empty
# ``[ERROR]`` lines): help text, no fact
TOOL_ADVICE = re.compile(
    r"^\[(?:ERROR|WARNING)\]\s*(?:$|-> \[Help \d+\]$|\[Help \d+\] https?://\S+$"
    r"|To see the full stack trace of the errors, re-run Maven with the -e switch\.$"
    r"|Re-run Maven using the -X switch to enable full debug logging\.$"
    r"|For more information about the errors and possible solutions, please read the following"
    r" articles:$"
    r"|See dump files \(if any exist\) )"
)
# rustc's primary label under an error whose headline names nothing (``error[E0308]: mismatched
# types``, then ``   |            ^^^^^^^^^^^^^ expected `u32`, found `usize```): what the error
# is, as the symbol is of javac's; the first one of the block is a fact (a headline that quotes
# a name, ``missing field `weight```, says it already; a warning's labels stay help text)
_RUST_ERROR = re.compile(r"^error(?:\[E\d{4}\])?: ")
_RUST_LABEL = re.compile(r"^\s*\|[^\n]*?\^+[ \t]+[^\s^|]")
# After a crash headline (Go panic or race, sanitizer, valgrind, a Java or
# JavaScript exception), the first frame in user code is a fact too (kind
# ``stack_frame``).
_FRAME_HEAD = re.compile(
    r"^(?:panic: |fatal error: |WARNING: DATA RACE|WARNING: ThreadSanitizer: "
    r"|==\d+==(?:ERROR: |WARNING: \w+Sanitizer: |\s*(?:Invalid|Conditional|Use of"
    r"|Mismatched|Syscall|Source and|[\d,]+ .*lost|" + _VALGRIND_THREAD_ERRORS + "))"
    r"|(?:Direct|Indirect) leak of "
    r"|Exception in thread |Caused by: |thread '[^'\n]{0,200}'(?: \(\d+\))? panicked at "
    r"|Program received signal |Found (?:one|\d+) Java-level deadlocks?:|SIG[A-Z]{2,8}: [a-z]"
    r"|(?:Uncaught )?(?:[A-Za-z_$][\w.$]*)?(?:Exception|Error)(?: \[[\w-]+\])?(?::|$)"
    # PHP's uncaught exception, in a server's log too (``[Mon Dec  7 23:00:35 2026] PHP Fatal
    # error:  Uncaught TypeError: ...``): its ``#0 /src/public/index.php(26): ...`` frames follow
    r"|(?:\[[^\]\n]{1,60}\] )?(?:PHP )?Fatal error: +Uncaught )"
)
# a sanitizer report's section with a stack of its own: ThreadSanitizer's accesses (``Read of
# size 8 at 0x... by thread T2:``, ``Previous write of size 8 ...``), MemorySanitizer's origin,
# AddressSanitizer's ``freed by thread T0 here:``: its first frame in user code is a fact
_SANITIZER_SECTION = re.compile(
    r"^\s*(?:(?:Previous )?(?:[Rr]ead|[Ww]rite|[Aa]tomic \w+) of size \d+ at 0x[0-9a-f]+ by "
    r"|Uninitialized value was created by "
    r"|(?:freed|previously allocated) by thread \S+ here:)"
)
# what the report says the memory is (``Location is global 'hits' of size 8 at 0x...``) or
# where an uninitialised value came from: part of the error
_SANITIZER_DETAIL = re.compile(r"^\s*(?:Location is |Uninitialized value was created by )")
_NATIVE_FRAME = re.compile(
    r"^\s+/\S+\.go:\d+(?: \+0x[0-9a-f]+)?(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?\s*$"
    # a sanitizer's frame, its function one word or a C++ signature (``in LruCache::put(std::
    # basic_string<char> const&, int) /src/lru.cpp:10``)
    r"|^\s*#\d+ 0x[0-9a-f]+ in (?:\S+|[^()\n]+\(.*\)(?: const)?) \S+:\d+"
    # ThreadSanitizer's (clang's with its ``(BuildId: ...)``; a file without line info too)
    r"|^\s*#\d+ \S+ \S+?(?::\d+(?::\d+)?)? \([^()\s]+\+0x[0-9a-f]+\)(?: \(BuildId: \w+\))?$"
    r"|^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: .*\(\S+:\d+\)$"
    r"|^\s+at [\w$.<>]+\(.*:\d+\)|^\s+at .+ \(.+:\d+:\d+\)$"
    r"|^\s+at \S+:\d+:\d+$"  # a Rust backtrace frame's location (under its function)
    # gdb's frame: ``#1  0x00005555 in main (argc=4, argv=0x7ff) at tools/tilecat.c:24``
    r"|^(?:#\d+\s+)?(?:0x[0-9a-f]+ in )?[\w:~<>.]+ \(.*\) at \S+:\d+$"
    # PHP's: ``#0 /srv/app/public/index.php(26): Ledger\Ledger->get()``
    r"|^#\d+ \S+\.php\(\d+\): \S"
)
# an error's ``code`` among the properties node prints under its stack (``  code: 'EADDRINUSE',``)
_NODE_ERROR_CODE = re.compile(r"^\s+code: '[A-Z][A-Z0-9_]{2,40}',?$")
# where PHP says an uncaught exception was thrown (``  thrown in /src/Ledger.php on line 22``)
_PHP_THROWN = re.compile(r"^\s+thrown in \S+ on line \d+$")
# a Rust backtrace frame's function, above its ``at ./src/lib.rs:132:22`` (``6: ledger::Ledger::page``)
_RUST_FRAME_FUNCTION = re.compile(r"\d+: \S")
# a JVM frame (``at pkg.Class.method(File.java:12)``) in the runtime or a framework or
# library that applications run on, not in the application: servlet containers, Spring,
# test runners, serialisers, drivers, RPC and cloud SDKs
JVM_LIBRARY_FRAME = (
    r"\bat (?:[\w.-]+(?:@[\w.-]+)?/{1,2})?"  # a class loader or module (``app//``, ``java.base/``)
    r"(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|groovy|jakarta|junit\.framework"
    r"|android|androidx|dalvik|com\.android"
    r"|org\.(?:junit|apache|springframework|hibernate|eclipse|glassfish|jboss|gradle|mockito"
    r"|opentest4j|assertj|testng|codehaus|slf4j|postgresql|h2|flywaydb|aspectj|xml|hamcrest)"
    r"|ch\.qos\.logback"
    r"|io\.(?:netty|grpc|micronaut|quarkus|vertx|undertow|reactivex|projectreactor|micrometer)"
    r"|reactor\.core|reactor\.netty|akka|sbt|okhttp3|okio|retrofit2|feign|net\.bytebuddy"
    r"|com\.(?:fasterxml|google\.common|google\.protobuf|google\.inject|zaxxer|mysql|amazonaws"
    r"|intellij|squareup)|software\.amazon|worker\.org\.gradle)[.$/]"
)
_NOT_USER_FRAME = re.compile(
    r"/usr/|\(/lib|^\s*/lib|/go/src/|/rustc/|/\.cargo/registry/|/pkg/mod/|\bnode:[\w/]+:\d|"
    r"/lib/python\d|site-packages/|<frozen |"
    # a virtualenv's console script (``File "/srv/venv/bin/alembic", line 8, in <module>``)
    r"/(?:\.?venv|\.?env|virtualenv|\.tox/[\w.-]+)/bin/\w|"
    r"node_modules|\(internal/|" + JVM_LIBRARY_FRAME + "|"
    r"sanitizer|asan_|libc[.-]|compiler-rt|/csu/|/sysdeps/|"
    # valgrind's frame in libc's allocator or string functions built with their line table
    # (``by 0x48F99A9: strdup (strdup.c:42)``): the caller below is the user's frame
    r"^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: (?:malloc|calloc|realloc|reallocarray|free|strdup"
    r"|strndup|memcpy|memmove|memset|strcpy|strncpy|strcat|strlen|asprintf|vasprintf"
    r"|operator new(?:\[\])?|operator delete(?:\[\])?)[ (]"
)


def is_crash_headline(line: str) -> bool:
    """Whether ``line`` (stripped) heads a crash report: a Go panic or race, a sanitizer or
    valgrind finding, a Java or JavaScript exception (its first user frame is a fact)."""
    return _FRAME_HEAD.match(line) is not None


def is_user_frame(frame: str) -> bool:
    """Whether a stack frame (its lines joined) is in user code: not in a runtime, the
    standard library, a dependency, the sanitizer or libc."""
    return _NOT_USER_FRAME.search(frame) is None


_ANSI = ANSI  # the one escape-sequence pattern
_TEST_FAILURE = re.compile(
    # jest/vitest/mocha, TAP (jest's ``● Console`` heads console.log output, not a failure)
    r"^\s*(?:[✕×✗✘✖] |● (?!Console\s*$))\S|^\s*not ok \d+ (?:- )?(?!#)\S"
    r'|^\s*FAIL +(?:\S+ +)?"[^"\n]+"$'  # uvu's failing test, its suite first (its message next)
    r"|^_{3,} \S.* _{3,}$"  # pytest's failure section header
    r"|^---- \S+ stdout ----$"  # cargo test
    r"|^rspec \S+(?::\d+|\[[\d:]+\]) # "  # rspec's failed examples
)
# minitest's failing test under ``  1) Failure:`` (``TestCart#test_total [test/cart.rb:24]:``)
_MINITEST_FAILURE = re.compile(r"^[A-Z]\w*(?:::[A-Z]\w*)*#\S+ \[[^\]\n]+:\d+\]:$")
# A counted test result that failed (meson's ``4/4 cqueue:test_stress TIMEOUT  10.06s``,
# ``2/4 cqueue:test_pool   FAIL  0.02s   exit status 1``)
_COUNTED_RESULT_FAILED = re.compile(
    r"^\s*\d+/\d+ +\S+ +(?:FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS|UNEXPECTED PASS)\b"
)
# Test reports that number their failures (mocha, rspec, phpunit, JUnit):
# after ``N failing``, ``Failures:`` or ``There were N failures:``, each
# ``  1) name`` line is a failing test id (kind ``test_failure``).
_FAILURES_HEAD = re.compile(
    r"^(?:\d+ failing\b|Failures:$|There (?:was|were) \d+ (?:failures?|errors?|risky tests?):$)"
)
_NUMBERED_FAILURE = re.compile(r"^\s*\d+\) \S")
# a runner's closing list of what failed, one indented item a line up to a blank line
# (behave's ``Failing scenarios:`` / ``Errored scenarios:``, ``Failed tests:``, ``Failed
# examples:``): every item names a failing test, whatever numbers alone tell them apart
_FAILED_LIST_HEAD = re.compile(
    r"^(?:Failing|Failed|Errored|Erroring|Broken|Crashed|Timed out) "
    r"(?:scenarios|tests|specs|examples|cases|suites|steps):$",
    re.I,
)
# mocha numbers a failing test where it runs it too (``  1) never returns a negative total``
# among the ``✔`` lines, before its ``N failing`` summary), and under the summary's
# ``  1) suite`` line it writes the suite path and the test's title, ending in ``:``
_MOCHA_FAILING = re.compile(r"^\s*\d+ failing\b", re.MULTILINE)
# After a failing test: its assertion and diff lines (kind ``test_failure`` too):
# pytest's ``E`` lines, cargo's ``left:``/``right:``, jest's ``Expected:``/
# ``Received:``, rspec's ``expected:``/``got:``, TAP's ``expected:``/``actual:`` (and Perl's
# Test::More's, behind TAP's comment mark: ``#          got: '9'``).
_ASSERTION = re.compile(
    r"^\s*(?:E {2,}\S|(?:#\s+)?(?:left|right|expected|actual|Expected|Received|got|want): ?\S"
    # a matcher's sentence (jasmine's ``Expected $[0].qty = 3 to equal 5.``, chai's
    # ``expected 3 to equal 5``, ``Expected function to throw an Error.``)
    r"|[Ee]xpected .{1,400}? to (?:not )?(?:equal|be|contain|have|match|throw|include|deep)\b)"
)
# jest's and vitest's diff of a failing ``toEqual``: after ``- Expected`` (and ``+ Received``),
# node's and mocha's after ``+ actual - expected`` (or ``+ expected - actual``),
# every changed line (``-``/``+`` first, ``@@`` hunk headers too) is part of the failure,
# up to the frame or ``❯ file:line:col`` under it, the next failing test, a separator or
# a line left of the header (TAP's YAML block goes on with ``code: 'ERR_ASSERTION'``).
# a failure's headline in a C++ test framework (GoogleTest's ``test.cpp:8: Failure``, Catch2's
# ``test_queue.cpp:23: FAILED:``), in a C/C++ source file: the lines under it are the failure
# (GoogleTest's values to its ``[  FAILED  ]``, Catch2's assertion and expansion to a blank)
_FAILURE_AT = re.compile(
    r"^\S+\.(?:c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|ipp|m|mm|cu):\d+: (?:Failure|FAILED:)$"
)
_FAILURE_BLOCK_LINES = 10
# a label inside such a block (Catch2's ``with expansion:``, GoogleTest's ``Expected equality
# of these values:``): the same words under every assertion, passing ones too
_BLOCK_LABEL = re.compile(r"^[A-Za-z][A-Za-z ]{0,60}:$")
# what ends a failure's message before its ``[  FAILED  ]``: the test's own log lines (glog's
# ``I0501 12:00:00.000000 ...``, a timestamp) and the next test's markers
_FAILURE_BLOCK_END = re.compile(r"^(?:\[|[IWEF]\d{4} \d\d:|\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d)")
# an error's cause under its headline (uv's ``  cause: Because pandas==2.2.3 depends on ...``,
# cargo's ``Caused by:`` items), with the lines its message wraps onto (indented deeper)
_CAUSE_LINE = re.compile(r"^([ \t]+)(?:cause|caused by|reason):[ \t]+\S", re.I)
_CAUSE_WRAP_LINES = 8
# the JUnit Platform console launcher's failing test, under its ``Failures (6):`` (its ``=>``
# exception line is an error line of its own)
_JUNIT_PLATFORM_FAILURE = re.compile(r"^\s+JUnit (?:Jupiter|Vintage|Platform Suite):\S")
_EXPECTED_HEAD = re.compile(
    r"^(?:- Expected\b|\+ actual - expected$|\+ expected - actual$"
    # ava's ``Difference (- actual, + expected):`` (``Difference:`` before ava 6)
    r"|Difference(?: \(- actual, \+ expected\))?:$"
    # node:assert's and uvu's ``Expected values to be strictly equal:`` (uvu: ``++`` expected,
    # ``--`` actual)
    r"|Expected values to be (?:\w+ )?(?:equal|unequal|deep-equal):)"
)
# a task runner's prefix on every line of a task's output: turbo's ``@scope/pkg:test: ``, nx's
# and lerna's ``pkg:build: ``, docker compose's ``web_1     | ``, honcho's ``web.1 | ``
_TASK_PREFIX = re.compile(r"(?:@[\w.-]+/)?[\w.-]+:[A-Za-z][\w:.-]*:(?: |$)|[\w.-]+ +\|(?: |$)")
_TASK_PREFIX_SAMPLE = 400
# what a prefix is not: a log level (``ERROR    | app.db | ...``), a file (``api.log:ERROR: ...``
# of a grep through several files)
_NOT_A_TASK = re.compile(
    r"(?i)\b(?:error|err|warn(?:ing)?|info|debug|critical|crit|fatal|trace|notice)\b"
    r"|^[^:|]*\.(?:log|txt|out|err|json|ya?ml|py|js|ts|go|rs|java|c|h|cpp|md|cfg|conf|ini)\b"
)


# grep's line number before a line of one file (not a date's year: ``2026-12-07``, nor a
# time's hour: ``14:51:14``)
_GREP_NUMBER = re.compile(r"\d{1,9}[:-](?!\d\d[-:]\d\d)(?!\d\d-\d\d[ T])")


def _grep_numbered(lines: Sequence[str]) -> bool:
    """Whether most of the first non-blank lines (``--`` between groups aside) start with
    grep's line number."""
    head = [line for line in lines[:60] if line.strip() and line != "--"][:20]
    return len(head) >= 3 and 2 * sum(1 for line in head if _GREP_NUMBER.match(line)) > len(head)


def _has_task_prefix(lines: Sequence[str], has_ansi: bool) -> bool:
    """Whether most of ``lines`` start with a task prefix (``_TASK_PREFIX``: a few tasks, each
    with many lines): the rules then read what follows it."""
    prefixes: dict[str, int] = {}
    sample = 0
    head = [line for line in lines[:40] if line.strip()][:12]
    if has_ansi:
        head = [_ANSI.sub("", line) if "\x1b" in line else line for line in head]
    if len(head) < 6 or sum(1 for line in head if _TASK_PREFIX.match(line)) < 4:
        return False  # most lines carry one: a third of the first ones do too (a tool's
        # own header may come first: turbo's version and scope lines)
    for raw in lines[:_TASK_PREFIX_SAMPLE]:
        if has_ansi and "\x1b" in raw:
            raw = _ANSI.sub("", raw)
        if not raw.strip():
            continue
        sample += 1
        found = _TASK_PREFIX.match(raw)
        if found is not None and _NOT_A_TASK.search(found.group()) is None:
            prefixes[found.group()] = prefixes.get(found.group(), 0) + 1
    hits = sum(prefixes.values())
    return sample >= 6 and hits * 2 >= sample and len(prefixes) * 3 <= hits


# a failing test's place on a line of its own, a file and a line (ava, above the source lines)
_BARE_LOCATION = re.compile(
    r"^ +(?:[\w.@~+-]+/)*[\w.@~+-]+"
    r"\.(?:[cm]?[jt]sx?|py|go|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|swift|scala|exs?|vue|svelte)"
    r":\d+$"
)
# the message of an error object node prints (``TypeError {`` / ``  message: '...',``)
_ERROR_MESSAGE = re.compile(r"^\s+message: ['\"`]")
_EXPECTED_END = re.compile(
    r"^\s*(?:at \S|[❯›] |[✕×✗✘●] |(?:FAIL|PASS)\b|⎯|Test Suites:|Tests?\b.*\d+ (?:passed|failed))"
)
# A Ruby frame in the project (``# ./spec/cart_spec.rb:41:in `block ...'``, rspec).
_RUBY_FRAME = re.compile(r"^\s*# \./\S+:\d+:in ")
_GREP_MATCH = re.compile(r"^([^\s:][^:\n]{0,400}?):(?:\d+[:-])?")
# what a file name before a match looks like: no blank, quote, bracket or ``=``, not a line
# number alone (``grep -n``) and not a date (a log line's ``2026-12-03T09:14:02``, syslog's
# ``Dec  3 02:11:09``, slog's ``time=...``, a JSON line's ``{"level":50`` are no file names)
_GREP_FILE = re.compile(r"(?!\d+$)(?!\d{4}-\d\d)[^\s\"'{}\[\]<>=]+")
_SHORT_STATUS = re.compile(r"^(?:[MADRCU?! ][MADRCU?! ]|\?\?) \S")
_GREP_COMMANDS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"})


# A read of one source file (``cat src/app.py``, ``sed -n 10,80p lib.rs``, ``head -n 40
# main.go``; a read tool's call arrives as ``cat PATH``): the text is code, not a report.
# Its error words (``raise ValueError(``, ``log.error(...)``, ``if err != nil``) are no
# findings: the outline engine and aging may stash whole bodies (expand gives them back).
# A failed read (``cat: x.py: No such file or directory``) is read as any output.
_READ_COMMANDS = frozenset({"cat", "head", "tail", "sed", "nl", "less", "more", "bat", "batcat"})
# a file of source code, by its name (its reads stay whole; a read of another kind of file may be
# shortened when it is big data: workers.engines.smartcrush)
SOURCE_FILE = re.compile(
    r"[\w@+-][\w.@+-]*\.(?:py|pyi|go|rs|ts|tsx|mts|cts|js|jsx|mjs|cjs|java|kt|kts|scala|groovy"
    r"|c|h|cc|cpp|cxx|hpp|hh|hxx|cs|rb|php|swift|m|mm|lua|dart|ex|exs|erl|hs|ml|zig|vue|svelte"
    r"|sh|bash)['\"]?$"
)
_READ_FAILURE = re.compile(
    r"(?:(?:cat|head|tail|sed|nl|less|more|bat|batcat): |<tool_use_error>|error\b"
    r"|file does not exist|no such file)",
    re.I,
)
# a merge left in the file: the conflict's markers are what the reader must see
_CONFLICT_MARKER = re.compile(r"^(?:<{7}|>{7})(?: |$)|^={7}$")


def _source_read(segment: str) -> bool:
    words = segment.split()
    if words[0] not in _READ_COMMANDS or len(words) < 2:
        return False
    if words[0] == "sed" and "-n" not in words[1:-1]:
        return False  # a sed that prints every line is an edit or a filter, not a read
    return SOURCE_FILE.search(words[-1]) is not None and "/" not in words[-1].rpartition(".")[2]


def command_family(command: str | None) -> str | None:
    """``grep``, ``git-status``, ``git-log``, ``source-read`` or ``None``: the families whose
    facts differ."""
    if not command:
        return None
    segments = command_segments(command)  # wrappers, env assignments and paths removed
    reads = [s for s in segments if not s.startswith("cd ")]
    if len(reads) == 1 and _source_read(reads[0]):
        return "source-read"
    for segment in segments:
        words = segment.split()
        head = words[0]
        if head == "git" and len(words) > 1:
            sub = next((w for w in words[1:] if not w.startswith("-")), "")
            if sub == "status":
                return "git-status"
            if sub == "log":
                return "git-log"
            if sub == "grep":
                return "grep"
        if head in _GREP_COMMANDS:
            return "grep"
    return None


# First characters (of the line, or of the stripped line) that the line rules
# can start with: one set lookup spares most lines five regex calls.
_DIFF_FIRST = frozenset("d@+-rnD")
_FRAME_FIRST = frozenset("Fa")
_SUMMARY_FIRST = frozenset("=TFoPtROSaAIUurcBE#ℹYLlC")
# surefire's result of one test class that passed (``Time elapsed`` names a class, the
# totals line has none): a passing test, counted by the marker, not a failure word
_SUREFIRE_PASS = re.compile(
    r"^(?:\[INFO\] )?Tests run: \d+, Failures: 0, Errors: 0, Skipped: \d+, Time elapsed: "
    r"[\d.,]+ s(?:ec)?(?: -{1,2} in [\w.$]+)?$"
)
# bats' place of a failure under its ``not ok`` line: ``# (in test file tests/a.bats, line 24)``,
# ``# (from function `check' in file tests/helper.bash, line 5,``
_TAP_LOCATION = re.compile(
    r"^#\s{1,4}\((?:in test file|from function \S{1,200} in file|in file) [^,\n]{1,400}, line \d+[),]"
)
_FAILURE_FIRST = frozenset("✕×✗✘✖●n_-rF")
_LOCATION_FIRST = frozenset("-[❯lLwW>,╭O")
_CRASH_FIRST = frozenset("SDImt=P[-+<FCA")
# shellcheck's default (tty) format: a finding's place on a line of its own (``In deploy.sh
# line 13:``), the code line, then each finding under a caret (``^-- SC2164 (warning): Use
# 'cd ... || exit' ...``, at any level), then its ``Did you mean:`` fix: place and findings
# are facts, the code and the fix help text
_SHELLCHECK_LOCATION = re.compile(r"^In \S.{0,300} line \d+:$")
_SHELLCHECK_FINDING = re.compile(r"^\^-*\^? SC\d{4} \((?:error|warning|info|style)\): \S")
# a JVM thread dump's deadlock report: ``Found one Java-level deadlock:``, then each thread of
# the cycle (``"ledger-reconciler":``, ``  which is held by "journal-poster"``), then their
# stacks, each under its thread's name again, until ``Found 1 deadlock.``
_DEADLOCK_HEAD = re.compile(r"^Found (?:one|\d+) Java-level deadlocks?:$")
_DEADLOCK_END = re.compile(r"^Found \d+ deadlocks?\.$")
_DEADLOCK_THREAD = re.compile(r'^"[^"\n]{1,200}":$')
# a goroutine's header in a Go stack dump (``goroutine 18 gp=0x.. m=nil [sleep]:``, ``goroutine 7
# [chan receive, 2 minutes]:``): after a crash headline, each goroutine's first frame in user
# code is a fact (what a hang's goroutines wait on)
_GOROUTINE_HEAD = re.compile(
    r"^goroutine \d+ (?:gp=0x[0-9a-f]+ m=\S+ (?:mp=0x[0-9a-f]+ )?)?\[[^\]\n]*\]:$"
)
_NATIVE_FIRST = frozenset("/#=a0")


def _tool_lines(text: str, family: str | None) -> Iterable[tuple[str, str]]:
    last_frame: str | None = None
    last_at_frame: str | None = None  # the last frame, when it is an ``at`` frame (as read)
    last_user_frame: str | None = None  # the innermost Python frame in user code so far
    # ... and the outermost: where the traceback enters user code (the endpoint a server
    # called, above the helper that raised)
    first_user_frame: str | None = None
    in_traceback = False  # after ``Traceback ...:`` or a Python frame, until its exception
    in_failures = False  # after a report's ``N failing`` / ``Failures:`` header
    in_failed_list = False  # under ``Failing scenarios:`` (its indented items, to a blank)
    mocha = "failing" in text and _MOCHA_FAILING.search(text) is not None
    title_lines = 0  # under mocha's ``  1) suite``: lines left where the test's title may be
    failed = False  # a failing test or an error line came before: assertion lines count
    in_status_untracked = False
    in_hunk = False
    want_frame = False  # after a crash headline or a failing test: its first frame in user code
    want_message = False  # after jest's ``● suite › test`` header: its first line (the message)
    in_example = False  # inside a hypothesis example's arguments
    in_conflict = False  # under pip's ``The conflict is caused by:``
    in_expected = False  # inside a failing test's ``- Expected`` / ``+ Received`` diff
    expected_indent = 0  # the diff header's indentation: a line left of it ends the diff
    in_cmake_error = False  # the previous line was ``CMake Error ...``
    # the previous line was a Rust panic's, a C++ terminate's or a bare ``Error:`` headline
    # (its message next)
    want_error_message = False
    javac_detail = 0  # lines left under a javac error headline where its symbol may stand
    rust_label = False  # inside a rustc error's block, before its first primary label
    # under a compiler's finding (``--> src/lib.rs:3:5``, ``w.c:3:5: warning: ...``), to a
    # blank line: the numbered lines are the source it quotes (code, no error lines)
    in_snippet = False
    in_deadlock = False  # inside a JVM thread dump's deadlock report
    crashed = False  # a crash headline came before (a Go dump's goroutines are its stacks)
    # the lines said so far (without a log level), when some line is logged at one
    said: set[str] | None = set() if "[ERROR] " in text or "[WARNING] " in text else None
    goroutines = "goroutine " in text  # a Go stack dump: its frames are no error lines
    path_header: str | None = None  # the previous line, when it is a bare file path
    grep_files: set[str] = set()
    has_ansi = "\x1b" in text
    all_lines = text.splitlines()
    # every line's task prefix aside (turbo, compose): the rules read what the task printed
    prefixed = (": " in text or " | " in text) and _has_task_prefix(all_lines, has_ansi)
    # a numbered grep of one file (``grep -n -A16 ERROR app.log``): each line read behind its
    # number (``57:`` a match, ``58-`` its context: a stack's frames)
    grep_numbered = family == "grep" and not prefixed and _grep_numbered(all_lines)
    # a test runner's JSON event stream (``go test -json``): each event's ``Output`` is
    # the line the runner prints, read by the rules below; the event, as written, is the
    # line that must stay visible
    events = _output_events(all_lines) if _EVENT_OUTPUT in text else None
    text_lines = all_lines
    if events is not None:
        all_lines = [events.get(i, "") for i in range(len(all_lines))]
    # what a go test printed before it passed is not a finding (:mod:`.testlogs`)
    quiet = passing_test_logs(all_lines) if has_go_runs(text) else ()
    # the lines an error word may stand on, in one scan (colour codes may split a word:
    # coloured lines are read one by one)
    hinted = None if has_ansi else _hinted_rows(all_lines)
    above = ""  # the last non-blank line's token (a verdict below names it the failing test)
    failure_block = 0  # lines left of a C++ test failure's message (under ``file:8: Failure``)
    cause_indent = -1  # the indentation of an error's ``cause:`` line (its message wraps deeper)
    cause_lines = 0  # lines of the cause's message left
    error_here = False  # this line is an error line (a ``cause:`` right under it is its cause)
    since_error = _PG_DETAIL_WINDOW + 1  # non-blank lines since the last error line
    analysis = False  # Spring Boot's ``APPLICATION FAILED TO START`` came before
    described = False  # an error's ``Description:`` label came last: its next line says what
    report_file: str | None = None  # phpcs's ``FILE: src/Fees.php`` until a row under it
    for index, raw_line in enumerate(all_lines):
        if index in quiet:
            continue
        raw = _ANSI.sub("", raw_line) if has_ansi else raw_line
        if prefixed:
            tagged = _TASK_PREFIX.match(raw)
        else:
            tagged = _GREP_NUMBER.match(raw) if grep_numbered else None
        if tagged is not None:
            raw = raw[tagged.end() :]
        line = raw.strip()
        if not line:
            title_lines = 0
            failure_block = 0
            cause_indent = -1
            above = ""
            error_here = False
            in_status_untracked = in_cmake_error = want_error_message = rust_label = False
            in_example = in_conflict = in_failed_list = in_snippet = False
            path_header = None
            # a blank line ends a stack: a frame above it is not the frame of an error
            # below (node prints its frames under the error, the next one after a blank)
            last_frame = last_user_frame = first_user_frame = None
            continue
        # The token that must stay visible is the line as written (colours included).
        token = raw_line.strip()[:600] if has_ansi or tagged is not None else line[:600]
        if events is not None:
            token = text_lines[index].strip()[:600]
        if len(line) > 600:
            line = line[:600]
        named, above = above, token
        error_above, error_here = error_here, False
        since_error += 1
        if line[0] == "F" and line.startswith("FILE: "):
            report_file = token  # phpcs's full report: the file its rows below are in
        elif report_file is not None and line[0].isdecimal() and _PHPCS_ROW.match(line):
            yield "finding", report_file
            report_file = None
        if in_snippet and line[0].isdecimal() and _CODE_GUTTER.match(raw):
            continue  # ``44 |     other => Err(MoneyError::Parse(...)),``: the quoted source
        if line[:4] == "--> " or (
            (": error" in line or ": warning" in line or ": note" in line or ": fatal" in line)
            and _COMPILER_HEAD.search(line) is not None
        ):
            in_snippet = True
        if described:
            # Spring Boot's failure analysis: ``APPLICATION FAILED TO START``, ``Description:``,
            # then what failed (``Parameter 0 of constructor in ... required a bean ...``)
            described = False
            yield "error_detail", token
            continue
        if analysis and line == "Description:":
            described = True
        elif line == "APPLICATION FAILED TO START":
            analysis = True
        if (
            line[:1] == "<"
            and line.startswith(("<failure", "<error"))
            and named[:10] == "<testcase "
        ):
            # a JUnit XML report (surefire's, go-junit-report's, pytest --junitxml): the
            # ``<testcase name=...>`` element a ``<failure>`` opens under is the failing test
            yield "test_failure", named
        if cause_indent >= 0:
            if _indent(raw) > cause_indent and cause_lines > 0:
                cause_lines -= 1
                yield "error_detail", token
                continue
            cause_indent = -1
        if error_above and named[-1:] == "{" and raw[0] in " \t" and _ERROR_MESSAGE.match(raw):
            # an error object printed by node's inspect (ava, node:test): ``TypeError {`` over
            # ``  message: 'qty must be an integer, got 1.5',``
            yield "error_detail", token
            continue
        if raw[0] in " \t" and error_above and (cause := _CAUSE_LINE.match(raw)) is not None:
            # right under an error line: its cause (and the lines the cause wraps onto)
            cause_indent, cause_lines = len(cause.group(1)), _CAUSE_WRAP_LINES
            yield "error_detail", token
            continue
        if failure_block:
            if _FAILURE_BLOCK_END.match(line) or _FAILURE_AT.match(line):
                failure_block = 0  # ``[  FAILED  ] Mean.Fractions``, a log line, the next one
            else:
                failure_block -= 1
                if not _BLOCK_LABEL.match(line):  # (``with expansion:`` says nothing itself)
                    yield "test_failure", token  # the assertion's values and its message
                continue
        if line[-1] in "DR" and _VERDICT_BELOW.match(line) and named:
            # a verdict on a line of its own (ant's junit task: ``Testcase: weightClassRoundsUp
            # took 0 sec`` above ``\tFAILED`` or ``\tCaused an ERROR``): the line above names
            # the failing test
            failed = want_frame = True
            yield "test_failure", named
            yield "test_failure", token
            continue
        if in_expected:
            # a failing assertion's diff (jest, vitest): its changed lines are the failure
            # (its other lines go through the rules below: an error line stays one)
            if _EXPECTED_END.match(raw) or _indent(raw) < expected_indent:
                in_expected = False
            elif line[0] in "+-" or line.startswith("@@"):
                yield "test_failure", token
                continue
        if want_message:
            want_message = False
            if not _TRACE_FRAME.match(raw):
                yield "test_failure", token  # the failing test's message
                if _EXPECTED_HEAD.match(line):
                    in_expected = True
                    expected_indent = _indent(raw)
                continue
        if in_example:
            in_example = EXAMPLE_END.match(line) is None
            if in_example:
                yield "test_failure", token
            continue
        if in_conflict:
            if raw[0].isspace():
                yield "error_line", token
                continue
            in_conflict = False
        if line == CONFLICT_HEAD:
            in_conflict = True
        if line[0] in "EF" and EXAMPLE_HEAD.match(line):
            in_example = True
            yield "test_failure", token
            continue
        if raw[0] in _DIFF_FIRST and _DIFF_HEADER.match(raw):
            in_hunk = raw.startswith(("@@", "Diff in "))
            yield "diff_header", token
            continue
        if in_hunk:
            if raw[:1] in ("+", "-", " ", "\\"):
                continue  # hunk body: trimmable, its headers carry the facts
            in_hunk = False
        first = line[0]
        if in_deadlock:
            # the threads of the cycle, and under each one's name its first frame in user code
            if first == '"' and _DEADLOCK_THREAD.match(line):
                want_frame = True
                yield "error_detail", token
                continue
            if first == "w" and line.startswith('which is held by "'):
                yield "error_detail", token
                continue
            if first == "F" and _DEADLOCK_END.match(line):
                in_deadlock = False
        elif first == "F" and _DEADLOCK_HEAD.match(line):
            in_deadlock = True
        if crashed and goroutines and first == "g" and _GOROUTINE_HEAD.match(line):
            want_frame = True
        if said is not None:
            plain = RELOGGED.sub("", line, count=1).strip() if first == "[" else line
            if plain is not line and plain in said:
                continue  # said above without its level
            said.add(plain)
            if first == "[" and TOOL_ADVICE.match(line):
                continue
        if first in "[T" and _SUREFIRE_PASS.match(line):
            continue
        if first in "/CD" and (
            (": note: " in line and SYSTEM_HEADER_NOTE.match(line))
            or ("   required " in line and SYSTEM_HEADER_STEP.match(line))
        ):
            path_header = None
            continue
        if first in _FRAME_FIRST and _TRACE_FRAME.match(raw):
            last_frame = token
            if first == "F":  # a Python frame (innermost last): its exception follows
                last_at_frame = None
                in_traceback = True
                if _NOT_USER_FRAME.search(raw) is None:
                    last_user_frame = token
                    if first_user_frame is None:
                        first_user_frame = token
            else:
                # an ``at`` frame (JVM, JavaScript) belongs to the error above it: judged
                # only when an error line follows (below)
                last_at_frame = raw
                if want_frame and _NOT_USER_FRAME.search(raw) is None:
                    want_frame = False
                    yield "stack_frame", token
            continue
        if first == "c" and _NODE_ERROR_CODE.match(raw):
            yield "error_detail", token  # node's error properties under its stack
            continue
        if first == "t" and crashed and _PHP_THROWN.match(raw):
            yield "error_detail", token
            continue
        if crashed and _SANITIZER_SECTION.match(raw):
            want_frame = True  # (its own line is a fact when it says what the memory is)
        if crashed and raw[:1] == " " and _SANITIZER_DETAIL.match(raw):
            yield "error_detail", token
            continue
        if (
            want_frame
            and first in _NATIVE_FIRST
            and _NATIVE_FRAME.match(raw)
            and _NOT_USER_FRAME.search(raw) is None
        ):
            want_frame = False
            yield "stack_frame", token
            if line[:3] == "at " and _RUST_FRAME_FUNCTION.match(named):
                yield "stack_frame", named  # the function the Rust frame's place is in
        # the first line at the margin after a Python traceback's frames (a stash
        # marker of omitted frames aside): its exception
        exception = in_traceback and not raw[0].isspace() and first != "…"
        if exception:
            in_traceback = False
        if family == "grep" and not grep_numbered:
            match = _GREP_MATCH.match(raw)
            if match is not None and _GREP_FILE.fullmatch(match.group(1)):
                if match.group(1) not in grep_files:
                    grep_files.add(match.group(1))
                    yield "grep_file", match.group(1)
                continue
            # no file name before it (one file searched: ``grep -v DEBUG /var/log/syslog``
            # prints the log's own lines): the line reads as any other
        if in_cmake_error:
            in_cmake_error = False
            if raw[0].isspace():
                yield "error_detail", token
        if javac_detail:
            javac_detail -= 1
            if raw[0].isspace() and _JAVAC_DETAIL.match(raw):
                yield "error_detail", token
                continue
        if first != " " and ".java:" in line and _JAVAC_HEADLINE.match(line):
            javac_detail = _JAVAC_DETAIL_WINDOW
        if rust_label and first == "|" and "^" in line and _RUST_LABEL.match(raw):
            rust_label = False
            yield "error_detail", token
            continue
        if first == "e" and _RUST_ERROR.match(raw):
            rust_label = "`" not in raw
        elif rust_label and raw[0].isalpha():
            rust_label = False  # a line of words at the margin ends the block
        if since_error <= _PG_DETAIL_WINDOW and "G:  " in line and _PG_LOG.search(line):
            since_error = _PG_DETAIL_WINDOW + 1  # a routine statement's log line ends it
        if (
            since_error <= _PG_DETAIL_WINDOW
            and ("L:  " in line or "T:  " in line)
            and _PG_DETAIL.search(line)
        ):
            yield "error_detail", token  # what PostgreSQL says under its ERROR (key, hint)
        elif error_above and first == "T" and _TS_CODE.match(line):
            yield "error_detail", token  # ts-loader's message under ``[tsl] ERROR in file(3,5)``
        if want_error_message:
            want_error_message = False
            if line != "stack backtrace:" and not line.startswith("note: "):
                yield "error_detail", token
        if in_failed_list and raw[:1] in " \t":
            yield "test_failure", token  # an item of a runner's closing list of failures
        elif family == "git-status" and _SHORT_STATUS.match(raw):
            yield "git_status_path", token
        elif (
            (first == "c" and _GIT_COMMIT.match(raw))
            or (family == "git-log" and _ONELINE_COMMIT.match(raw))
            or (raw[40:41] == " " and _SHA_SENTENCE.match(raw))
        ):
            yield "commit", token
        elif first.isdecimal() and _STAT_SUMMARY.match(line):
            yield "stat_summary", token
        elif (first == "<" and _RESPONSE_STATUS.match(line)) or (
            first == "H" and _FAILED_RESPONSE.match(line)
        ):
            yield "http_status", token  # ``curl -v``'s ``< HTTP/1.1 400 Bad Request``
        elif (
            ((first in _SUMMARY_FIRST or first.isdecimal()) and _SUMMARY_LINE.match(line))
            or ("time:" in line and _CRITERION_ROW.match(line))
            or ((first in "[cPNCeE" or "xited with" in line) and _RUN_OUTCOME.search(line))
            or ("equests" in line and _THROUGHPUT_ROW.match(line))
            or (first in "[N" and line[-1] in "s0123456789" and _STATUS_COUNT.match(line))
            or (
                (
                    line[:3] in ("BM_", "tes")
                    or "avgt" in line
                    or "thrpt" in line
                    or " ss " in line
                    or "sample" in line
                )
                and _BENCH_ROW.match(line)
            )
        ):
            yield "test_summary", token
        elif (
            (first in _FAILURE_FIRST and _TEST_FAILURE.match(raw))
            or (first == "-" and _GO_FAIL.match(raw))
            or ((in_failures or mocha) and first.isdecimal() and _NUMBERED_FAILURE.match(raw))
            or (first.isdecimal() and _COUNTED_RESULT_FAILED.match(raw))
            or (line[-1] == ":" and "#" in line and _MINITEST_FAILURE.match(raw))
        ):
            failed = want_frame = True
            want_message = first == "●" or first == "F"
            numbered = in_failures and mocha and first.isdecimal()
            title_lines = 3 if numbered and _NUMBERED_FAILURE.match(raw) else 0
            yield "test_failure", token
        elif title_lines and raw[:1].isspace() and not is_error_line(line):
            title_lines -= 1
            if line.endswith(":"):  # the test's title (the lines above: its suites)
                title_lines = 0
                yield "test_failure", token
        elif failed and _ASSERTION.match(raw):
            yield "test_failure", token
        elif failed and _EXPECTED_HEAD.match(line):
            in_expected = True
            expected_indent = _indent(raw)
            yield "test_failure", token
        elif failed and raw[:1] == " " and line[-1:].isdecimal() and _BARE_LOCATION.match(raw):
            yield "location", token  # ava's ``  test/cart.test.js:12`` above the failing source
        elif first == "J" and _JUNIT_PLATFORM_FAILURE.match(raw):
            failed = want_frame = True
            yield "test_failure", token
        elif line[-1] in "e:" and _FAILURE_AT.match(line):
            failed = True  # its assertion lines follow (GoogleTest's, to its ``[  FAILED  ]``)
            failure_block = _FAILURE_BLOCK_LINES
            yield "test_failure", token
        elif failed and first == "#" and _TAP_LOCATION.match(raw):
            yield "location", token  # bats: where the failing test's assertion is
        elif first == "#" and _RUBY_FRAME.match(raw):
            yield "stack_frame", token
        elif (
            (
                ("(" in raw or ":" in raw)
                and _FINDING.match(raw)
                and not raw.startswith((" ", "\t", "+", "-"))
            )
            or ((first in _LOCATION_FIRST or ".go:" in line) and _LOCATION.match(raw))
            or (
                raw[:1] in " \t"
                and (line[-1:].isdecimal() or line[-1:] == ":")
                and RELATED_LOCATION.match(raw)
            )
        ):
            # a compiler warning is an error line: one kind in one file is one fact
            yield "error_line" if _is_diag_warning(line) else "finding", token
        elif first in "x×!⚠" and _miette_head(all_lines, index, raw):
            yield "finding" if raw.lstrip()[0] in "x×" else "error_line", token
        elif (
            (line[-1] == "━" and _BOXED_HEAD.match(line))
            or (first == "I" and _SHELLCHECK_LOCATION.match(line))
            or (first == "^" and _SHELLCHECK_FINDING.match(line))
        ):
            yield "finding", token
        elif ": (" in line[:120] and _DJANGO_CHECK.match(line):
            yield "finding", token  # Django's system check: ``?: (security.W004) You have ...``
        elif first.isdecimal() and CODED_FINDING.match(raw):
            if path_header is not None:
                yield "finding", path_header
            yield "finding", token
        elif (
            (first in _CRASH_FIRST and _CRASH_HEAD.match(line))
            or (" HTTP/" in line and _HTTP_5XX.search(line))
            or (
                "5" in line
                and (
                    "GET " in line
                    or "POST " in line
                    or "status" in line
                    or "PUT " in line
                    or "DELETE " in line
                    or "PATCH " in line
                )
                and _REQUEST_5XX.search(line) is not None
            )
            or (is_error_line(line) if hinted is None else index in hinted and _error_search(line))
            or exception
        ) and not (goroutines and _go_frame(all_lines, index, raw, line)):
            failed = True
            # the last frame above the error line: an ``at`` frame only in user code (the
            # last user frame above a ``Caused by:`` stays with it; a library frame such as
            # ``at org.apache.tomcat...Worker.run`` is no fact of the next error)
            if last_frame is not None and (
                last_at_frame is None or _NOT_USER_FRAME.search(last_at_frame) is None
            ):
                yield "stack_frame", last_frame
                if last_user_frame is not None and last_user_frame != last_frame:
                    yield "stack_frame", last_user_frame
                if first_user_frame is not None and first_user_frame not in (
                    last_frame,
                    last_user_frame,
                ):
                    yield "stack_frame", first_user_frame
                last_frame = last_user_frame = first_user_frame = None
            if path_header is not None and first.isdecimal() and _ESLINT_FINDING.match(raw):
                yield "finding", path_header
                path_header = None
            error_here = True
            since_error = 0
            yield "error_line", token
            if _FRAME_HEAD.match(line):
                want_frame = crashed = True
        elif ":" in line[:22] and _GIT_STATUS.match(raw):
            yield "git_status_path", token
        if first == "U" and line.startswith("Untracked files:"):
            in_status_untracked = True
        elif in_status_untracked and raw.startswith("\t"):
            yield "git_status_path", token
        if first == "C" and line.startswith("CMake Error"):
            in_cmake_error = True
        elif (first == "t" and _PANIC_WITH_MESSAGE_BELOW.match(line)) or (
            line[-1] == ":" and _BARE_ERROR_HEAD.search(line)
        ):
            want_error_message = True
        elif first == "T" and line.startswith("Traceback (most recent call last)"):
            in_traceback = True
            last_frame = last_user_frame = first_user_frame = None
        elif (first.isdecimal() or first in "FT") and _FAILURES_HEAD.match(line):
            in_failures = True
        if line[-1] == ":" and _FAILED_LIST_HEAD.match(line):
            in_failed_list = True
        elif raw[:1] not in " \t":
            in_failed_list = False
        if path_header is not None and first == "…" and "<<cx:" in line:
            yield "finding", path_header  # the file's findings went into a stash
        path_header = (
            token if not raw[0].isspace() and "." in line and _PATH_HEADER.match(line) else None
        )


# A Go stack frame: its function line (``panic({0x575620?, 0x3a7b016e4b70?})``,
# ``main.(*Server).handleError(...)``) above its file line (``\t/usr/local/go/src/runtime/
# panic.go:860 +0x13a``): a frame, not an error line, whatever words its names hold
# (a signal dump, ``GOTRACEBACK=system``, adds the frame's ``fp=0x.. sp=0x.. pc=0x..``)
GO_FRAME_FILE = re.compile(
    r"^\s+\S+\.(?:go|s):\d+(?: \+0x[0-9a-f]+)?(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?$"
)
GO_FRAME_FUNC = re.compile(
    r"^(?:created by )?[^\s()]+(?:\([^()\n]*\)[^\s()]*)*(?: in goroutine \d+)?$"
)


def _miette_head(lines: list[str], index: int, raw: str) -> bool:
    """Whether ``raw`` heads a miette finding: its frame's ``,-[file:line:col]`` follows
    within 3 lines (a long message wraps above it)."""
    if MIETTE_HEAD.match(raw) is None:
        return False
    return any(
        line.lstrip()[:2] in (",-", "╭─") and _LOCATION.match(line) is not None
        for line in lines[index + 1 : index + 4]
    )


def _go_frame(lines: list[str], index: int, raw: str, line: str) -> bool:
    if raw[:1] in " \t" and GO_FRAME_FILE.match(raw):
        return True
    return (
        index + 1 < len(lines)
        and GO_FRAME_FILE.match(lines[index + 1]) is not None
        and GO_FRAME_FUNC.match(line) is not None
    )


_EVENT_OUTPUT = '"Output":"'


def _output_events(lines: list[str]) -> dict[int, str] | None:
    """The printed line of each JSON event with an ``Output`` string (``go test -json``:
    ``{"Time":...,"Action":"output","Test":"TestX/case_5","Output":"--- FAIL: ..."}``), by
    line index, when at least half of the text's lines are such events; else ``None``."""
    printed: dict[int, str] = {}
    for i, line in enumerate(lines):
        if line.startswith("{") and _EVENT_OUTPUT in line:
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            output = event.get("Output") if isinstance(event, dict) else None
            if isinstance(output, str):
                printed[i] = output.rstrip("\r\n")
    return printed if 2 * len(printed) >= len(lines) else None


def _indent(raw: str) -> int:
    return len(raw) - len(raw.lstrip())


def is_lint_warning(line: str) -> bool:
    """Whether ``line`` is a linter's coded finding that is a warning by its code
    (``path:55:80: E501 line too long ...``, ``path:12:0: W0611: ...``)."""
    return _LINT_WARNING.match(line) is not None


def _is_diag_warning(line: str) -> bool:
    if _DIAG_NOTE.match(line) is not None:
        return True  # a note belongs to its finding: one shape of it is one fact
    if _LINT_WARNING.match(line) is not None:
        return True
    return (
        _DIAG_WARNING.match(line) is not None
        and _ERROR_LEVEL.search(line) is None
        and _WARNING_WORD.search(line) is not None
    )


def _prose_lines(text: str) -> Iterable[tuple[str, str]]:
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if _CONSTRAINT.search(line):
            yield "constraint", line[:600]
        elif _NEGATION.search(line):
            yield "negation", line[:600]
        elif len(line) < 400 and is_error_line(line):
            yield "error_line", line


def _spans_of(text: str) -> frozenset[tuple[str, str]]:
    return frozenset(_iter_spans(text))


# ``git status --short`` (or ``--porcelain``, ``-sb``) read from its lines, whatever ran it: every
# line a status and a path (a rename ``old -> new``), the branch line ``## main...origin/main``
_STATUS_ENTRY = re.compile(
    r"(?:[MADRCUT?! ][MADRCUT?! ]|\?\?) (?:\S+|\"[^\"\n]+\")(?: -> (?:\S+|\"[^\"\n]+\"))?|## \S.*"
)
_STATUS_FIRST = frozenset("MADRCUT?! #")


def _is_short_status(text: str) -> bool:
    """Whether every line of ``text`` (two at least) is a short-format git status line."""
    if not text or text[0] not in _STATUS_FIRST:
        return False
    entries = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        if _STATUS_ENTRY.fullmatch(line) is None:
            return False
        if not line.startswith("## "):
            if not line[:2].strip():
                return False
            entries += 1
    return entries >= 2


def _lines_of(key: tuple[str, str | None, str]) -> frozenset[tuple[str, str]]:
    kind, family, text = key
    if family == "source-read":
        if _READ_FAILURE.match(text.lstrip()[:200]) is None:
            return frozenset(
                ("conflict", line.strip())
                for line in text.split("\n")
                if line[:1] in "<>=" and _CONFLICT_MARKER.match(line.rstrip("\r"))
            )
        family = None
    if family is None and kind == "tool_result" and _is_short_status(text):
        family = "git-status"
    return frozenset(_tool_lines(text, family) if kind == "tool_result" else _prose_lines(text))


_SPANS: Memo[str, frozenset[tuple[str, str]]] = Memo(_spans_of, 4096, 32_000_000)
_LINES: Memo[tuple[str, str | None, str], frozenset[tuple[str, str]]] = Memo(
    _lines_of, 4096, 32_000_000
)


def protected_spans(text: str) -> frozenset[tuple[str, str]]:
    """(kind, token) pairs that must survive in the message or its stash."""
    return _SPANS(text)


def critical_lines(text: str, kind: str, command: str | None = None) -> frozenset[tuple[str, str]]:
    """(kind, line) pairs that must stay visible; ``kind`` is the unit kind.

    ``command`` (the shell command of a tool result, when known) changes what
    counts: for grep-like commands each matched file must stay visible, not
    every match line; for ``git status`` the short format's lines count (they do in
    any output whose every line is such a line, whatever the command); a read of one
    source file is code, whose only critical lines are a merge conflict's markers.
    """
    family = command_family(command) if kind == "tool_result" else None
    return _LINES((kind, family, text))


def visible_lines(text: str) -> frozenset[str]:
    """Stripped lines of ``text`` (truncated like critical lines) for visibility checks."""
    return frozenset(raw.strip()[:600] for raw in text.splitlines())
