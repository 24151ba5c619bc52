"""``read-lifecycle``: a file read that a later read or write supersedes becomes a marker.

A tool result is a *read* of one file when its command is a single read
command (after optional ``cd DIR &&`` prefixes): ``cat [-n...] FILE``,
``nl FILE``, ``less``/``more``/``bat FILE``, ``head [-n N|-N] FILE`` (lines
1-N, default 10), ``tail [-n N|-n +K] FILE``, ``sed -n 'A,Bp' FILE``, or
``cat FILE | head/tail/sed -n ...``; or when a read tool (``Read``,
``read_file``, ``view``...) names the file (the codec turns its path argument
into ``cat 'path'``; a line-numbered result such as ``  12→code`` tells the
range read).  ``grep "cat " .`` is not a read, nor is anything that pipes,
redirects or chains other commands.  A *write* is a tool call that changes a
file: ``>``/``>>``/``tee``/``sed -i``/``perl -i``/``cp``/``mv``/``rm``/
``truncate``/``dd of=`` in a shell command, or a write/edit tool naming the
file.

A read is *superseded* by the first later event on the same path that is

- a read of the same or a wider range whose text is intact (no dedup
  back-reference, no stash marker: the newer copy must really be visible) and
  that shares at least half of its lines with the older read unless a write
  came in between (a different working directory or an external rewrite would
  make them different files), or
- a write of the file.

The superseded read becomes ``… superseded read of src/app.py (212 lines);
newer copy in message 14 <<cx:KEY>>`` (or ``… stale read of PATH (N lines);
the file was changed in message 14 <<cx:KEY>>``) with its text stashed.  When
the newer read is itself superseded, the marker names the last copy in the
chain, so a marker never points at a marker.  The newer copy is given to the
gate as an explicit back-reference (``_backrefs``): critical lines of the old
read must be visible there, or the read stays.  Never superseded: frozen
units, failed reads, tool results split into several parts, and reads that a
dedup back-reference of another unit points at.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from workers.engines._text import dup_sources, nonzero, restores, stash_marker
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.lossy import check_lossy
from workers.markers.superseded import stale_note, superseded_note
from workers.messages.model import Unit

__all__ = [
    "Access",
    "Read",
    "ReadLifecycleEngine",
    "covers",
    "parse_access",
    "shell_access_cache_clear",
]

MAX_COMMAND = 20_000
MAX_FORWARD = 256  # later events looked at per read
MIN_OVERLAP = 0.5
_SHELL_TOOL = re.compile(
    r"(?i)bash|shell|terminal|exec|run|command|^sh$|zsh|powershell|^cmd$|console|cli"
)
_READ_TOOL = re.compile(
    r"(?i)read|view|open|^cat$|get_?file|file_?content|show_?file|load_?file|fetch_?file"
)
_WRITE_TOOL = re.compile(
    r"(?i)write|edit|create|replace|patch|insert|append|save|update|delete|remove|move|rename"
)
_NOT_READ_TOOL = re.compile(r"(?i)search|grep|find|list|glob|ls\b|dir|tree|symbol")
_HEREDOC = re.compile(r"(?<!<)<<-?(?!<)\s*['\"]?([\w.-]{1,64})['\"]?")
_FD = re.compile(r"(?<![\w\\$])([0-9])(?=>)")
_REDIRECT = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_SEPARATORS = frozenset({";", "&&", "||", "&", "|", "|&", ";;"})
_NUMBERED = re.compile(r"^\s*(\d{1,9})(?:→|\t)")
_NUMBER_PREFIX = re.compile(r"^[ \t]*\d{1,9}(?:→|\t)", re.M)
_SED_RANGE = re.compile(
    r"^\s*(\d{1,9})\s*(?:,\s*(\d{1,9}|\$)\s*)?p\s*(?:;\s*\d{1,9}\s*q\s*)?;?\s*$"
)
_FAILED = re.compile(
    r"^(?:(?:cat|head|tail|sed|nl|less|more|bat|batcat): |error\b|file does not exist|"
    r"no such file|<tool_use_error>)",
    re.I,
)
_WRITE_FAILED = re.compile(
    r"(?i)\berror\b|\bfailed\b|not found|no such file|permission denied|cannot |can't |"
    r"<tool_use_error>"
)
_BAD_PATH = re.compile(r"[*?\[\]{}$`~<>|;&\x00-\x1f]|^-|^/dev/|^/proc/self")
_CAT_OPTS = frozenset("nbAeEsStTuv")
_NL_VALUE_OPTS = frozenset({"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"})


@dataclass(frozen=True, slots=True)
class Read:
    """A range of lines of one file: ``first``..``last`` (``None``: to the end).

    ``tail`` is set for ``tail -n N`` (the last N lines, position unknown).
    ``assumed`` marks a read tool whose range could not be seen (taken as
    the whole file).
    """

    path: str
    first: int = 1
    last: int | None = None
    tail: int | None = None
    assumed: bool = False


@dataclass(frozen=True, slots=True)
class Access:
    """What one tool call did to files: the file it read (if any) and files it wrote."""

    read: Read | None
    writes: tuple[str, ...] = ()


def covers(new: Read, old: Read) -> bool:
    """Whether ``new`` shows every line ``old`` showed (same file assumed)."""
    if new.tail is not None:
        return old.tail is not None and new.tail >= old.tail
    if new.first == 1 and new.last is None:
        return True
    if old.tail is not None:
        return False
    if new.first > old.first:
        return False
    if new.last is None:
        return True
    return old.last is not None and old.last <= new.last


# -- command parsing -------------------------------------------------------------


def _tokens(command: str) -> list[str] | None:
    lines = command.split("\n")
    kept: list[str] = []
    heredoc: str | None = None
    for line in lines:
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        kept.append(line)
        m = _HEREDOC.search(line)
        if m is not None:
            heredoc = m.group(1)
    text = _FD.sub(r" __fd\1__", "\n".join(kept))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    return ["\n" if t == "\n" else t for t in tokens]


def _segments(tokens: list[str]) -> list[tuple[str, list[str]]]:
    """``(operator before, words)`` per simple command."""
    out: list[tuple[str, list[str]]] = []
    op = ""
    words: list[str] = []
    for token in tokens:
        if token in _SEPARATORS or token == "\n":
            if words:
                out.append((op, words))
            op = token
            words = []
        else:
            words.append(token)
    if words:
        out.append((op, words))
    return out


def _clean_path(path: str, cwd: str) -> str | None:
    if not path or _BAD_PATH.search(path):
        return None
    if cwd and not path.startswith("/"):
        path = posixpath.join(cwd, path)
    path = posixpath.normpath(path)
    return None if path in (".", "..", "/") else path


def _split_redirects(words: list[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Arguments without redirections, and the redirections ``(fd, op, target)``."""
    args: list[str] = []
    redirects: list[tuple[str, str, str]] = []
    i = 0
    fd = "1"
    while i < len(words):
        word = words[i]
        if word.startswith("__fd") and word.endswith("__") and len(word) == 7:
            fd = word[4]
            i += 1
            continue
        if word in _REDIRECT or word in ("<", "<<", "<<<", "<&"):
            target = words[i + 1] if i + 1 < len(words) else ""
            redirects.append((fd, word, target))
            fd = "1"
            i += 2
            continue
        fd = "1"
        args.append(word)
        i += 1
    return args, redirects


