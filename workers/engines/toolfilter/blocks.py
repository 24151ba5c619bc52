"""Content structure of a tool output: test reports, compiler/linter diagnostics, crash reports.

Whatever the command (``./run_tests.sh``, ``make check``, ``python3 x.py``)
and whatever filter was picked, the lines themselves say whether an output
holds a test report or diagnostics.  :func:`analyse` returns, for the lines
it recognises, a class (keep or drop) and a label; :class:`~.plan.Plan`
applies it after the gate's critical lines (which always stay) and before
the filter's own rules.

Test reports (pytest, unittest, go test -v with subtests, cargo test, jest,
vitest, mocha, node --test/TAP, maven surefire, gradle, ctest):

- the name of a group of tests that all passed (jest's ``describe``) goes with them;
- go test's ``=== RUN`` line stays above the message a failing test logged under it;
- a passing test's lines (``PASSED``, ``... ok``, ``--- PASS:``, ``=== RUN``,
  ``✓ name``, ``ok 3 - name`` with its YAML block, ``Passed`` ctest lines,
  surefire ``Tests run: 4, Failures: 0`` ...) are dropped, the marker counts
  the tests (``… 30 passing tests omitted <<cx:KEY>>``); so are the log lines
  a go test printed before it passed (:mod:`workers.fidelity.testlogs`) and
  jest's ``● Console`` blocks of ``console.log``/``info``/``debug`` calls, and
  jest 29's blocks of such calls without that header (``  console.log``, the
  message, its ``at`` line) (``console.warn`` and ``console.error`` blocks go by
  the other rules);
- a failing test's id, its assertion and diff lines (``Expected:``,
  ``left:``, ``- expected``/``+ actual`` ...) and the frames in user code
  stay; frames in the runtime, the standard library or dependencies are
  dropped (``library frames``);
- summaries are critical lines of the gate and stay;
- pytest's session header (``platform``, ``rootdir``, ``plugins`` ...) and
  the source context of a failure (around its ``>`` line) are dropped; code
  frames of jest and vitest too (their ``file:line:col`` frame stays).

An output is a report when at least three test result lines (passing or
failing) are found, or one failing test and a runner's summary.

Diagnostics (rustc/cargo/clippy, gcc/clang, javac, tsc and tsc --pretty,
go vet, eslint, vitest's ``❯ file:l:c``): the headline and its location
lines stay (critical for the gate), the snippet art under them
(``12 |  code``, ``|     ^^^``, rustc's suggestion lines, javac's source
line and caret) and the help text (rustc's ``= help:``/``= note:``/``help:``,
javac's ``symbol:``/``location:``) are dropped (``snippet lines``, ``help
lines``); gcc's ``In function 'f':`` context stays above an error and goes with the
help text above a warning (``function context lines``: its ``file:line:col`` says where).

Repeats: a warning (or an eslint warning, which has no snippet) of the same kind
in the same file as one shown above (rustc's, whose headline names no file: in
any file), whose headline the gate folds to the same shape (:func:`~workers.fidelity.facts.line_shape`: positions and quoted
names fold for compiler warnings), is dropped whole, context line included;
the marker note names the kind and lists every location as written, with
the names its headline quotes (``… warning -Wunused-variable 2 more times at
main.c:4:33 ‘b’ main.c:5:33 ‘c’``, rustc's ``--> src/lib.rs:8:9 `y``` verbatim,
since those lines are facts and the names identify what each repeat is about).  The
note keeps the level word, so it is an error line for the gate and aging
and budget keep it visible; a note that would pass ``NOTE_ROOM`` characters
ends the run (the next repeat is shown), and a run whose note would pass a
marker's cap goes into the view, where one note line per file (rustc: per kind)
lists its repeats, or stays as written (:mod:`.render`).  Errors are never folded into
another error (two places, two facts).

Crash reports (a Go panic or race, an AddressSanitizer or valgrind finding,
a Java, JavaScript or Python exception, with at least two stack frames):
frames in a runtime, the standard library, libc, the sanitizer or a
dependency are dropped (``library frames``), frames in user code stay, so
the headline, its first user frame (a fact of the gate) and the summary
are visible; AddressSanitizer's shadow memory map and legend and
valgrind's banner are dropped too.  A stack of ``at`` frames (JVM, JavaScript)
that is frame for frame one above goes whole (``repeated stack frames``): a
service log that logs one failure per request shows its stack once; so do a Python
traceback's frames (its exception line stays unless it repeats one in sight) and a Go stack
the same but for its ``+0x`` offsets (the race detector's ``Previous write`` and
``created at`` stacks of each report).

Everything dropped is stashed by :mod:`.render` (``<<cx:KEY>>``), so
expanding gives the output back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from workers.core.ansi import ANSI
from workers.engines._text import CRASH_FRAME as _CRASH_FRAME
from workers.fidelity.facts import (
    JVM_LIBRARY_FRAME,
    MIETTE_HEAD,
    SYSTEM_HEADER_NOTE,
    SYSTEM_HEADER_STEP,
    is_crash_headline,
    is_lint_warning,
    is_user_frame,
    line_shape,
)
from workers.fidelity.testlogs import passing_test_logs

__all__ = [
    "Repeat",
    "Structure",
    "analyse",
    "structure_family",
    "structure_probes",
]

SCAN_LINES = 400  # structure_family reads this many lines ...
OUTPUT_SCAN = 32768  # ... of this prefix

# -- test reports ---------------------------------------------------------------------------------

_PASS = re.compile(
    r"^[\w/.\\-]{1,300}\.py::[^\n]{0,400}?\sPASSED(?:\s|$)"  # pytest -v (bounded: linear on any line)
    r"|^\S+ \([\w.]+\)(?: \.\.\.)? ok$"  # unittest -v
    r"|^\s*--- PASS: \S+ \([\d.]+m?s\)$"  # go test -v
    r"|^test \S+(?: - should panic| - [^\n]{1,300}? \(line \d+\))? \.\.\. ok$"  # cargo test
    r"|^\s+[✓✔√] \S"  # jest, vitest, mocha
    r"|^\s*ok \d+ (?:- )?(?!#)\S"  # TAP (node --test; bats without the dash)
    r"|^(?:\[INFO\] )?Tests run: \d+, Failures: 0, Errors: 0, Skipped: \d+, Time elapsed"  # surefire
    r"|^[\w.$]{1,300} > [^\n]{1,400}? PASSED$"  # gradle
    r"|^\s*\d+/\d+ Test\s+#\d+: \S+ \.+\s+Passed\s"  # ctest
    r"|^PASS \S+\.[cm]?[jt]sx?(?: \([\d.]+ m?s\))?$"  # jest: a test file that passed
)
# lines that belong to running tests, not to their result (a count is enough)
_RUN = re.compile(
    r"^=== (?:RUN|PAUSE|CONT|NAME)\s+\S+$"  # go test -v
    r"|^\s*Start\s+\d+: \S+$"  # ctest
    r"|^\s*# Subtest: \S"  # TAP
    r"|^\[INFO\] Running [\w.$]+$"  # surefire
)
_FAIL = re.compile(
    r"^[\w/.\\-]{1,300}\.py::[^\n]{0,400}?\s(?:FAILED|ERROR)(?:\s|$)"
    r"|^(?:FAILED|ERROR) [\w/.\\-]{1,300}\.py::\S"  # pytest's short test summary (-q, -r)
    r"|^\S+ \([\w.]+\)(?: \.\.\.)? (?:FAIL|ERROR)$"
    r"|^\s*--- FAIL: \S"
    r"|^test \S+(?: - should panic| - [^\n]{1,300}? \(line \d+\))? \.\.\. FAILED$"
    r"|^\s+(?:[✕×✗✘]|\d+\)) \S"
    r"|^\s*not ok \d+ (?:- )?(?!#)\S"  # TAP (bats writes no dash; ``# SKIP`` is no name)
    r"|^\[ERROR\] Tests run: \d+, Failures: \d+"
    r"|^[\w.$]{1,300} > [^\n]{1,400}? FAILED$"
    r"|^\s*\d+/\d+ Test\s+#\d+: \S+ \.+\*{3}\w+"
    r"|^\S+\([\w.$]+\)\s+Time elapsed: .*<<< (?:FAILURE|ERROR)!$"  # surefire
    r"|^FAIL \S+\.[cm]?[jt]sx?(?: \([\d.]+ m?s\))?$|^  ● \S.* › \S"  # jest file, failure
)
# a runner's summary line: with one failing test, enough to call the output a report
_SUMMARY = re.compile(  # at the start of a line (``match``), ctest's anywhere (below)
    r"(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: \d+, Failures: \d+"
    r"|test result: |Ran \d+ tests? in |Tests:\s+\d|# (?:pass|fail) \d+$"
    r"|\s*\d+ (?:passing|failing)\b"
    r"|=+ .*\b(?:passed|failed)\b.* =+$|(?:FAIL|ok)\s+\S+\s+[\d.]+s$"
    r"|\d+ (?:failed|passed|errors?)(?:, \d+ \w+)* in [\d.]+s$"  # pytest -q
)
# a line a go test logged (``    pricing_test.go:42: Round(652, 5) = 650, want 655``)
_GO_TEST_LOG = re.compile(r"^\s+\S+\.go:\d+: ")
_CTEST_SUMMARY = re.compile(r"\d+ tests failed out of \d+")
# jest's console section (``  ● Console`` then ``    console.log`` blocks, each with its
# message and its ``at`` line): log, info and debug calls are output, not results
# (``console.warn``/``console.error`` blocks stay to the other rules)
_CONSOLE_CALL = re.compile(r"^\s+console\.(\w+)$")
_QUIET_CALLS = frozenset({"log", "info", "debug", "trace", "dir", "table"})
_CONSOLE_AT = re.compile(r"^ {6}at \S+ \(\S+:\d+:\d+\)$")  # where the call was
# pytest's failure sections: the source context and argument lines are stashed,
# the ``>`` line, the ``E`` lines and ``file.py:12:`` locations stay
_PY_SECTION = re.compile(r"^_{3,} .+ _{3,}$")
_PY_SECTION_END = re.compile(r"^=+ .+ =+$|^-+ Captured .+ -+$")
_PY_SOURCE = re.compile(r"^ {4,}\S|^(?:_ ){3,}_?$|^[a-z_]\w* = \S.*$")
# a runner's session header lines (pytest): the environment, not a result
_SESSION = re.compile(
    r"^(?:platform \S+ -- Python |cachedir: |rootdir: |configfile: |plugins: |hypothesis profile "
    r"|asyncio: mode=|Using --randomly-seed=)"
)
_IGNORED = re.compile(
    r"^test \S+(?: - [^\n]{1,300}? \(line \d+\))? \.\.\. ignored\b|^\s*--- SKIP: \S|^[\w/.\\-]{1,300}\.py::[^\n]{0,400}?\sSKIPPED\b"
)
# assertion and diff lines inside a failure: they stay
_ASSERT = re.compile(
    r"^\s*(?:left|right|expected|actual|Expected|Received|Actual|got|want)\s*:"
    r"|^\s*[-+] (?:Expected|Received|expected|actual)\b"
    r"|^\s*(?:E\s|\w*(?:Assertion)?Error\b|assert\w*\b|AssertionError)"
    r"|^\s*(?:location|error|operator|code|failureType):\s"
    r"|^\s+at .*(?:_test\.\w+|\.test\.\w+|\.spec\.\w+|[Tt]est\w*\.java):\d+"
)
# stack frames: dropped when they are not in user code, their source line with them
_FRAME = re.compile(
    r"^\s+at \S"
    r"|^\s+\d+: \S"  # rust backtrace frame (its ``at`` line follows)
    r"|^\s+\d+:\s+0x[0-9a-f]+ - \S"  # ... with RUST_BACKTRACE=full
    r'|^\s*File "[^"]+", line \d+'
)
_LIB_FRAME = re.compile(
    r"/rustc/|/\.cargo/registry/|\brust_begin_unwind\b|^\s+\d+: (?:core|std|alloc|test)::"
    r"|^\s+\d+: <\S+ as core::|\bnode:[\w/]+:\d|node_modules|\(internal/|/usr/lib/|/go/src/"
    r"|site-packages/|/lib/python\d|" + JVM_LIBRARY_FRAME + "|"
    r"\bat process\.processImmediate\b|__rustc::"
    r"|^\s+\d+:\s+0x[0-9a-f]+ - (?:core|std|alloc|test|__rustc)\b|^\s+\d+:\s+0x[0-9a-f]+ - "
    r"(?:main|_start|__libc_start\w*|<unknown>)$|/csu/|/sysdeps/"
)
_RUST_AT = re.compile(r"^\s+at \S+:\d+:\d+$")
# a frame of TAP's ``stack: |-`` block (``Test.run (node:internal/test_runner/test:796:25)``)
_TAP_FRAME = re.compile(r"^\s+(?:async )?[\w$.<>]+ \((?:node:|\S*node_modules/)\S+:\d+:\d+\)$")
# a code frame under a failing test (jest ``> 34 | code``, vitest ``35|   code``, carets)
_CODE_FRAME = re.compile(r"^[ \t]+(?:>[ \t]*)?\d+ ?\|(?:\s.*)?$|^[ \t]+\|[ \t]+\^[ \t]*$")

# -- crash reports --------------------------------------------------------------------------------
# A crash headline (:func:`~workers.fidelity.facts.is_crash_headline`: a Go panic or
# race, a sanitizer or valgrind finding, a Java/JavaScript/Python exception) with
# stack frames under it: frames in a runtime, the standard library, libc or the
# sanitizer are dropped (``library frames``), frames in user code stay
# (:func:`~workers.fidelity.facts.is_user_frame`, the gate's rule: its first user
# frame is a fact); AddressSanitizer's shadow memory map and legend, and valgrind's
# banner, are dropped.

# frames: :data:`workers.engines._text.CRASH_FRAME` (AddressSanitizer, valgrind, a Go frame's file
# line, and the ``at``/``File``/rust frames of :data:`_FRAME`)
_FRAME_START = frozenset(" \t=#F")
_CRASH_STARTS = frozenset({"pa", "WA", "==", "Di", "In", "Ex", "Ca", "Tr", "th", "SI", "Fo"})
_TRACEBACK = "Traceback (most recent call last):"  # a Python crash: its frames follow
# (a signal dump, ``GOTRACEBACK=system``, adds the frame's ``fp=0x.. sp=0x.. pc=0x..``)
_GO_FILE = re.compile(
    r"^\s+/\S+\.(?:go|s):\d+(?: \+0x[0-9a-f]+)?(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?$"
)
_GO_FUNC = re.compile(
    r"^\s*(?:created by )?[^\s()]+(?:\([^()\n]*\)[^\s()]*)*(?: in goroutine \d+)?$"
)
_NATIVE = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in \S|^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: ")
# a native frame without a source line (``in _start (/tmp/app+0x1130)``) or in libc's sources
_NATIVE_LIB = re.compile(r"\+0x[0-9a-f]+\)$|/sysdeps/|\.\./csu/|\(in /")
_SHADOW_HEAD = "Shadow bytes around the buggy address:"
_REPORT_LINE = re.compile(r"^==\d+==")
_VALGRIND_BANNER = re.compile(
    r"^==\d+== (?:Memcheck, a memory error detector|Copyright \(C\) |Using Valgrind-"
    r"|For lists of detected and suppressed errors, rerun with|For counts of detected and"
    r" suppressed errors, rerun with|Use --track-origins=yes|Rerun with --leak-check=full"
    r"|To see them, rerun with)"
)
_VALGRIND_EMPTY = re.compile(r"^==\d+==\s*$")


# a Go goroutine dump: ``goroutine 12 [chan send]:`` and its stack, up to a blank line; the
# function lines' arguments (hex) and the frames' ``+0x7a`` offsets vary between goroutines
# that stand at the same place
_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]\n]*\]:$")
_GO_VOLATILE = re.compile(
    r"\((?:0x[0-9a-f]+\??|\{[^{}]*\}|\.\.\.)(?:, (?:0x[0-9a-f]+\??|\{[^{}]*\}|\.\.\.))*\)$"
    r"| \+0x[0-9a-f]+$|(?<= in goroutine )\d+$|(?<=^goroutine )\d+"
)


def _repeated_goroutines(lines: list[str], drop: dict[int, str]) -> None:
    """Drop each goroutine whose stack (its state, functions and places) a goroutine above
    showed; its blank line goes with it, so a run of them is one marker."""
    n = len(lines)
    seen: set[tuple[str, ...]] = set()
    i = 0
    while i < n:
        if not _GOROUTINE.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < n and lines[j].strip():
            j += 1
        stack = tuple(_GO_VOLATILE.sub("#", line) for line in lines[i:j])
        if stack in seen:
            drop[i] = STACKS
            for k in range(i + 1, min(j + 1, n)):
                drop[k] = STACK_LINES
        seen.add(stack)
        i = j


# a JVM thread dump (``jstack``, ``jcmd PID Thread.print``, ``kill -3``): each thread a header
# line (``"http-worker-4" #18 prio=5 ... nid=0x22a3 waiting for monitor entry  [0x7f..]``), its
# state and its stack, up to a blank line; a pool's threads stand at the same places
_THREAD_DUMP = "Full thread dump "
_THREAD_LIST = "Threads class SMR info:"  # the threads' addresses, before the threads
_THREAD_HEADER = re.compile(r'^"[^"\n]{1,300}" (?:#\d+ )?.*\b(?:prio|tid|nid)=')
# what differs between threads at one place: the header's name, numbers and addresses (its
# state words stay), the monitors' and lambdas' addresses
_THREAD_HEADER_STATE = re.compile(r"\bnid=\S+ ([^\[\n]*)")
_THREAD_VOLATILE = re.compile(r"0x[0-9a-f]+")


def _thread_dump(lines: list[str], keep: set[int], drop: dict[int, str]) -> None:
    """A JVM thread dump: each thread whose state and stack a thread above showed (its name,
    ids and addresses aside) is dropped, its blank line with it, so a run of them is one
    marker.  Of the first thread of each stack, its header, state, monitors (``- waiting to
    lock <0x...>``, ``- locked``), top frame and frames in user code stay; its other frames
    (the runtime's) are dropped; so is the list of thread addresses above the threads."""
    n = len(lines)
    seen: set[tuple[str, ...]] = set()
    i = 0
    while i < n:
        if lines[i].startswith(_THREAD_LIST):
            j = i + 1
            while j < n and lines[j].strip():  # to the list's closing brace
                j += 1
                if lines[j - 1].rstrip() == "}":
                    break
            for k in range(i + 1, j):
                drop[k] = THREAD_LIST
            i = j
            continue
        if not _THREAD_HEADER.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < n and lines[j].strip():
            j += 1
        state = _THREAD_HEADER_STATE.search(lines[i])
        stack = (
            state.group(1).strip() if state is not None else "",
            *(_THREAD_VOLATILE.sub("#", line) for line in lines[i + 1 : j]),
        )
        if stack in seen:
            drop[i] = THREADS
            for k in range(i + 1, min(j + 1, n)):
                drop[k] = THREAD_LINES
        else:
            seen.add(stack)
            keep.add(i)
            top = True
            for k in range(i + 1, j):
                line = lines[k]
                if _AT_STACK.match(line):
                    if top or is_user_frame(line):
                        keep.add(k)
                        top = False
                    else:
                        drop[k] = FRAMES
                else:
                    keep.add(k)  # the state, a monitor, ``No compile task``
        i = j


# a JVM or JavaScript stack: ``at`` frames and the JVM's ``... 3 more`` (of a ``Caused by:``)
_AT_STACK = re.compile(r"^\s+at \S|^\s+\.\.\. \d+ more$")


def _repeated_stack(
    lines: list[str], i: int, stacks: set[tuple[str, ...]], drop: dict[int, str]
) -> int | None:
    """The index of the last line of the stack of ``at`` frames that starts at ``i`` when
    a stack above was the same (frame for frame, as written): its lines are dropped
    (``repeated stack frames``); None when it is the first such stack, or no ``at`` stack."""
    n = len(lines)
    j = i
    while j < n and _AT_STACK.match(lines[j]):
        j += 1
    if j == i:
        return None
    return _drop_if_seen(tuple(line.strip() for line in lines[i:j]), i, j, stacks, drop)


def _drop_if_seen(
    stack: tuple[str, ...], i: int, j: int, stacks: set[tuple[str, ...]], drop: dict[int, str]
) -> int | None:
    """Lines ``i`` to ``j - 1`` dropped as ``repeated stack frames`` when ``stack`` was seen
    above (their last index returned), else ``stack`` noted and None."""
    if stack not in stacks:
        stacks.add(stack)
        return None
    for k in range(i, j):
        drop[k] = STACK_FRAMES
    return j - 1


def _repeated_py_stack(
    lines: list[str], i: int, stacks: set[tuple[str, ...]], drop: dict[int, str]
) -> int | None:
    """The index of the last line of the Python traceback's frames that start at ``i`` (under
    its ``Traceback (most recent call last):``: each ``File`` line with its code and caret
    lines) when a traceback above had the same frames (a service log that logs one failure
    per request): they are dropped (``repeated stack frames``; the exception line below
    stays); None when it is the first such traceback."""
    n = len(lines)
    j = i
    while j < n and lines[j][:1] in " \t" and lines[j].strip():
        j += 1
    if j - i < 2:
        return None
    return _drop_if_seen(tuple(line.strip() for line in lines[i:j]), i, j, stacks, drop)


def _repeated_go_stack(
    lines: list[str], i: int, stacks: set[tuple[str, ...]], drop: dict[int, str]
) -> int | None:
    """The index of the last line of the Go stack (function and file line pairs, two frames
    or more) that starts at ``i`` when a stack above was the same but for the frames'
    ``+0x`` offsets and arguments (the race detector writes each report's ``Previous write``
    and ``created at`` stacks again): its lines are dropped (``repeated stack frames``);
    None when it is the first such stack."""
    n = len(lines)
    j = i
    while j + 1 < n and _GO_FUNC.match(lines[j]) and _GO_FILE.match(lines[j + 1]):
        j += 2
    if j - i < 4:
        return None
    stack = tuple(_GO_VOLATILE.sub("#", line.strip()) for line in lines[i:j])
    return _drop_if_seen(stack, i, j, stacks, drop)


def _crash(lines: list[str], keep: set[int], drop: dict[int, str]) -> None:
    n = len(lines)
    stacks: set[tuple[str, ...]] = set()  # the ``at`` stacks seen so far
    if any(line.startswith("goroutine ") for line in lines):
        _repeated_goroutines(lines, drop)
    i = 0
    while i < n:
        m = lines[i]
        if i in drop or i in keep or not m or m.isspace():
            i += 1
            continue
        if m.startswith(_SHADOW_HEAD):
            while i < n and lines[i].strip() and not _REPORT_LINE.match(lines[i]):
                drop[i] = SHADOW
                i += 1
            continue
        if m[0] == "=" and _REPORT_LINE.match(m):
            if _VALGRIND_EMPTY.match(m):
                drop[i] = SEPARATORS
            elif _VALGRIND_BANNER.match(m):
                drop[i] = BANNER
            elif _NATIVE.match(m):
                _native_frame(m, i, keep, drop)
        elif m[0] in " \t#" and _NATIVE.match(m):
            _native_frame(m, i, keep, drop)
        elif i + 1 < n and _GO_FILE.match(lines[i + 1]) and _GO_FUNC.match(m):
            head = i == 0 or not _GO_FILE.match(lines[i - 1])  # a stack starts here
            end = _repeated_go_stack(lines, i, stacks, drop) if head else None
            if end is not None:
                i = end + 1
                continue
            pair = m + " " + lines[i + 1]
            if is_user_frame(pair):
                keep.update((i, i + 1))
            else:
                drop[i], drop[i + 1] = FRAMES, FRAME_LINES
            i += 1
        elif m[0] in " \t" and _FRAME.match(m):
            end = _repeated_stack(lines, i, stacks, drop)
            if end is None and i and lines[i - 1].startswith(_TRACEBACK):
                end = _repeated_py_stack(lines, i, stacks, drop)
            i = _frame(lines, i, keep, drop) if end is None else end
        i += 1


def _native_frame(m: str, i: int, keep: set[int], drop: dict[int, str]) -> None:
    if is_user_frame(m) and _NATIVE_LIB.search(m) is None:
        keep.add(i)
    else:
        drop[i] = FRAMES


# -- diagnostics ----------------------------------------------------------------------------------

_HEADLINE = re.compile(
    r"^(?:error|warning)(?:\[[\w:]+\])?: "  # rustc
    r"|^\S+?:\d+:\d+: (?:fatal error|error|warning): "  # gcc/clang, go vet with -c
    r"|^\S+\.java:\d+: (?:error|warning): "  # javac
    r"|^\S+\.[jt]sx?[:(]\d+[:,]\d+\)?:? -? ?(?:error|warning) (?:TS\d+)?"  # tsc
    r"|^\s*❯ \S+:\d+:\d+$"  # vitest location above a code frame
    r"|^[A-Z]{1,4}\d{3,4}(?: \[\*\])? \S"  # ruff's full format (a headline above its ``-->``)
    r"|^\S+?:\d+(?::\d+)?:? [A-Z]{1,4}\d{3,4}:? \S"  # flake8, pylint, ruff's concise format
    r"|^ {0,4}[x×!⚠] \S"  # miette's error or warning (oxlint, swc), above its ``,-[file:l:c]``
    r"|^\S+?:\d+:\d+: [CWEFR]: "  # rubocop (a severity letter), its code and caret below
)
# headlines that are a diagnostic only when a ``--> file:line:col`` follows: rustc's
# bare ``warning: ...`` and ruff's ``E501 Line too long (94 > 88)``
_LOOSE_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZwe x×!⚠")
_LOOSE_HEAD = re.compile(
    r"^(?:warning|error)(?:\[[\w:]+\])?: |^[A-Z]{1,4}\d{3,4}(?: \[\*\])? \S|^ {0,4}[x×!⚠] \S"
)
_SNIPPET = re.compile(
    r"^[ \t]*(?:\d+[ \t]*)?\|(?:\s.*)?$"  # rustc/gcc/vitest code, carets: ``12 |  code``, ``|  ^^``
    r"|^[ \t]*(?:>[ \t]*)?\d+ ?\|"  # jest code frame ``> 34 | code``
    r"|^\s*[\^~]+\s*$"  # javac/tsc caret lines
    r"|^\s*\.\.\.$"  # rustc elision
    r"|^\s*::: \S"  # rustc secondary location (the primary ``-->`` stays)
    r"|^\s*\d+\s+[~+-]\s"  # rustc suggestion lines ``10 +    "describe",``
    r"|^[ \t]+-[ \t]"  # ruff's removed suggestion line ``  - import os, sys``
    # miette's frame: code `` 7 │ code``, labels ``   : ^^^`` / ``   · ───``, its end ``   `----``
    r"|^[ \t]*\d+[ \t]*│|^[ \t]+[:·](?:[ \t].*)?$|^[ \t]+(?:`-{3,}|╰─{3,})$"
)
_HELP = re.compile(
    r"^\s*= (?:note|help|warning): "
    r"|^(?:help|note): "
    r"|^ {1,4}help: "  # miette's help under its frame
    r"|^\s+(?:symbol|location|required|found|reason):\s"
)
# gcc's context above a finding (``main.c: In function 'f':``): shown, unless it
# heads a repeat that is dropped
_CONTEXT = re.compile(
    r"^\S+: (?:In (?:static )?(?:function|member function|constructor|instantiation of) .*"
    r"|At top level):$"
)
# ... of which the function a warning is in is decoration: the warning's own ``file:line:col``
# says where it is (an error keeps it, and so does an instantiation's chain)
_FUNCTION_CONTEXT = re.compile(r"^\S+: In (?:static )?(?:function|member function|constructor) ")
# gcc/clang's ``file:line:col: note:`` under a finding: part of its block (its snippet art is
# dropped, the note line is a fact of the gate and stays, or goes with a repeat whose
# note is shown word for word above)
_GCC_NOTE = re.compile(r"^\S+?:\d+(?::\d+)?: note: ")
# the include chain above a note (``In file included from /usr/include/c++/12/string:47,``
# and its ``                 from src/shape.h:2,`` lines): goes with a system header's note
_CARET = re.compile(r"^[ \t~]*\^[ \t~^]*$")
FIX_IT_CHARS = 60  # a fix-it hint under a caret is a few characters of code
_INCLUDE_CHAIN = re.compile(r"^(?:In file included from |\s+from )\S+:\d+(?::\d+)?[:,]$")
_NOTE_FIRST = frozenset("/.~_-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_TSC_PRETTY = re.compile(r"^\S+:\d+:\d+ - (?:error|warning) TS\d+: ")
_TSC_CODE = re.compile(r"^\s*\d+ ")
_POSITION = re.compile(r"^\S+?(?:\(\d+,\d+\)|:\d+:\d+)")  # a tsc headline's file and place
_TSC_RELATED = re.compile(r"^\s+\S+:\d+:\d+ - \S")  # related information, under a finding
_JAVAC_HEAD = re.compile(r"^\S+\.java:\d+: (?:error|warning): ")


# a superset of the lines the first pass counts, found by one scan from newline
# to newline (most outputs have none; the per-line pass then never runs)
_ANY = re.compile(
    r"\n(?:[\w/.\\-]{1,300}\.py::[^\n]{0,400}?\s(?:PASSED|FAILED|ERROR)|(?:FAILED|ERROR) [\w/.\\-]{1,300}\.py::|\S+ \([\w.]+\)(?: \.\.\.)? (?:ok|FAIL|ERROR)$"
    r"|[ \t]*--- (?:PASS|FAIL): |test \S+[^\n]{0,330}? \.\.\. (?:ok|FAILED)|[ \t]+(?:[✓✔√✕×✗✘]|\d+\)) \S"
    r"|[ \t]*(?:not )?ok \d+ - |(?:\[(?:INFO|ERROR)\] )?Tests run: \d|\S+\([\w.$]+\)[ \t]+Time elapsed"
    r"|[\w.$]{1,300} > [^\n]{1,400}? (?:PASSED|FAILED)$|[ \t]*\d+/\d+ Test[ \t]+#"
    r"|(?:error|warning)(?:\[[\w:]+\])?: |\S+?:\d+(?::\d+)?: (?:fatal error|error|warning): "
    r"|\S+\.java:\d+: (?:error|warning): |\S+\.[jt]sx?[:(]\d+[:,]\d+|[ \t]*❯ \S+:\d+:\d+$"
    r"|[ \t]+\d+:\d+[ \t]+(?:warning|error)[ \t]|(?:PASS|FAIL) \S+\.[cm]?[jt]sx?\b"
    r"|[A-Z]{1,4}\d{3,4}(?: \[\*\])? \S[^\n]*\n[ \t]*--> "
    r"|\S+?:\d+(?::\d+)?:? [A-Z]{1,4}\d{3,4}:? \S"
    r"| {0,4}[x×!⚠] [^\n]*\n[ \t]*(?:,-|╭─)\[|\S+?:\d+:\d+: [CWEFR]: )",
    re.M,
)
# ... and crash reports: a headline with a frame under it, within 9 lines (an output with only these
# runs the cheap crash checks per line, not the report and diagnostic ones)
_ANY_CRASH = re.compile(
    r"\n(?:==\d+==[^\n]*\n==\d+==[ \t]+(?:at|by) 0x|[ \t]*#\d+ 0x[0-9a-f]+ in "
    r"|panic: |fatal error: [^\n]*\n\ngoroutine \d+ |WARNING: DATA RACE"
    r"|SIG[A-Z]{2,8}: [^\n]*\nPC=0x"  # a Go runtime's signal dump (SIGQUIT)
    r"|Traceback \(most recent call last\):\n[ \t]+File "
    r"|thread '[^'\n]{0,200}'(?: \(\d+\))? panicked at [^\n]*\n(?:[^\n]*\n){0,4}?stack backtrace:"
    r"|[ \t]*(?:Exception in thread |Caused by: |[A-Za-z_$][\w.$]*(?:Exception|Error)\b)[^\n]*\n"
    r"(?:[^\n]*\n){0,8}?[ \t]+at \S)",  # node prints its diff between error and frames
    re.M,
)


@dataclass(frozen=True, slots=True)
class Structure:
    """What :func:`analyse` found: the family and per-line decisions.

    ``keep``: lines that must stay (assertion lines, user frames).  ``drop``:
    line index -> label text (``passing tests``, ``test run lines``, ...).
    """

    family: str  # "report", "diagnostics", "report+diagnostics" or ""
    keep: frozenset[int]
    drop: dict[int, str]
    repeats: dict[int, Repeat] = field(default_factory=dict)


_NONE = NO_STRUCTURE = Structure("", frozenset(), {})

PASSING = "passing tests"
PASSING_LOGS = "log lines of passing tests"
GROUPS = "passing test groups"  # quiet: a describe block's name, its tests all passing
CONSOLE = "console output lines"
RUNNING = "test run lines"  # quiet: counted by the tests they belong to
IGNORED = "ignored tests"
FRAMES = "library frames"
CLOSURES = "closure frame lines"  # rust's ``f::{{closure}}`` right under ``f``
# the carets Python 3.11+ prints under a frame's source line (``~~~~^^^^^``)
_CARETS = re.compile(r"^[ \t]+[~^]+[ \t]*$")
FRAME_LINES = "library frame lines"  # quiet: a frame's second line (its source or ``at``)
SNIPPET = "snippet lines"
ELABORATIONS = "repeated elaboration lines"  # tsc's, under a message shown with them above
CONTEXT_LINES = "function context lines"  # gcc's ``f.c: In function 'g':`` above a warning
SOURCE = "source lines"
SESSION = "session header lines"
HELP = "help lines"
LIBRARY_NOTES = "system header notes"  # a compiler's notes in headers it ships, and their code
REPEATS = "repeated diagnostic lines"  # quiet: the note lists the repeats' kinds and locations
SHADOW = "shadow memory lines"
STACKS = "repeated goroutine stacks"  # a goroutine whose stack a goroutine above showed
STACK_LINES = "repeated goroutine stack lines"  # quiet: counted by their goroutines
THREADS = "repeated thread stacks"  # a JVM thread whose stack a thread above showed
THREAD_LIST = "thread address lines"  # a thread dump's ``_java_thread_list=0x...`` block
THREAD_LINES = "repeated thread stack lines"  # quiet: counted by their threads
STACK_FRAMES = "repeated stack frames"  # an exception's frames, as a stack above had them
RECURSION = "recursive frames"  # a frame repeating one right above it (a stack overflow)
BANNER = "tool banner lines"
SEPARATORS = "empty report lines"  # quiet: valgrind's ``==12==`` lines between findings
QUIET = frozenset({RUNNING, REPEATS, FRAME_LINES, SEPARATORS, STACK_LINES, THREAD_LINES, GROUPS})
# where their lines may go when dropped (:func:`workers.engines.toolfilter.render._view`): a
# marker where they were, always (which tests did not run is news; a repeat's note says
# where), or the view, counted, from runs too short to keep their marker; the other labels
# are decoration, which may go into the view from any run
IN_PLACE = frozenset({IGNORED, REPEATS, STACKS, STACK_LINES, THREADS, THREAD_LINES})
COUNTED = frozenset({PASSING, RUNNING, GROUPS})


def holds_thread_dump(lines: list[str]) -> bool:
    """Whether ``lines`` are a JVM thread dump: ``Full thread dump ...`` in its first lines
    (after ``jcmd``'s pid and the date)."""
    return any(line.startswith(_THREAD_DUMP) for line in lines[:4])


def structure_probes(text: str) -> tuple[bool, bool]:
    """Whether ``text`` (ANSI colour stripped) may hold report or diagnostic lines, and
    whether it may hold a crash report: the two scans :func:`analyse` starts with, which
    it takes as given when its lines are ``text``'s lines as written."""
    text = "\n" + text
    return _ANY.search(text) is not None, _ANY_CRASH.search(text) is not None


def analyse(
    lines: list[str],
    critical: Callable[[int], bool] | None = None,
    probes: tuple[bool, bool] | None = None,
) -> Structure:
    """The report and diagnostic structure of ``lines`` (ANSI colour already stripped).

    ``critical`` says which lines the gate must see; without it repeats of a
    diagnostic are not collapsed (a coloured output: the gate compares the
    lines as written).  A repeat's block is dropped whole, so no other line
    of it may be critical.  The probes of :func:`structure_probes` run here on ``lines``
    as given (cut at the line cap, carriage returns off): they say which checks run.
    """
    if probes is None:
        # one scan each: most outputs have no such line
        structured, crashy = structure_probes("\n".join(lines))
    else:
        structured, crashy = probes
    dump = holds_thread_dump(lines)
    if not structured and not crashy and not dump:
        return _NONE
    passes = fails = heads = summaries = crashes = frames = 0
    n = len(lines)
    for i, m in enumerate(lines):
        if not m or m.isspace():
            continue
        if crashy:
            # frames are counted after a crash headline only
            if crashes and m[0] in _FRAME_START and _CRASH_FRAME.match(m):
                frames += 1
                continue
            if ("rror" in m or "xception" in m or m[:2] in _CRASH_STARTS) and (
                m.startswith(_TRACEBACK) or is_crash_headline(m.strip())
            ):
                crashes += 1
        if not structured:
            continue
        if m[0] == " " and _miette_head(lines, i):
            heads += 1  # ``  × rule: msg`` above its frame: a finding, not jest's failing mark
        elif _PASS.match(m):
            passes += 1
        elif _FAIL.match(m):
            fails += 1
        elif _HEADLINE.match(m) or _ESLINT_LINE.match(m):
            # rustc's bare ``warning: ...`` is a diagnostic only above its ``-->``
            if not _LOOSE_HEAD.match(m) or (i + 1 < n and RUST_LOCATION.match(lines[i + 1])):
                heads += 1
        elif _SUMMARY.match(m) or ("tests failed out" in m and _CTEST_SUMMARY.search(m)):
            summaries += 1
    report = passes + fails >= 3 or (fails >= 1 and summaries >= 1)
    diagnostics = heads >= 1
    crash = crashes >= 1 and frames >= 2
    if not report and not diagnostics and not crash and not dump:
        return _NONE
    keep: set[int] = set()
    drop: dict[int, str] = {}
    repeats: dict[int, Repeat] = {}
    if report:
        _report(lines, keep, drop)
    if diagnostics:
        _diagnostics(lines, keep, drop, repeats, critical)
    if crash:
        _crash(lines, keep, drop)
    if dump:
        _thread_dump(lines, keep, drop)
    if not drop:
        return _NONE
    found = (
        ("report", report),
        ("diagnostics", diagnostics),
        ("crash", crash),
        ("thread dump", dump),
    )
    family = "+".join(f for f, on in found if on)
    return Structure(family, frozenset(keep), drop, repeats)


def structure_family(text: str) -> str:
    """``report``, ``diagnostics``, ``report+diagnostics`` or "" for a whole output.

    Only the first ``SCAN_LINES`` lines are read (ANSI colour stripped): what
    decides whether an output with no filter of its own is filtered at all.
    """
    head = text[:OUTPUT_SCAN]
    if "\x1b" in head:
        head = ANSI.sub("", head)
    return analyse(head.split("\n")[:SCAN_LINES]).family


def _report(lines: list[str], keep: set[int], drop: dict[int, str]) -> None:
    n = len(lines)
    if any(line.startswith("=== ") for line in lines):
        for k in passing_test_logs(lines):  # a passing go test's t.Log lines
            drop[k] = PASSING_LOGS
    i = 0
    in_failure = False  # inside a pytest failure section (``____ test_x ____``)
    in_console = False  # inside jest's ``● Console`` section of one test file
    quiet_call = False  # ... in a console.log/info/debug block of it
    while i < n:
        m = lines[i]
        if in_console:
            if m[:1] not in ("", " ") or m.startswith("  ● "):
                in_console = False  # the next file's result line or a failure
            else:
                call = _CONSOLE_CALL.match(m)
                if call:
                    quiet_call = call.group(1) in _QUIET_CALLS
                if quiet_call:
                    drop[i] = CONSOLE
                    i += 1
                    continue
        if m.startswith("  ● Console") and m.rstrip() == "  ● Console":
            in_console, quiet_call = True, False
            drop[i] = CONSOLE
            i += 1
            continue
        if not in_console and m.startswith("  console."):
            end = _console_block(lines, i)
            if end > i:
                # jest 29 prints each call on its own, above the file's result line
                for k in range(i, end):
                    drop[k] = CONSOLE
                i = end
                continue
        if _PY_SECTION.match(m):
            in_failure = True
        elif in_failure and _PY_SECTION_END.match(m):
            in_failure = False
        elif in_failure and _PY_SOURCE.match(m):
            drop[i] = SOURCE  # the test's source around ``>`` and its arguments
        elif _SESSION.match(m):
            drop[i] = SESSION  # the runner's environment, not a result
        elif _PASS.match(m):
            drop[i] = PASSING
            # TAP: the YAML block of a passing test (``  ---`` ... ``  ...``)
            if i + 1 < n and lines[i + 1].strip() == "---" and m.lstrip().startswith("ok "):
                j = i + 1
                while j < n and lines[j].strip() != "...":
                    j += 1
                if j < n:
                    for k in range(i + 1, j + 1):
                        drop[k] = RUNNING
                    i = j
        elif _RUN.match(m):
            if _names_a_detached_failure(lines, i, drop):
                keep.add(i)  # the test whose failure message follows: names it
            else:
                drop[i] = RUNNING
        elif _IGNORED.match(m):
            drop[i] = IGNORED
        elif _TAP_FRAME.match(m):
            drop[i] = FRAMES
        elif _CODE_FRAME.match(m):
            drop[i] = SNIPPET
        elif _ASSERT.match(m):
            keep.add(i)
        elif _FRAME.match(m):
            i = _frame(lines, i, keep, drop)
        i += 1
    _passing_groups(lines, keep, drop)


def _names_a_detached_failure(lines: list[str], i: int, drop: dict[int, str]) -> bool:
    """Whether go test's ``=== RUN   TestX/case_5`` at ``i`` heads the message its failing test
    logged (the lines under it are not a passing test's) and is the only line that says whose
    message it is: the ``--- FAIL:`` lines under the messages do not name this test, or they
    follow more than one failing test's messages (``case_1``, ``case_4`` and ``case_7`` logged,
    then their three FAIL lines)."""
    n = len(lines)
    m = lines[i]
    if not m.startswith("=== RUN") or i + 1 >= n or i + 1 in drop:
        return False
    j = i + 1
    while j < n and _GO_TEST_LOG.match(lines[j]):
        j += 1
    if j == i + 1:
        return False
    name = m[len("=== RUN") :].strip()
    tree: set[str] = set()
    while j < n and lines[j].lstrip().startswith(("--- FAIL: ", "--- PASS: ", "--- SKIP: ")):
        if lines[j].lstrip().startswith("--- FAIL: "):
            tree.add(lines[j].split()[2])
        j += 1
    if name not in tree:
        return True
    # another failing test's messages between the FAIL lines above and this one
    k = i - 1
    while k >= 0 and not lines[k].lstrip().startswith("--- FAIL: "):
        if (
            k + 1 < i
            and k not in drop
            and lines[k].startswith("=== RUN")
            and k + 1 not in drop
            and _GO_TEST_LOG.match(lines[k + 1])
        ):
            return True
        k -= 1
    return False


def _passing_groups(lines: list[str], keep: set[int], drop: dict[int, str]) -> None:
    """Drop the header of a group of tests (jest's or vitest's ``describe`` name, mocha's
    suite) when every line indented under it is a passing test or a passing group: the count
    of its tests says it; a group with a failing test keeps its header above it."""
    n = len(lines)
    for i in range(n - 2, -1, -1):  # inner groups first
        m = lines[i]
        if i in drop or i in keep or not m.startswith("  ") or not m.strip():
            continue
        depth = len(m) - len(m.lstrip())
        j = i + 1
        while j < n and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > depth:
            if drop.get(j) not in (PASSING, GROUPS):
                break  # a failing test (or any other line) in the group: its name stays
            j += 1
        else:
            if j > i + 1:
                drop[i] = GROUPS


def _console_block(lines: list[str], i: int) -> int:
    """The end of jest's block of a ``console.log``/``info``/``debug`` call at line ``i``
    (``  console.log``, its message lines indented under it, then its ``at`` line), or ``i``
    when the line heads no such block (``console.warn`` and ``console.error`` blocks stay)."""
    call = _CONSOLE_CALL.match(lines[i])
    if call is None or call.group(1) not in _QUIET_CALLS:
        return i
    n = len(lines)
    j = i + 1
    while j < n and (not lines[j].strip() or lines[j].startswith("    ")):
        if _CONSOLE_AT.match(lines[j]):
            return j + 1
        j += 1
    return i


def _frame(lines: list[str], i: int, keep: set[int], drop: dict[int, str]) -> int:
    """Classify the ``at``/``File``/rust frame at ``i`` (with its second line): dropped in a
    library, kept in user code.  Returns the index of the frame's last line."""
    m = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    rust_pair = m.lstrip()[:1].isdigit() and _RUST_AT.match(nxt) is not None
    text = m + " " + nxt if rust_pair else m
    if _LIB_FRAME.search(text):
        drop[i] = FRAMES
        if rust_pair:
            drop[i + 1] = FRAME_LINES
            return i + 1
        if m.lstrip().startswith("File ") and nxt.startswith("    ") and not _FRAME.match(nxt):
            drop[i + 1] = FRAME_LINES  # a Python frame's source line
            if i + 2 < len(lines) and _CARETS.match(lines[i + 2]):
                drop[i + 2] = FRAME_LINES  # and the carets under it (Python 3.11+)
                return i + 2
            return i + 1
        return i
    if rust_pair and m.rstrip().endswith("::{{closure}}") and i >= 2:
        # ``5: crate::tests::case::{{closure}}`` under ``4: crate::tests::case``: the test
        # harness calling the test, the frame above says where
        above = lines[i - 2].strip().partition(": ")[2]
        if above and m.strip().partition(": ")[2] == above + "::{{closure}}":
            drop[i] = drop[i + 1] = CLOSURES
            return i + 1
    if not rust_pair and _recurs(lines, i, keep, drop):
        drop[i] = RECURSION
        return i
    keep.add(i)
    if rust_pair:
        keep.add(i + 1)
        return i + 1
    return i


MAX_CYCLE = 4  # frames a recursion's cycle may span (``f`` calling ``f``; ``f``, ``g``, ``f``...)


def _recurs(lines: list[str], i: int, keep: set[int], drop: dict[int, str]) -> bool:
    """Whether the frame at ``i`` repeats one of the ``MAX_CYCLE`` frames right above it (a
    recursion: a StackOverflowError's thousand ``at Tier.resolve(Tier.java:18)``): the line
    above it stays in sight, so the repeat goes."""
    line = lines[i]
    for j in range(i - 1, max(-1, i - 1 - MAX_CYCLE), -1):
        if j not in keep and drop.get(j) not in (RECURSION, FRAMES):
            return False  # not a frame: no cycle
        if lines[j] == line:
            return True
    return False


_GCC_HEAD = re.compile(
    r"^(?P<file>\S+?):(?P<where>\d+(?::\d+)?): (?P<level>warning|error|fatal error): (?P<msg>.*)$"
)
_TSC_HEAD = re.compile(
    r"^(?P<file>\S+)\((?P<where>\d+,\d+)\): (?P<level>warning|error) (?P<code>TS\d+): (?P<msg>.*)$"
)
# a linter's one-line coded finding: flake8/ruff ``path:55:80: E501 line too long (88 > 79
# characters)``, pylint ``path:12:0: W0611: Unused import os (unused-import)``
_LINT_HEAD = re.compile(
    r"^(?P<file>\S+?):(?P<where>\d+(?::\d+)?):? (?P<code>[A-Z]{1,4}\d{3,4}):? (?P<msg>.*)$"
)
_RUST_HEAD = re.compile(r"^(?P<level>warning|error)(?:\[(?P<code>[\w:]+)\])?: (?P<msg>.*)$")
_ESLINT_LINE = re.compile(
    r"^\s+(?P<where>\d+:\d+)\s+(?P<level>warning|error)\s+(?P<msg>.*?)\s{2,}(?P<code>[\w@/-]+)$"
)
_PATH_HEADER = re.compile(r"^(?:[A-Za-z]:)?[\w.@~+-]*(?:[/\\][\w.@~+-]+)+\.\w{1,12}$")
# a finding's primary location: rustc's `` --> src/lib.rs:28:13``, and the same place in
# miette's frame (oxlint, swc, rspack, biome-style reports: ``   ,-[lint-me.js:8:13]``,
# ``   ╭─[lint-me.js:8:13]``)
RUST_LOCATION = re.compile(
    r"^\s*(?:--> (?P<file>\S+?):(?P<where>\d+:\d+)"
    r"|(?:,-|╭─)\[(?P<mfile>[^\s\]]+?):(?P<mwhere>\d+:\d+)\])$"
)
_FLAG = re.compile(r"\[(-W[\w=+-]+|[\w-]+)\]$")
_QUOTED = re.compile(r"'[^'\n]{1,200}'|`[^`\n]{1,200}`|\"[^\"\n]{1,200}\"|‘[^’\n]{1,200}’")
# characters of the note of one run of repeats: a run whose note passes the marker's cap (200)
# gets no marker of its own (:func:`.render._stash_run`): its repeats go into the view, where
# notes are lines of their own, or stay as written
NOTE_ROOM = 1200
MAX_NAMES = 3  # quoted names of one repeat's headline listed with its location
# a finding's help line that names its rule by a documentation link (clippy prints one under
# each finding: ``= help: for further information visit https://...index.html#cast_lossless``)
_RULE_LINK = re.compile(
    r"^\s*= help: for further information visit https?://\S+#(?P<rule>[\w-]{2,80})$"
)


@dataclass(frozen=True, slots=True)
class Repeat:
    """A diagnostic block dropped as a repeat of an earlier one: its kind and location."""

    kind: str  # ``warning -Wunused-variable``
    where: str  # ``4:33`` (or rustc's ``--> src/lib.rs:8:9``, as written)
    file: str = ""  # the file it is in (an eslint report's file header line)


def _kind(level: str, code: str | None, msg: str) -> str:
    """``warning -Wunused-variable``, ``warning unused variable``, ``error semi``.

    The level word stays in the marker note, so the note is an error line for
    the gate (aging and budget keep it visible with its locations).
    """
    return f"{level} {code or ' '.join(_QUOTED.sub('', msg).split()).strip(' :,')}"


def _diagnostics(
    lines: list[str],
    keep: set[int],
    drop: dict[int, str],
    repeats: dict[int, Repeat],
    critical: Callable[[int], bool] | None,
) -> None:
    n = len(lines)
    header = ""  # the file an eslint-style report is listing
    seen: dict[tuple[str, str, str], str] = {}  # (kind, file, shape) of a block shown
    room = NOTE_ROOM  # note characters left in the current run of repeats
    run_kinds: set[str] = set()  # the kinds that note names already
    context = -1  # the last gcc context line
    shown_notes: set[str] = set()  # gcc note lines left visible in a shown block
    elaborated: set[tuple[str, str]] = set()  # (tsc message, elaboration line) shown
    rules_shown: set[str] = set()  # the rules whose link stays under a finding shown
    i = 0
    while i < n:
        m = lines[i]
        if not m or m.isspace():
            i += 1
            continue
        if not m[0].isspace() and _PATH_HEADER.match(m):
            header = m
            room = NOTE_ROOM
            run_kinds = set()
            i += 1
            continue
        if (
            not _HEADLINE.match(m)
            or (
                m[0] in _LOOSE_FIRST
                and _LOOSE_HEAD.match(m)
                and not (i + 1 < n and RUST_LOCATION.match(lines[i + 1]))
            )
        ) and not (header and _ESLINT_LINE.match(m)):
            if _CONTEXT.match(m) and SYSTEM_HEADER_STEP.match(m) is None:
                context = i
            elif _HELP.match(m) and not m.startswith(" ") and i not in keep:
                drop[i] = HELP  # a loose ``help:`` or ``note:``
            elif i not in drop and _library_notes(lines, i, keep, drop):
                i += 1
                continue
            elif i not in drop:
                room = NOTE_ROOM  # a visible line ends the run of repeats
                run_kinds = set()
                related = m[0].isspace() and _TSC_RELATED.match(m) is not None
                if related or (m[0] in _NOTE_FIRST and _GCC_NOTE.match(m)):
                    # a note after an include chain (``In file included from ...``) left
                    # its finding's block, as tsc's related information does: it stays,
                    # the code under it is snippet art
                    j = i + 1
                    while (
                        j < n
                        and (_SNIPPET.match(lines[j]) or (related and _TSC_CODE.match(lines[j])))
                        and j not in keep
                    ):
                        drop[j] = SNIPPET
                        j += 1
                    i = j
                    continue
            i += 1
            continue
        # a headline: its block runs to the next headline, blank or foreign line
        j = i + 1
        location = ""
        rule_link = -1  # the help line that names the finding's rule (clippy's link) ...
        rule: str | None = None  # ... and the rule
        javac = _JAVAC_HEAD.match(m) is not None
        pretty = _TSC_PRETTY.match(m) is not None
        plain = not pretty and m[0] not in " \t" and _TSC_HEAD.match(m) is not None
        told = i  # the headline and (tsc) the lines of its message under it
        while j < n:
            line = lines[j]
            if (
                pretty
                and j == told + 1
                and j + 1 < n
                and not line.strip()
                and _TSC_CODE.match(lines[j + 1])
            ):
                j += 1  # tsc --pretty: a blank line, then the code under the headline
                continue
            if not line or line.isspace() or (_HEADLINE.match(line) and _heads(lines, j)):
                break
            if pretty and _TSC_CODE.match(line):
                j += 1
                continue
            if (pretty or plain) and j == told + 1 and line[0].isspace():
                told = j  # ``  Type 'undefined' is not assignable ...``: the message goes on
                j += 1
                continue
            if header and _ESLINT_LINE.match(line):
                break
            loc = RUST_LOCATION.match(line)
            if loc is not None:
                location = location or line.strip()
            elif rule is None and line[:1] == " " and (named := _RULE_LINK.match(line)):
                rule_link, rule = j, named["rule"]
            elif javac and j == i + 1 and line.startswith(" "):
                pass  # javac repeats the source line under its headline
            elif (
                j + 1 < n
                and (j == i + 1 or _GCC_NOTE.match(lines[j - 1]))
                and _CARET.match(lines[j + 1])
            ):
                j += 1  # clang without line numbers: the code as written, then its caret
            elif (
                line[0] in " \t"
                and len(line) - len(line.lstrip()) >= 2
                and len(line.strip()) <= FIX_IT_CHARS
                and _CARET.match(lines[j - 1])
            ):
                pass  # clang's fix-it under the caret (``{``, ``nullptr``, `` override``)
            elif not (_SNIPPET.match(line) or _HELP.match(line) or _GCC_NOTE.match(line)):
                break
            j += 1
        repeat = (
            _repeat_of(m, location, header, seen, j == i + 1, rule)
            if critical is not None
            else None
        )
        cost = 0
        if repeat is not None:
            cost = (
                len(repeat.where) + 1 + (0 if repeat.kind in run_kinds else len(repeat.kind) + 12)
            )
        if (
            repeat is not None
            and critical is not None
            and cost <= room
            and not any(
                k in keep
                or (
                    critical(k)
                    and lines[k].strip() != location
                    and line_shape(lines[k].strip()) not in shown_notes
                )
                for k in range(i + 1, j)
            )
        ):
            room -= cost
            run_kinds.add(repeat.kind)
            repeats[i] = repeat
            for k in range(i if context != i - 1 or critical(i - 1) else i - 1, j):
                drop[k] = REPEATS
        else:
            room = NOTE_ROOM
            run_kinds = set()
            if told > i:
                # tsc's elaboration under a message shown above with it, word for word
                # (another place of ``TS2339: Property 'x' does not exist on type 'A | B'.``)
                said = _POSITION.sub("", m, count=1)
                for k in range(i + 1, told + 1):
                    key = (said, lines[k].strip())
                    if key in elaborated and k not in keep and not (critical and critical(k)):
                        drop[k] = ELABORATIONS
                    elaborated.add(key)
            if (
                context == i - 1
                and context not in keep
                and _FUNCTION_CONTEXT.match(lines[context])
                and _warnings_only(lines, i)
                and not (critical is not None and critical(context))
            ):
                drop[context] = CONTEXT_LINES  # each warning's file:line says where it is
            if rule is not None and rule not in rules_shown:
                # the link names the rule (a lint's name is on no other line of its finding):
                # it stays under the first finding of each rule, the repeats' note names it
                rules_shown.add(rule)
                keep.add(rule_link)
            for k in range(i + 1, j):
                if k in keep or k <= told or k in drop or RUST_LOCATION.match(lines[k]):
                    continue  # (in drop: a system header note's code, labelled with it)
                if _library_notes(lines, k, keep, drop):
                    continue
                if _GCC_NOTE.match(lines[k]):
                    # stays: a repeat with a note of this shape (another place) may go
                    shown_notes.add(line_shape(lines[k].strip()))
                    continue
                drop[k] = HELP if _HELP.match(lines[k]) else SNIPPET
        i = j


def _miette_head(lines: list[str], i: int) -> bool:
    """Whether line ``i`` is miette's headline (``  × rule: msg``) above its frame's place."""
    return (
        MIETTE_HEAD.match(lines[i]) is not None
        and i + 1 < len(lines)
        and RUST_LOCATION.match(lines[i + 1]) is not None
    )


def _heads(lines: list[str], j: int) -> bool:
    """Whether line ``j`` (a :data:`_HEADLINE` match) heads a finding: a loose headline
    (rustc's bare ``warning:``, ruff's code, miette's mark) only above its location."""
    line = lines[j]
    if line[0] in _LOOSE_FIRST and _LOOSE_HEAD.match(line):
        return j + 1 < len(lines) and RUST_LOCATION.match(lines[j + 1]) is not None
    return True


def _warnings_only(lines: list[str], i: int) -> bool:
    """Whether the findings from line ``i`` to the next context line (or the next line that
    is not part of a finding) are all warnings: gcc's ``In function`` above them says nothing
    their ``file:line:col`` does not (above an error it stays)."""
    seen = False
    for k in range(i, len(lines)):
        line = lines[k]
        found = _GCC_HEAD.match(line)
        if found is not None:
            if found["level"] != "warning":
                return False
            seen = True
        elif _CONTEXT.match(line) or not (
            _SNIPPET.match(line) or _HELP.match(line) or _INCLUDE_CHAIN.match(line)
        ):
            break
    return seen


def _library_notes(lines: list[str], i: int, keep: set[int], drop: dict[int, str]) -> bool:
    """Drop line ``i`` when it heads a note in a system header (after its include chain).

    The note goes with the code and carets under it and with the include chain
    above it (``In file included from /usr/include/c++/12/string:47,`` ...): help
    text of the finding above them, no fact of the gate.  Whether ``i`` was dropped.
    """
    n = len(lines)
    j = i
    while j < n and j not in keep and _INCLUDE_CHAIN.match(lines[j]):
        j += 1
    if j >= n or j in keep:
        return False
    if SYSTEM_HEADER_NOTE.match(lines[j]) is None and SYSTEM_HEADER_STEP.match(lines[j]) is None:
        return False
    k = j + 1
    while k < n and k not in keep and _SNIPPET.match(lines[k]):
        k += 1
    if k == j + 1 and k + 1 < n and {k, k + 1}.isdisjoint(keep) and _CARET.match(lines[k + 1]):
        k += 2  # clang without line numbers: the code as written, then its caret line
    for m in range(i, k):
        drop.setdefault(m, LIBRARY_NOTES)
    return True


def _repeat_of(
    head: str,
    location: str,
    header: str,
    seen: dict[tuple[str, str, str], str],
    single: bool,
    rule: str | None = None,
) -> Repeat | None:
    """The block's :class:`Repeat` when an earlier block showed the same fact, else None.

    Same fact: the same kind in the same file, and a headline the gate folds
    to the same shape (:func:`~workers.fidelity.facts.line_shape`), so the
    first block's headline keeps it visible.  rustc's ``-->`` locations are
    facts of their own: the marker note lists them as written.  ``rule``: the rule a
    help line of the block names (clippy's lint), the kind of a rustc finding without a code.
    """
    file = where = level = msg = ""
    code: str | None = None
    found = _GCC_HEAD.match(head) or _TSC_HEAD.match(head)
    if found is not None:
        file, where, level, msg = found["file"], found["where"], found["level"], found["msg"]
        code = found.groupdict().get("code")
        if code is None:
            flag = _FLAG.search(msg)
            code = flag.group(1) if flag is not None else None
    elif (found := _LINT_HEAD.match(head)) is not None:
        file, where, code, msg = found["file"], found["where"], found["code"], found["msg"]
        level = "warning" if is_lint_warning(head) else "error"
    elif (found := _RUST_HEAD.match(head)) is not None:
        loc = RUST_LOCATION.match(location)
        if loc is None:
            return None
        level, msg, code = found["level"], found["msg"], found["code"] or rule
        # (miette's ``,-[src/a.js:2:7]``: a place in that file, listed as written too)
        file, where = loc["file"] or loc["mfile"], location
    elif header and (found := _ESLINT_LINE.match(head)) is not None:
        level, msg, code, where = found["level"], found["msg"], found["code"], found["where"]
        file = header
    else:
        return None
    if level != "warning" and not (header and single):
        return None  # errors at two places are two facts (eslint's one-line findings fold)
    if not where.startswith(("-->", ",-[", "╭─[")) and not header:
        where = f"{file}:{where}"  # as the compiler wrote it: ``main.c:4:33``
    kind = _kind(level, code, msg)
    # rustc's headline names no file: one shown above stands for the kind in every file, the
    # note lists each ``-->`` location as written (a gcc or tsc headline holds its file)
    key = (kind, "" if where.startswith("-->") else file, line_shape(head.strip()[:600]))
    shown = seen.get(key)
    if shown is not None:
        # the names the headline quotes are identifiers: the note lists those the shown
        # headline does not (``'b'`` of ``unused variable 'b'``; not the types of every
        # ``comparison of 'int' and 'size_t'``) with the place
        # (an eslint report's one-line findings fold by rule and place only: their
        # names would fill the note and end the run at every second repeat)
        quoted = [] if header else _QUOTED.findall(msg)
        names = " ".join([q for q in quoted if q not in shown][:MAX_NAMES])
        return Repeat(kind, f"{where} {names}" if names else where, file)
    seen[key] = msg
    return None
