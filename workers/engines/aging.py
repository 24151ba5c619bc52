"""``aging``: the further back a message is, the less of it stays visible.

Age is counted from the end of the conversation (:func:`workers.engines._prose.layout`):
prose ages by *user turns* (the user messages after it), tool outputs and
long agent sessions by *agent steps* (the messages after it; parallel tool
results share a step).  Each unit falls in one of three tiers:

=============  ====================================  =======================================
tier           prose (user / assistant)              tool output
=============  ====================================  =======================================
verbatim       last ``prose_verbatim_turns`` (2)     not answered yet (step age 0) and
               turns; assistant prose also within    shorter than ``fresh_min_lines`` (40)
               ``assistant_condense_steps`` (8) steps non-blank lines, or its content is
                                                     the answer (see *fresh* below)
fresh          --                                    not answered yet, long, and a report,
                                                     log or build output: head (6) and
                                                     tail (6) lines, *every* critical line
                                                     (every copy), the notes of
                                                     earlier engines' markers, lines
                                                     relevant to the latest request (6)
condensed      turns 2-3; assistant steps 8-15:      answered, within ``tool_recent_steps``
               user keeps its request line and        (4) steps of the latest turn: head
               every constraint; assistant keeps      (3) and tail (2) lines, critical
               decisions, file paths, commands,       lines, lines relevant to the latest
               errors and constraints                 request (up to 3); one of fewer than
                                                      ``condensed_min_lines`` (12) non-blank
                                                      lines stays whole (unless over budget)
summarised     older: one marker whose note gives    older: critical lines, the first and
               the gist, constraints stay visible     the last line (not of a file read),
                                                      relevant lines (up to 3); one of at
                                                      most ``short_output_max_tokens`` (256)
                                                      tokens stays whole (unless over budget)
=============  ====================================  =======================================

Never aged: frozen units (cached prefix, pinned, leading system), system
messages anywhere, and the latest user message.

*Fresh* is what makes aggressive mode differ from standard on a record that
holds one tool output (the model has not read it yet, so aging proper leaves
it alone): the output's noise goes into the stash, its facts stay.  An output
whose lines are themselves what was asked for is never fresh-condensed: file
reads and fetched documents, diffs (a hunk header anywhere), listings (``ls``,
``find``, ``grep``, ``git status``, ``git log``, process and disk tables,
package lists, and any output of which half the lines are paths) and JSON;
the family is the tool filter's
(:meth:`~workers.engines._filters.FilterSet.detect`, command first, then the
lines).

A condensed file read keeps whole, besides, every function the latest user message names
or the user message of the read's own turn names (the request the read answered), as
outline does: what the model is working on, or read the file for.

What stays visible is always a superset of what the gate requires: every
critical line (:func:`workers.fidelity.facts.critical_lines`: errors and
warnings, test summaries, diff headers, findings, git status paths, the
innermost frame; constraint and negation lines of prose) plus, in prose,
every line with a polarity word (modals, hedges, conditionals), and in a
diff every line a hunk adds or removes (what was done; its context lines
may go), kept verbatim.  Error lines of an older output are kept one per
:func:`~workers.fidelity.facts.repeat_key`, not one per shape of the gate:
lines that differ only in a timestamp, a pid, a thread's name, a duration,
a size or an attempt counter are one (a warning folds as the gate folds it),
lines that differ in a version, a test's id, a line number or an error code
are two (``types-requests 2.31.0.7 depends on urllib3>=2`` and ``... 2.31.0.8
...``: standard shows both, so aggressive does).  Everything else that is
dropped goes, one run of lines at a time, into the stash behind ``… N lines
omitted <<cx:KEY>>``; fenced code blocks are kept or stashed whole; lines are never
joined.  The tool-output tiers keep facts visible and drop context: the
full output is one ``expand`` away.

Configuration is typed and passed to the constructor: ``AgingEngine(language,
AgingPolicy(prose_verbatim_turns=..., tool_recent_steps=..., head_lines=...))``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import orjson

from workers.engines._code import Symbol, language_of, symbols
from workers.engines._diff import HUNK, changed_rows, declaring_context_rows, hunk_kinds
from workers.engines._filters import builtin_filters
from workers.engines._logs import is_marked_log_line
from workers.engines._prose import (
    LanguagePack,
    Position,
    close_fences,
    critical_flags,
    fence_mask,
    flag_critical_before,
    has_reference,
    language_pack,
    layout,
    line_starts,
    stash_runs,
    terms,
)
from workers.engines._shell import cat_files, is_file_read, parse_access, read_paths
from workers.engines._text import dup_spans, is_stack_frame, named_lines, request_terms
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.facts import critical_lines, repeat_key
from workers.markers import has_marker
from workers.markers.stash import LITERAL as STASH_LITERAL
from workers.markers.stash import NOTE_CAP
from workers.messages.model import Unit

__all__ = ["CONTENT_FAMILIES", "AgingEngine", "AgingPolicy"]

VERBATIM, CONDENSED, SUMMARISED, FRESH = 0, 1, 2, 3
# Families whose lines are the answer (a listing's paths, a diff's hunks, a read's code):
# a fresh output of one of them stays whole.
CONTENT_FAMILIES = frozenset(
    {
        "read",
        "read-vcs",
        "fetch",
        "git-diff",
        "git-log",
        "git-status",
        "ls",
        "find",
        "grep",
        "ps",
        "top",
        "df",
        "du",
        "netstat",
        "kubectl",
        "packages",
    }
)
# Families of data: a listing or a table whose rows the crusher or the listing view shortened
# (an older one ages on like any output; a report, a build, a log, a search, a diff or a
# git log that an engine shortened around its facts is left as it is)
DATA_FAMILIES = frozenset({"ls", "find", "ps", "top", "df", "du", "netstat", "kubectl", "packages"})
# a marker line that only counts what it hides ("… 2 snippet lines omitted <<cx:KEY>>")
_BARE_NOTE = re.compile(r"^\s*… [^<\n]*\bomitted\b[^<\n]*<<cx:[0-9a-f]+>>\s*$")
_HUNK_HEADER = re.compile(r"^@@ -\d", re.M)
# a line that is one path (``find``, ``git ls-files``, a script's listing)
_PATH_ROW = re.compile(r"^\s*\.{0,2}[\w.@~+-]*(?:[/\\][\w.@~+ -]+)+[/\\]?\s*$")
_JSON_START = re.compile(r"\A\s*[\[{]")
# the key that names what an event of a tool's JSON stream is
_EVENT_KEY = re.compile(r'"(?:reason|Action)"\s*:\s*"')
# how a JSON document's first line can open: ``{`` and a key (or nothing, or ``}``), ``[`` and a
# value (an object, an array, a string, a number or a literal that a comma or ``]`` ends);
# ``[  5%] Building C object ...`` (cmake, make), ``[1/20] ...`` (ninja) and ``[OK] ...`` open
# with a bracket too, and are build output
_JSON_OPEN = re.compile(
    r"\{\s*(?:$|[\"}])"
    r"|\[\s*(?:$|[\[{\"\]]"
    r"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*(?:$|[,\]])|(?:true|false|null)\s*(?:$|[,\]]))"
)
_SHELL_FENCE = re.compile(
    r"^(?:```|~~~)[ \t]*(?:bash|sh|shell|console|zsh|fish|powershell|ps1|cmd|bat|terminal)\b", re.I
)
_TIER_NAMES = {FRESH: "fresh", CONDENSED: "condensed", SUMMARISED: "summarised"}
_WORD = re.compile(r"[A-Za-z_]\w*")
_NAMED_MAX_BYTES = 400_000  # a read longer than this is not parsed again here
_GIST_WORDS = 10
_RARE_SHARE = 0.2  # a query term found on more lines than this share is not a signal


def _json_line(line: str) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def _json_document(text: str) -> bool:
    """Whether ``text`` reads as JSON whose values are the answer: one document (whole, or
    cut short: ``head -c``) or JSON lines of data (``jq -c '.items[]'``); a service's log
    written as JSON lines (a first object with a level, one object per line) is a log, and a
    build's or a test run's event stream (cargo's ``{"reason":...}``, ``go test -json``'s
    ``"Action":...``) is its report."""
    if not _JSON_START.match(text):
        return False
    first, _, rest = text.lstrip().partition("\n")
    if not _JSON_OPEN.match(first):
        return False  # a bracket that opens no JSON value: ``[ 40%] Building CXX object ...``
    if first.startswith("[") and is_marked_log_line(first) and not _json_line(first):
        return False  # a log whose lines open with a bracket: ``[2026-12-03 ...] [INFO] ...``
    if (
        not rest.strip()
        or not first.rstrip().endswith("}")
        or not (is_marked_log_line(first) or _EVENT_KEY.search(first, 0, 400))
    ):
        return True
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return True  # a pretty-printed document's first line, or a cut one
    return False


def _drop_orphan_frames(lines: Sequence[str], keep: list[bool]) -> None:
    """Drop a kept stack frame whose report's headline goes, when the same frame stays under a
    headline that stays.

    Critical lines are kept by their text: valgrind's ``by 0x1091F6: alloc_2 (leaks.c:76)``,
    the allocation site of a definite leak, is also the frame of an indirect leak above whose
    headline goes; kept there under ``… 3 lines omitted``, it reads as the frame of the report
    before the marker.  A frame belongs to the nearest line above it that is no frame, no blank
    line and no bare marker (a marker of library frames stands between a headline and its first
    user frame)."""
    anchored: set[str] = set()
    orphans: list[int] = []
    head_kept = True
    for k, line in enumerate(lines):
        if is_stack_frame(line):
            if keep[k]:
                if head_kept:
                    anchored.add(line.strip())
                else:
                    orphans.append(k)
        elif line.strip() and not _BARE_NOTE.match(line):
            head_kept = keep[k]
    for k in orphans:
        if lines[k].strip() in anchored:
            keep[k] = False


def _nonblank_lines(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.strip())


def _tier(age: int, verbatim_below: int, condensed_below: int) -> int:
    """VERBATIM under the first limit, CONDENSED under the second, else SUMMARISED."""
    if age < verbatim_below:
        return VERBATIM
    return CONDENSED if age < condensed_below else SUMMARISED


@dataclass(frozen=True, slots=True)
class AgingPolicy:
    prose_verbatim_turns: int = 2
    prose_summary_turns: int = 4
    assistant_condense_steps: int = 8
    assistant_summary_steps: int = 16
    tool_verbatim_steps: int = 1
    tool_recent_steps: int = 4
    head_lines: int = 3
    tail_lines: int = 2
    summary_tail_lines: int = 1  # of an older (summarised) tool output, not a file read
    relevant_lines: int = 3
    fresh_min_lines: int = 40  # 0: an unanswered tool output always stays verbatim
    fresh_head_lines: int = 6
    fresh_tail_lines: int = 6
    fresh_relevant_lines: int = 6
    # a recent output (condensed tier) of fewer non-blank lines, as it came in and as it is,
    # stays as it is: its head and tail are most of it, and a table or a stack cut by two
    # lines saves a few tokens for a gap (set 23: two of six ``npm outdated`` rows, five
    # lines of a node error object)
    condensed_min_lines: int = 12
    # an output an earlier lossy engine shortened to at most this many tokens is left as it
    # is (held-out sets 8-10: aggressive kept 0.3-3.7 points more facts for 1.9-4.4 points of
    # savings; a bigger one is condensed, its critical lines kept)
    shortened_output_max_tokens: int = 3000
    # a tool output of at most this many tokens as it came in stays as it is at any age
    # (unless over budget): a marker costs a sixth of it, and it is an answer (set 26: a six
    # line load summary, ``500: 10`` among them; set 28 aggressive: 346 -> 363 of 448 facts from
    # 64 to 128 tokens, ``ss -ltnp``'s six listeners among them, 61.9 % saved either way; 363 ->
    # 393 from 128 to 256, 61.6 % saved, a load test's summary and redis-cli's answers among
    # them; 384 kept 2 facts more for 0.1 point)
    short_output_max_tokens: int = 256

    def tier(self, unit: Unit, pos: Position) -> int:
        if unit.kind == "tool_result":
            if pos.step_age < self.tool_verbatim_steps:
                return VERBATIM
            if pos.step_age < self.tool_recent_steps and pos.turn_age == 0:
                return CONDENSED
            return SUMMARISED
        by_turn = _tier(pos.turn_age, self.prose_verbatim_turns, self.prose_summary_turns)
        if unit.role != "assistant":
            return by_turn
        by_step = _tier(pos.step_age, self.assistant_condense_steps, self.assistant_summary_steps)
        return max(by_turn, by_step)


def _read_symbols(unit: Unit, original: str) -> tuple[int | None, list[Symbol]] | None:
    """The symbols of a read of source code, from the read as it came in (its path and
    language, see :func:`workers.engines._code.symbols`), with the file line of the read's
    first line (None: unknown), or None.

    A part of a file (``sed -n '300,600p'``, ``head -n 420``) often does not parse: its
    functions are then found by their shape (:func:`_shaped_functions`).  A ``cat`` of
    several files of one language is read as one text (no file lines: the names stay)."""
    if not unit.command or len(original) > _NAMED_MAX_BYTES:
        return None
    access = parse_access(unit.command, unit.tool_name, original)
    read = access.read if access is not None else None
    offset: int | None = None
    if read is not None:
        lang = language_of(read.path, original)
        offset = read.first if read.tail is None else None
    else:
        langs = {language_of(path, original) for path in cat_files(unit.command)}
        lang = langs.pop() if len(langs) == 1 else None
    if lang is None:
        return None
    lines = original.split("\n")
    # a ``cat -n`` (or an edit tool's numbered view) parses as the code behind its numbers
    found = symbols("\n".join(_numbers_off(lines)), lang) or _shaped_functions(lines)
    return (offset, found) if found else None


def _numbers_off(lines: Sequence[str]) -> Sequence[str]:
    """``lines`` without ``cat -n``'s line numbers when nine in ten lines have one, else as
    they are (the rows stay: one line of code per line)."""
    numbered = sum(1 for line in lines if _CAT_N.match(line))
    if numbered and numbered >= (len(lines) - 1) * 0.9:
        return [_CAT_N.sub("", line, count=1) for line in lines]
    return lines


# A function's first line, when the file part does not parse: a name and ``(`` after nothing
# but words, types and modifiers (``def``, ``pub fn``, ``int *``, ``export function``, a
# method's bare name), never after ``=``, ``.``, ``(``, ``,`` or ``return`` (a call).
_SHAPED_DEF = re.compile(
    r"^(?P<indent>[ \t]*)(?P<prefix>(?:[\w$@*&<>\[\]:]+[ \t]+\**)*)"
    r"(?P<name>[A-Za-z_$][\w$]*)[ \t]*(?:<[^<>()\n]{0,80}>)?[ \t]*\("
)
_CAT_N = re.compile(r"^ *\d{1,7}\t")
_CONTAINER_WORDS = frozenset({"class", "struct", "impl", "interface", "enum", "trait", "object"})
_NOT_A_DEF = frozenset({"return", "if", "while", "for", "switch", "catch", "await", "new", "else"})


def _shaped_functions(lines: Sequence[str]) -> list[Symbol]:
    """Functions of a file part found by their shape: a first line as :data:`_SHAPED_DEF`
    whose signature ends (within 4 lines) in ``{`` or ``:``; the body runs while lines are
    indented deeper (``:``) or until its braces close (``{``)."""
    found: list[Symbol] = []
    lines = _numbers_off(lines)  # ``cat -n``: the code behind the tab
    k = 0
    n = len(lines)
    while k < n:
        m = _SHAPED_DEF.match(lines[k])
        words = m.group("prefix").split() if m is not None else []
        if m is None or m.group("name") in _NOT_A_DEF or any(w in _NOT_A_DEF for w in words):
            k += 1
            continue
        end_sig = next(
            (j for j in range(k, min(k + 4, n)) if lines[j].rstrip().endswith(("{", ":"))), None
        )
        if end_sig is None:
            k += 1
            continue
        indent = len(m.group("indent").expandtabs())
        last = end_sig
        if lines[end_sig].rstrip().endswith(":"):
            for j in range(end_sig + 1, n):
                if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) <= indent:
                    break
                last = j
        else:
            depth = 0
            for j in range(k, n):
                depth += lines[j].count("{") - lines[j].count("}")
                last = j
                if j >= end_sig and depth <= 0:
                    break
        body = (end_sig + 1, last) if last > end_sig else None
        kind = "container" if _CONTAINER_WORDS.intersection(words) else "function"
        found.append(Symbol(m.group("name"), kind, k, last, body))
        k = end_sig + 1
    return found


def _rows_as_written(
    original: str, lines: Sequence[str], spans: Sequence[tuple[int, int]]
) -> set[int]:
    """Rows of ``lines`` (the read as the earlier engines left it) that show the rows
    ``start..end`` of ``original`` as written: found by the span's first line, then line by
    line while they match (an outlined body stops the run)."""
    source = original.split("\n")
    at = {line: k for k, line in reversed(list(enumerate(lines)))}
    rows: set[int] = set()
    for start, end in spans:
        if start >= len(source):
            continue
        k = at.get(source[start])
        if k is None:
            continue
        for j in range(end - start + 1):
            if k + j >= len(lines) or start + j >= len(source):
                break
            if lines[k + j] != source[start + j]:
                break
            rows.add(k + j)
    return rows


def _char_spans_to_rows(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``(first row, last row)`` of ``text`` that each character span touches."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    rows = []
    for begin, end in spans:
        if begin >= len(text):
            continue
        first = bisect_right(starts, begin) - 1
        last = bisect_right(starts, max(begin, min(end, len(text)) - 1)) - 1
        rows.append((first, last))
    return rows


# a later place in a file: ``path:LINE``, ``File "path", line N``, a ``cat -n`` snippet's
# numbered line (an edit tool's result), a diff's ``@@ -A,B`` hunk of ``--- a/path``
_PLACE = re.compile(r"""([\w./@+-]+)(?::|", line )(\d{1,7})\b""")
_NUMBERED = re.compile(r"^ *(\d{1,7})\t", re.M)
_MENTION_SCAN = 400_000  # characters of a later text read for places
_FAILURE_OUTPUTS = 12  # later tool outputs read for the failing tests they name
_FAILURE_NAMES = 200  # ... and at most this many of their failure lines
_MENTIONS_PER_TEXT = 50  # places naming the file read in one later text
_MENTIONS_PER_READ = 100  # places naming the file read, over every later text
_INDEX_AFTER = 8  # reads that look for later mentions before the texts' words are indexed
_FILE_WORD = re.compile(r"[\w.+-]+")  # a file name as a word (``ledger.py``, ``Makefile``)


class _LaterMentions:
    """What comes after a read in the conversation, for the functions of the read that stay
    whole: the agent's next words (its comment on the read) and the file lines later
    outputs point at (an edit's snippet, a diff's hunk, a traceback's or compiler's
    ``path:line``)."""

    def __init__(
        self, units: Sequence[Unit], answering: set[int], inputs: Sequence[str] = ()
    ) -> None:
        self.units = units
        self.answering = answering
        # the outputs as they came in: a later traceback's frame that the tool filter stashed
        # still says which function the agent went on to look at
        self.texts = [inputs[j] if j < len(inputs) else u.text for j, u in enumerate(units)]
        self._looks = 0
        # per unit, the words of its text (file names among them), once many reads look
        self._words: list[frozenset[str]] | None = None
        self._diffs: dict[int, bool] = {}

    def _later(self, name: str, index: int) -> Iterable[tuple[int, Unit]]:
        """The units after ``index`` that may name ``name``: all of them for the first few
        reads; then each text's words are read once and only texts holding it are looked at
        (a session of hundreds of reads before megabytes of output)."""
        self._looks += 1
        if self._words is None and self._looks > _INDEX_AFTER:
            self._words = [
                frozenset(_FILE_WORD.findall(text, 0, _MENTION_SCAN)) for text in self.texts
            ]
        words = self._words if _FILE_WORD.fullmatch(name) else None
        for j in range(index + 1, len(self.units)):
            if words is None or name in words[j]:
                yield j, self.units[j]

    def _diff(self, j: int) -> bool:
        """Whether unit ``j``'s text (as far as it is read) holds a diff hunk (looked up once)."""
        held = self._diffs.get(j)
        if held is None:
            held = self._diffs[j] = self.texts[j].find("@@ -", 0, _MENTION_SCAN) >= 0
        return held

    def failing_tests(self, index: int) -> str:
        """The failing tests later outputs name (``FAILED tests/test_cart.py::test_total``,
        phpunit's ``1) LedgerTest::testOpenTwiceFails``), one per line: the test functions an
        older read of the test file holds that the agent went on to fix."""
        found: list[str] = []
        seen = 0
        for j in range(index + 1, len(self.units)):
            unit = self.units[j]
            if unit.kind != "tool_result" or read_paths(unit):
                continue
            seen += 1
            if seen > _FAILURE_OUTPUTS:
                break
            text = self.texts[j]
            if len(text) > _MENTION_SCAN:
                continue
            found += sorted(
                line
                for kind, line in critical_lines(text, "tool_result", unit.command)
                if kind == "test_failure"
            )
        return "\n".join(found[:_FAILURE_NAMES])

    def comment(self, index: int) -> str:
        """The first assistant text after unit ``index``, before the next request."""
        for unit in self.units[index + 1 :]:
            if unit.role == "user" and unit.kind == "text" and unit.index not in self.answering:
                return ""
            if unit.role == "assistant" and unit.kind == "text" and unit.text.strip():
                return unit.text[:_MENTION_SCAN]
        return ""

    def file_lines(self, read: Unit, index: int) -> set[int]:
        """File lines of ``read``'s file that later units point at (each later text read up
        to :data:`_MENTION_SCAN` characters, and only around the places that name the file)."""
        paths = read_paths(read)
        if len(paths) != 1:
            return set()
        path = paths[0].lstrip("./")
        name = path.rsplit("/", 1)[-1]
        found: set[int] = set()
        places = _MENTIONS_PER_READ
        for j, unit in self._later(name, index):
            text = self.texts[j]
            end = min(len(text), _MENTION_SCAN)
            at = text.find(name, 0, end)
            if at < 0:
                continue
            for _ in range(_MENTIONS_PER_TEXT):
                if at < 0 or places <= 0:
                    break
                places -= 1
                # the place around this mention: from its line's start to a few characters on
                start = max(text.rfind("\n", max(0, at - 400), at) + 1, at - 400)
                for m in _PLACE.finditer(text, start, min(end, at + len(name) + 24)):
                    where = m.group(1).lstrip("./")
                    if where == path or path.endswith("/" + where) or where.endswith("/" + path):
                        found.add(int(m.group(2)))
                at = text.find(name, at + len(name), end)
            if unit.kind != "tool_result" or text.find(path, 0, end) < 0 or read_paths(unit):
                continue  # (a read of the file again: its own lines are not places)
            if text.find(path, 0, _end_of_lines(text, 3, end)) >= 0:
                # an edit's snippet of the file (its numbered lines under a first line or two
                # naming the file)
                found.update(int(n) for n in _NUMBERED.findall(text, 0, end))
            if self._diff(j):
                found.update(_hunk_lines(text[:end], path))
        return found


def _end_of_lines(text: str, count: int, end: int) -> int:
    """Where the first ``count`` lines of ``text[:end]`` end."""
    at = -1
    for _ in range(count):
        at = text.find("\n", at + 1, end)
        if at < 0:
            return end
    return at


def _hunk_lines(diff: str, path: str) -> set[int]:
    """Old-side lines of the hunks of ``path`` in a unified diff (a removed ``-- comment``
    line inside a hunk is no file header: each hunk's line counts say where it ends)."""
    found: set[int] = set()
    current = False
    lines = diff.split("\n")
    for line, kind in zip(lines, hunk_kinds(lines), strict=True):
        if kind == "@":
            if current and (m := HUNK.match(line)) is not None:
                old_left = int(m.group(2)) if m.group(2) is not None else 1
                first_line = int(m.group(1))
                found.update(range(first_line, first_line + min(old_left, 200)))
        elif kind == "" and line.startswith(("--- ", "+++ ")):
            where = line[4:].split("\t", 1)[0].strip()
            where = where[2:] if where[:2] in ("a/", "b/") else where
            if line.startswith("--- ") or where != "/dev/null":
                current = where.lstrip("./") == path or where.endswith("/" + path)
    return found


def _named_symbol_rows(
    found: Sequence[Symbol], original: str, lines: Sequence[str], latest: str
) -> set[int]:
    """Rows of ``lines`` that hold a function the latest user message names, whole as long
    as they read as in the file: the model is working on it in this turn (outline keeps it
    whole for the same reason)."""
    words = set(_WORD.findall(latest)) if latest else set()
    if not words:
        return set()
    spans = [(s.start, s.end) for s in found if s.kind == "function" and s.name in words]
    if not spans or any(start == end for start, end in spans):
        # a part of a file that parsed without its methods (a class left open), or a
        # function found by its signature alone: its body by its shape
        shaped = {s.start: s.end for s in _shaped_bodies(original) if s.name in words}
        spans = [(start, max(end, shaped.get(start, end))) for start, end in spans] or list(
            shaped.items()
        )
    return _rows_as_written(original, lines, spans)


def _shaped_bodies(original: str) -> list[Symbol]:
    """The functions of ``original`` found by their shape (:func:`_shaped_functions`)."""
    return [s for s in _shaped_functions(original.split("\n")) if s.kind == "function"]


def _touched_functions(
    found: Sequence[Symbol], original: str, offset: int, touched: set[int]
) -> list[str]:
    """Names of the functions of a read (file lines from ``offset``) that hold one of the
    file lines ``touched`` (a function found by its signature alone: its body by its shape)."""
    ends = (
        {s.start: s.end for s in _shaped_bodies(original)}
        if any(s.start == s.end for s in found)
        else {}
    )
    return [
        s.name
        for s in found
        if s.kind == "function"
        and any(s.start + offset <= n <= max(s.end, ends.get(s.start, 0)) + offset for n in touched)
    ]


def _symbol_map_note(
    found: Sequence[Symbol], original: str, offset: int | None
) -> Callable[[int, str], str]:
    """The note of a marker in an older read of a source file: the lines it hides and the
    top-level functions and classes that start there, by name and file line (``… 47 lines
    omitted: Fields (line 340), FieldsFunc (line 388)``): a map of the file at a few tokens a
    name, where showing each signature cost a line and a marker."""
    source = original.split("\n")
    named: dict[str, str] = {}
    for sym in found:
        if sym.parents or sym.start >= len(source):
            continue
        where = f" (line {sym.start + offset})" if offset is not None else ""
        named.setdefault(source[sym.start].strip(), f"{sym.name}{where}")

    def note(count: int, run: str) -> str:
        text = f"{count} line{'s' if count != 1 else ''} omitted"
        names = [named[key] for key in (line.strip() for line in run.split("\n")) if key in named]
        shown: list[str] = []
        room = NOTE_CAP - len(text) - 2 - len(", +999 more")  # a marker's note is one short line
        for name in names:
            if len(name) + 2 > room:
                break
            shown.append(name)
            room -= len(name) + 2
        if shown:
            text += ": " + ", ".join(shown)
            if len(shown) < len(names):
                text += f", +{len(names) - len(shown)} more"
        return text

    return note


def _nonblank(lines: Sequence[str]) -> list[int]:
    return [k for k, line in enumerate(lines) if line.strip()]


def _gist(lines: Sequence[str], keep: Sequence[bool]) -> str:
    for k, line in enumerate(lines):
        if keep[k] or not line.strip() or "<<cx:" in line or "[[" in line:
            continue
        words = line.split()
        text = " ".join(words[:_GIST_WORDS]).replace('"', "'")
        more = "..." if len(words) > _GIST_WORDS else ""
        return f'"{text[:120]}{more}"'
    return ""


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _relevant(text: str, lines: Sequence[str], query_terms: set[str], limit: int) -> list[int]:
    """Up to ``limit`` lines sharing the most rare query terms with the latest request.

    A term found more often than on ``_RARE_SHARE`` of the lines is no signal
    and is skipped after one C-speed count; the others are located with
    ``str.find`` (whole words, case-insensitive).
    """
    if not query_terms or limit <= 0:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        return []  # case folding changed offsets (rare scripts): no line mapping
    cap = max(1, int(len(lines) * _RARE_SHARE))
    starts: list[int] | None = None
    hits: dict[int, int] = {}
    for term in sorted(query_terms):
        if lowered.count(term) > cap:
            continue
        if starts is None:
            starts = line_starts(lines)
        pos = lowered.find(term)
        seen_lines: set[int] = set()
        while pos >= 0:
            end = pos + len(term)
            if (pos == 0 or not _is_word(lowered[pos - 1])) and (
                end >= len(lowered) or not _is_word(lowered[end])
            ):
                seen_lines.add(bisect_right(starts, pos) - 1)
            pos = lowered.find(term, end)
        for k in seen_lines:
            hits[k] = hits.get(k, 0) + 1
    ranked = sorted(hits.items(), key=lambda item: (-item[1], item[0]))
    return [k for k, _ in ranked[:limit]]


class AgingEngine(Engine):
    name = "aging"
    lossless = False

    def __init__(self, language: str = "en", policy: AgingPolicy | None = None) -> None:
        self.language = language
        self.policy = policy or AgingPolicy()

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        pack = language_pack(self.language)
        policy = self.policy
        positions = layout(units)
        query = terms(ctx.latest_user_text, pack)
        asked = request_terms(ctx.latest_user_text)  # words that name the lines holding them
        texts = [u.text for u in units]
        stash: dict[str, str] = {}
        tiers = {"fresh": 0, "condensed": 0, "summarised": 0}
        lines_dropped = runs = 0
        spans: dict[str, list[tuple[int, int]]] | None = None  # dedup's copies, when needed
        asking = ""  # the user message that opened the turn a unit is in
        # (a text block beside tool results in one user message, a harness's reminder, opens
        # no turn)
        answering = {u.index for u in units if u.kind == "tool_result"}
        later = _LaterMentions(units, answering, ctx.input_texts)
        # a record over its token budget: the budget engine will cut; aging's cuts, around
        # the facts, come first (a shortened output is then condensed again too)
        over_budget = ctx.budget_tokens is not None and (
            sum(ctx.tokens.count(u.text) for u in units) > ctx.budget_tokens
        )
        for i, (unit, pos) in enumerate(zip(units, positions, strict=True)):
            if unit.role == "user" and unit.kind == "text" and unit.index not in answering:
                asking = unit.text
            if unit.frozen or unit.role == "system" or pos.latest_user or not unit.text.strip():
                continue
            tier = policy.tier(unit, pos)
            if tier == VERBATIM and unit.kind == "tool_result" and self._fresh(unit, i, ctx):
                tier = FRESH
            original = ctx.input_texts[i] if i < len(ctx.input_texts) else unit.text
            if tier == VERBATIM or (
                unit.kind == "tool_result"
                and not over_budget
                and (
                    (
                        tier == CONDENSED
                        and max(_nonblank_lines(original), _nonblank_lines(unit.text))
                        < policy.condensed_min_lines
                    )
                    or ctx.tokens.count(original) <= policy.short_output_max_tokens
                )
            ):
                continue
            if spans is None:
                spans = dup_spans(units)
            new, n_lines, n_runs = self._age(
                unit,
                tier,
                policy,
                pack,
                query,
                asked,
                ctx,
                stash,
                original,
                spans.get(unit.uid, ()),
                asking,
                later,
                i,
                over_budget,
            )
            if new != unit.text:
                texts[i] = new
                tiers[_TIER_NAMES[tier]] += 1
                lines_dropped += n_lines
                runs += n_runs
        details: dict[str, object] = {}
        if runs:
            details = {
                "units_fresh": tiers["fresh"],
                "units_condensed": tiers["condensed"],
                "units_summarised": tiers["summarised"],
                "lines_omitted": lines_dropped,
                "markers": runs,
            }
        return EngineOutput(texts=texts, details=details, stash=stash)

    def _age(
        self,
        unit: Unit,
        tier: int,
        policy: AgingPolicy,
        pack: LanguagePack,
        query: set[str],
        asked: frozenset[str],
        ctx: EngineContext,
        stash: dict[str, str],
        original: str,
        copied: Sequence[tuple[int, int]] = (),
        asking: str = "",
        later: _LaterMentions | None = None,
        index: int = -1,
        over_budget: bool = False,
    ) -> tuple[str, int, int]:
        text = unit.text
        if (
            unit.kind == "tool_result"
            and original != text
            and STASH_LITERAL in text
            and ctx.tokens.count(text) <= policy.shortened_output_max_tokens
            and not over_budget
            and self._report(unit, ctx, original)
        ):
            # the tool filter or the log folder already shortened this report, build or log
            # around its facts (its failures, errors, warnings): condensing it again would
            # trade those facts for a few hundred tokens (unless a budget needs them); data
            # (JSON, tables, listings) shortened by the crusher or the listing view ages on
            return text, 0, 0
        lines = text.split("\n")
        owner, ranges = fence_mask(text, lines)
        nonblank = _nonblank(lines)
        map_note: Callable[[int, str], str] | None = None
        if unit.kind == "tool_result":
            fresh = tier == FRESH
            # a search's matches (``grep -rn``: ``path:line: text``) are read as any output's
            # findings, each place one, as the tool filter reads them in standard mode (the
            # gate's rule for a search counts its files)
            keep = critical_flags(
                text,
                lines,
                "tool_result",
                distinct=not fresh,
                keep_markers=False,
                command=unit.command,
                shape=repeat_key,
                last_too=not fresh,
            )
            if "@@ -" in text:
                # a diff's changed lines are what was done: they stay, its context may go
                # (but for the lines that declare what changed: ``pub fn format_minor(...)``)
                for k in changed_rows(lines):
                    keep[k] = True
                for k in declaring_context_rows(lines):
                    keep[k] = True
            search = self._search(unit, ctx, original)
            if search:
                places = critical_flags(
                    text,
                    lines,
                    "tool_result",
                    distinct=not fresh,
                    keep_markers=False,
                    command=None,
                    shape=repeat_key,
                    last_too=not fresh,
                )
                keep = [a or b for a, b in zip(keep, places, strict=True)]
            if fresh:  # an earlier engine's note that lists locations or values stays
                for k, line in enumerate(lines):
                    if not keep[k] and STASH_LITERAL in line and not _BARE_NOTE.match(line):
                        keep[k] = True

            if ("[[" in original or STASH_LITERAL in original) and has_marker(original):
                # a line of the input that reads as a marker (a log quoting one) stays as
                # the model read it: quoted markers are what such an output is about
                quoted = {line for line in original.split("\n") if has_marker(line)}
                for k, line in enumerate(lines):
                    if line in quoted:
                        keep[k] = True
            if original != text:
                # a line critical in the output as it came in stays too (an earlier
                # engine's markers can change what is critical here); error lines of an
                # older output stay one per repeat key
                for command in (unit.command, None) if search else (unit.command,):
                    flag_critical_before(
                        original, lines, keep, command, distinct=not fresh, last_too=not fresh
                    )
            if fresh:
                head, tail = policy.fresh_head_lines, policy.fresh_tail_lines
                relevant = policy.fresh_relevant_lines
            elif tier == CONDENSED:
                head, tail, relevant = policy.head_lines, policy.tail_lines, policy.relevant_lines
            else:
                # the first line, and the last: how the command ended (a benchmark's ``tps =``,
                # psql's ``(30 rows)``, a plan's ``Execution Time``), unless the file is read
                summary_tail = 0 if is_file_read(unit) else policy.summary_tail_lines
                head, tail, relevant = 1, summary_tail, policy.relevant_lines
            for k in nonblank[:head]:
                keep[k] = True
            for k in nonblank[len(nonblank) - tail :] if tail else ():
                keep[k] = True
            for k in _relevant(text, lines, query, relevant):
                keep[k] = True
            # a line the request names (an id, a package, a pid only it holds) stays too
            for k in named_lines(text, asked):
                keep[k] = True
            source = _read_symbols(unit, original) if not fresh else None
            if source is not None:
                offset, found = source
                # an older read of a source file: its markers name what they hide, and a
                # function the latest user message names, or the request the read answered,
                # stays whole (at any age: what was asked about is what the model read for)
                map_note = _symbol_map_note(found, original, offset)
                named = f"{ctx.latest_user_text}\n{asking}" if asking else ctx.latest_user_text
                if later is not None:
                    # and one the agent's next words name, or a later edit, diff or
                    # traceback of this file touches
                    named = f"{named}\n{later.comment(index)}\n{later.failing_tests(index)}"
                    touched = later.file_lines(unit, index)
                    if touched and offset is not None:
                        named += "\n" + " ".join(
                            _touched_functions(found, original, offset, touched)
                        )
                for k in _named_symbol_rows(found, original, lines, named):
                    keep[k] = True
        else:
            keep = critical_flags(
                text, lines, "text", distinct=False, pack=pack, keep_markers=False
            )
            if tier == CONDENSED:
                if nonblank:
                    keep[nonblank[0]] = True  # the request or the topic line
                if unit.role == "assistant":
                    self._assistant_keeps(lines, owner, ranges, pack, keep)
        if copied:  # what another message's dedup back-reference shows stays visible here
            for k in _rows_as_written(original, lines, _char_spans_to_rows(original, copied)):
                keep[k] = True
        if unit.kind == "tool_result":
            _drop_orphan_frames(lines, keep)
        close_fences(keep, ranges)
        if tier == SUMMARISED and unit.kind != "tool_result":
            gist = _gist(lines, keep)
            role = f"{unit.role} message"
            first_note = [True]

            def note(count: int, run: str) -> str:
                plural = "s" if count != 1 else ""
                if first_note[0] and gist:
                    first_note[0] = False
                    return f"earlier {role} ({count} line{plural}): {gist}"
                return f"{count} line{plural} omitted"

            result = stash_runs(lines, keep, ctx.tokens, note=note)
        elif map_note is not None:
            result = stash_runs(lines, keep, ctx.tokens, note=map_note)
        else:
            result = stash_runs(lines, keep, ctx.tokens)
        stash.update(result.stash)
        return result.text, result.lines_dropped, result.runs

    @staticmethod
    def _report(unit: Unit, ctx: EngineContext, original: str) -> bool:
        """Whether ``original`` (a tool output as it came in) is no data: no JSON document
        (JSON lines are a log: a service's events, an access log, ``jq -c`` of its 5xx
        lines), no listing or table (:data:`DATA_FAMILIES`, or half its rows paths)."""
        if _json_document(original):
            first, _, rest = original.lstrip().partition("\n")
            if not (rest.strip() and first.rstrip().endswith("}") and _json_line(first)):
                return False
        rows = [line for line in original.split("\n", 400)[:400] if line.strip()]
        if not rows or sum(1 for line in rows if _PATH_ROW.match(line)) * 2 >= len(rows):
            return False
        filters = ctx.filters if ctx.filters is not None else builtin_filters()
        return filters.detect(unit.command, unit.tool_name, original).family not in DATA_FAMILIES

    @staticmethod
    def _search(unit: Unit, ctx: EngineContext, original: str) -> bool:
        """Whether ``unit`` is a search's output (grep, rg, git grep: the tool filter's family)."""
        if not unit.command or ("grep" not in unit.command and "rg" not in unit.command):
            return False
        filters = ctx.filters if ctx.filters is not None else builtin_filters()
        return filters.detect(unit.command, unit.tool_name, original).family == "grep"

    def _fresh(self, unit: Unit, index: int, ctx: EngineContext) -> bool:
        """An unanswered tool output long enough, and of a family whose noise may go.

        The family is read from the output as it came in (an earlier engine may
        have rewritten a listing into a view no filter recognises).
        """
        text = unit.text
        minimum = self.policy.fresh_min_lines
        if minimum <= 0 or text.count("\n") + 1 < minimum:
            return False
        if sum(1 for line in text.split("\n") if line.strip()) < minimum:
            return False
        if _json_document(text) or "[[json-table:" in text or _HUNK_HEADER.search(text):
            return False
        filters = ctx.filters if ctx.filters is not None else builtin_filters()
        original = ctx.input_texts[index] if index < len(ctx.input_texts) else text
        if original is not text and (_json_document(original) or _HUNK_HEADER.search(original)):
            return False
        rows = [line for line in original.split("\n", 400)[:400] if line.strip()]
        if sum(1 for line in rows if _PATH_ROW.match(line)) * 2 >= len(rows):
            return False  # a listing, whatever printed it: its paths are the answer
        found = filters.detect(unit.command, unit.tool_name, original)
        return found.source != "skip" and found.family not in CONTENT_FAMILIES

    @staticmethod
    def _assistant_keeps(
        lines: Sequence[str],
        owner: Sequence[int],
        ranges: Sequence[tuple[int, int]],
        pack: LanguagePack,
        keep: list[bool],
    ) -> None:
        """Decisions, file paths, commands and URLs of a condensed assistant message."""
        for k, line in enumerate(lines):
            if keep[k] or not line.strip() or owner[k] >= 0:
                continue
            if pack.decision.search(line) or has_reference(line):
                keep[k] = True
        for a, b in ranges:
            if _SHELL_FENCE.match(lines[a].lstrip()):
                for k in range(a, b):
                    keep[k] = True