def _count(value: str) -> int | None:
    return int(value) if value.isdigit() and len(value) <= 9 else None


def _head_tail(args: list[str]) -> tuple[list[str], int | None, bool, bool] | None:
    """``(files, count, from_line, ok)`` for head/tail arguments."""
    files: list[str] = []
    count: int | None = 10
    plus = False
    i = 0
    while i < len(args):
        arg = args[i]
        value: str | None = None
        if arg in ("-n", "--lines"):
            value = args[i + 1] if i + 1 < len(args) else ""
            i += 1
        elif arg.startswith("--lines="):
            value = arg[8:]
        elif arg.startswith("-n") and len(arg) > 2:
            value = arg[2:]
        elif arg[:1] == "-" and arg[1:].isdigit():
            value = arg[1:]
        elif arg in ("-q", "-v", "-f", "-F", "--quiet", "--silent", "--verbose", "--follow"):
            pass
        elif arg.startswith("-") and arg != "-":
            return None  # -c (bytes) and anything unknown
        else:
            files.append(arg)
        if value is not None:
            if value.startswith("+"):
                plus = True
                value = value[1:]
            count = _count(value)
            if count is None:
                return None
        i += 1
    return files, count, plus, True


def _read_of(words: list[str], cwd: str) -> Read | None:
    """The read a simple command does, if it is one."""
    args, redirects = _split_redirects(words)
    for fd, op, target in redirects:
        if op.startswith("<"):
            return None
        if fd == "1" and op != ">&":
            return None  # stdout goes to a file: a write, not a read
        if op != ">&" and not target.startswith("/dev/"):
            return None
    if not args:
        return None
    name = posixpath.basename(args[0])
    rest = args[1:]
    if name == "cat":
        opts = [a for a in rest if a.startswith("-") and a != "-"]
        files = [a for a in rest if not (a.startswith("-") and a != "-")]
        if any(not set(o[1:]) <= _CAT_OPTS for o in opts) or len(files) != 1:
            return None
        path = _clean_path(files[0], cwd)
        return Read(path) if path else None
    if name == "nl":
        files = []
        skip = False
        for a in rest:
            if skip:
                skip = False
            elif a in _NL_VALUE_OPTS:
                skip = True
            elif not a.startswith("-"):
                files.append(a)
        if len(files) != 1:
            return None
        path = _clean_path(files[0], cwd)
        return Read(path) if path else None
    if name in ("less", "more", "bat", "batcat"):
        files = []
        first, last = 1, None
        i = 0
        while i < len(rest):
            a = rest[i]
            if a in ("-r", "--line-range") and name.startswith("bat"):
                rng = rest[i + 1] if i + 1 < len(rest) else ""
                m = re.fullmatch(r"(\d{1,9})?:(\d{1,9})?", rng)
                if m is None:
                    return None
                first = int(m.group(1) or 1)
                last = int(m.group(2)) if m.group(2) else None
                i += 1
            elif a.startswith("-"):
                pass
            else:
                files.append(a)
            i += 1
        if len(files) != 1:
            return None
        path = _clean_path(files[0], cwd)
        return Read(path, first, last) if path else None
    if name in ("head", "tail"):
        parsed = _head_tail(rest)
        if parsed is None:
            return None
        files, count, plus, _ = parsed
        if len(files) != 1 or count is None:
            return None
        path = _clean_path(files[0], cwd)
        if path is None:
            return None
        if name == "head":
            return None if plus else Read(path, 1, count)
        return Read(path, max(count, 1), None) if plus else Read(path, tail=count)
    if name == "sed":
        return _sed_read(rest, cwd)
    return None


def _sed_read(rest: list[str], cwd: str) -> Read | None:
    quiet = False
    script: str | None = None
    files: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a in ("-n", "--quiet", "--silent"):
            quiet = True
        elif a in ("-e", "--expression"):
            if script is not None or i + 1 >= len(rest):
                return None
            script = rest[i + 1]
            i += 1
        elif a.startswith("-"):
            return None  # -i and anything unknown
        elif script is None:
            script = a
        else:
            files.append(a)
        i += 1
    if not quiet or script is None or len(files) != 1:
        return None
    m = _SED_RANGE.match(script)
    if m is None:
        return None
    first = int(m.group(1))
    end = m.group(2)
    last = first if end is None else (None if end == "$" else int(end))
    path = _clean_path(files[0], cwd)
    return Read(path, first, last) if path else None


def _filter_range(read: Read, words: list[str]) -> Read | None:
    """``cat FILE | head/tail/sed -n``: the range the filter keeps."""
    args, redirects = _split_redirects(words)
    if redirects or not args:
        return None
    name = posixpath.basename(args[0])
    if name in ("head", "tail"):
        parsed = _head_tail(args[1:])
        if parsed is None or parsed[0] or parsed[1] is None:
            return None
        count, plus = parsed[1], parsed[2]
        if name == "head":
            return None if plus else Read(read.path, 1, count)
        return Read(read.path, max(count, 1), None) if plus else Read(read.path, tail=count)
    if name == "sed" and len(args) == 3 and args[1] == "-n":
        m = _SED_RANGE.match(args[2])
        if m is None:
            return None
        first = int(m.group(1))
        end = m.group(2)
        return Read(read.path, first, first if end is None else None if end == "$" else int(end))
    return None


def _writes_of(words: list[str], cwd: str) -> list[str]:
    args, redirects = _split_redirects(words)
    paths: list[str] = []
    for _fd, op, target in redirects:
        if op in _REDIRECT and not (op == ">&" and (target.isdigit() or target == "-")):
            paths.append(target)
    if args:
        name = posixpath.basename(args[0])
        rest = args[1:]
        plain = [a for a in rest if not a.startswith("-")]
        if name == "tee":
            paths.extend(plain)
        elif name == "sed":
            paths.extend(_sed_in_place_files(rest))
        elif name == "perl":
            paths.extend(_perl_in_place_files(rest))
        elif name in ("cp", "mv", "install", "ln") and len(plain) >= 2:
            dest = plain[-1]
            paths.append(dest)
            paths.extend(posixpath.join(dest, posixpath.basename(s)) for s in plain[:-1])
            if name == "mv":
                paths.extend(plain[:-1])
        elif name in ("rm", "truncate", "unlink", "shred"):
            paths.extend(plain)
        elif name == "dd":
            paths.extend(a[3:] for a in rest if a.startswith("of="))
    cleaned = [_clean_path(p, cwd) for p in paths]
    return [p for p in cleaned if p]


def _script_and_files(rest: list[str], script_opts: tuple[str, ...]) -> tuple[bool, list[str]]:
    """``(in_place, files)`` for sed/perl arguments."""
    in_place = False
    has_script = False
    plain: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a in script_opts:
            has_script = True
            i += 2
            continue
        if a.startswith("--in-place") or (
            a.startswith("-") and not a.startswith("--") and "i" in a[1:]
        ):
            in_place = True
            if a.startswith("-") and not a.startswith("--") and a[1:].endswith("e"):
                has_script = True  # perl -pie 'script'
                if i + 1 < len(rest):
                    i += 1
        elif not a.startswith("-"):
            plain.append(a)
        i += 1
    return in_place, plain if has_script else plain[1:]


def _sed_in_place_files(rest: list[str]) -> list[str]:
    in_place, files = _script_and_files(rest, ("-e", "--expression", "-f", "--file"))
    return files if in_place else []


def _perl_in_place_files(rest: list[str]) -> list[str]:
    in_place, files = _script_and_files(rest, ("-e", "-E"))
    return files if in_place else []


@lru_cache(maxsize=512)  # keys are at most MAX_COMMAND characters
def _shell_access(command: str) -> Access | None:
    """Pure in ``command`` (Access is frozen): several engines ask about the same call."""
    tokens = _tokens(command)
    if tokens is None:
        return None
    segments = _segments(tokens)
    if not segments:
        return None
    cwd = ""
    writes: list[str] = []
    for _op, words in segments:
        if words and words[0] == "cd" and len(words) == 2:
            target = words[1]
            if _BAD_PATH.search(target):
                cwd = "\x00"  # unknown directory from here on
            else:
                cwd = posixpath.normpath(posixpath.join(cwd, target)) if cwd != "\x00" else cwd
            continue
        if cwd != "\x00":
            writes.extend(_writes_of(words, cwd))
    read: Read | None = None
    cwd = ""
    body = list(segments)
    while body and body[0][1] and body[0][1][0] == "cd" and len(body[0][1]) == 2:
        if len(body) > 1 and body[1][0] not in ("&&", ";", "\n"):
            break
        target = body[0][1][1]
        if _BAD_PATH.search(target):
            return Access(None, tuple(writes)) if writes else None
        cwd = posixpath.normpath(posixpath.join(cwd, target))
        body = body[1:]
    if len(body) == 1:
        read = _read_of(body[0][1], cwd)
    elif len(body) == 2 and body[1][0] == "|":
        first = _read_of(body[0][1], cwd)
        if first is not None and first.first == 1 and first.last is None and first.tail is None:
            read = _filter_range(first, body[1][1])
    if read is None and not writes:
        return None
    return Access(read, tuple(dict.fromkeys(writes)))


def shell_access_cache_clear() -> None:
    """Forget the parsed shell commands (benchmarks start each pass cold)."""
    _shell_access.cache_clear()


def _numbered_range(path: str, text: str) -> Read | None:
    """The range a line-numbered read result shows (``  12→code`` or ``  12\\tcode``)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    first = _NUMBERED.match(lines[0])
    if first is None:
        return None
    last = next((m for m in map(_NUMBERED.match, reversed(lines)) if m is not None), None)
    if last is None:
        return None
    a, b = int(first.group(1)), int(last.group(1))
    return Read(path, a, b) if 1 <= a <= b else None


def parse_access(command: str, tool_name: str | None, text: str = "") -> Access | None:
    """What a tool call did to files, from its command (and tool name, and result)."""
    if not command or len(command) > MAX_COMMAND:
        return None
    if tool_name and not _SHELL_TOOL.search(tool_name):
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if len(words) != 2 or words[0] != "cat":
            return None
        path = _clean_path(words[1], "")
        if path is None:
            return None
        if _WRITE_TOOL.search(tool_name) and not re.search(r"(?i)read", tool_name):
            return Access(None, (path,))
        if not _READ_TOOL.search(tool_name) or _NOT_READ_TOOL.search(tool_name):
            return None
        numbered = _numbered_range(path, text)
        if numbered is not None:
            return Access(numbered)
        if "truncated" in text[-400:].lower():
            return None  # a partial read of unknown range
        return Access(Read(path, assumed=True))
    return _shell_access(command)


# -- the engine ------------------------------------------------------------------


def _content_lines(text: str) -> set[str]:
    if "→" in text[:200] or "\t" in text[:200]:
        text = _NUMBER_PREFIX.sub("", text)
    return {ln.strip() for ln in text.splitlines() if ln.strip()}


def _overlap(old: str, new: str) -> float:
    a = _content_lines(old)
    if not a:
        return 1.0
    return len(a & _content_lines(new)) / len(a)


def _covers_lines(new: Read, old: Read, old_text: str) -> bool:
    """:func:`covers`, plus: a numbered read of lines 1-N covers a whole file of at most N lines."""
    if covers(new, old):
        return True
    return (
        new.first == 1
        and new.last is not None
        and old.first == 1
        and old.last is None
        and old.tail is None
        and old_text.count("\n") + 1 <= new.last
    )


def _intact(text: str) -> bool:
    return "[[dup:v1 " not in text and "<<cx:" not in text


def _group(unit: Unit) -> tuple[Any, ...]:
    path = unit.path
    if len(path) >= 2 and path[-1] == "text" and isinstance(path[-2], int):
        return tuple(path[:-2])
    return tuple(path)


@dataclass(slots=True)
class _Event:
    pos: int
    read: Read | None
    writes: tuple[str, ...]


class ReadLifecycleEngine(Engine):
    name = "read-lifecycle"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts = [u.text for u in units]
        if len(units) < 2:
            return EngineOutput(texts=texts)
        groups: dict[tuple[Any, ...], int] = {}
        for unit in units:
            if unit.kind == "tool_result":
                key = _group(unit)
                groups[key] = groups.get(key, 0) + 1
        by_path: dict[str, list[_Event]] = {}
        read_paths: dict[int, str] = {}
        for pos, unit in enumerate(units):
            if unit.kind != "tool_result" or not unit.command or groups[_group(unit)] > 1:
                continue
            access = parse_access(unit.command, unit.tool_name, unit.text)
            if access is None:
                continue
            read = access.read
            if read is not None and (unit.is_error or _FAILED.match(unit.text.lstrip()[:200])):
                read = None
            writes = access.writes
            if writes and (unit.is_error or _WRITE_FAILED.search(unit.text[:300])):
                writes = ()
            event = _Event(pos, read, writes)
            if read is not None:
                by_path.setdefault(read.path, []).append(event)
                read_paths[pos] = read.path
            for path in writes:
                if read is None or path != read.path:
                    by_path.setdefault(path, []).append(event)
        if not any(len(events) > 1 for events in by_path.values()):
            return EngineOutput(texts=texts)
        sources = dup_sources(units)
        # target[pos] = (position of the newer copy or the write, "read" | "write")
        target: dict[int, tuple[int, str]] = {}
        for path, events in by_path.items():
            for k in range(len(events) - 1, -1, -1):
                event = events[k]
                read = event.read
                if read is None or read.path != path:
                    continue
                for later in events[k + 1 : k + 1 + MAX_FORWARD]:
                    if path in later.writes:
                        target[event.pos] = (later.pos, "write")
                        break
                    newer = later.read
                    if newer is None or newer.path != path:
                        continue
                    new_text = units[later.pos].text
                    old_text = units[event.pos].text
                    if not _intact(new_text) or not _covers_lines(newer, read, old_text):
                        continue
                    if newer.assumed and len(new_text.splitlines()) * 2 < len(
                        units[event.pos].text.splitlines()
                    ):
                        continue
                    if _overlap(units[event.pos].text, new_text) < MIN_OVERLAP:
                        continue
                    target[event.pos] = target.get(later.pos, (later.pos, "read"))
                    break
        stash: dict[str, str] = {}
        backrefs: dict[int, list[int]] = {}
        superseded = stale = 0
        for pos in sorted(target):
            unit = units[pos]
            text = unit.text
            if unit.frozen or unit.uid in sources or "[[dup:v1 " in text or not text.strip():
                continue
            where, why = target[pos]
            path = read_paths[pos]
            nlines = text.count("\n") + (0 if text.endswith("\n") else 1)
            index = units[where].index
            if why == "read":
                note = superseded_note(path, nlines, index)
            else:
                note = stale_note(path, nlines, index)
            marker, stash_id = stash_marker(note, text)
            if ctx.tokens.count(marker) >= ctx.tokens.count(text):
                continue
            if not restores(text, marker, {stash_id: text}):
                continue
            if check_lossy(text, marker, unit.kind, {stash_id: text}, [texts[where]], unit.command):
                continue  # a critical line of the old read is not in the newer copy
            texts[pos] = marker
            stash[stash_id] = text
            backrefs[pos] = [where]
            if why == "read":
                superseded += 1
            else:
                stale += 1
        details = nonzero(reads_superseded=superseded, stale_reads=stale, _backrefs=backrefs)
        return EngineOutput(texts=texts, details=details, stash=stash)
