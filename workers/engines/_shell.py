"""What a shell command or tool call does to files: the reads and writes it makes.

Shared by the engines that must recognise a file read (read-lifecycle, which
supersedes old reads; whitespace, smartcrush and structured, which leave file
contents alone).  Pure: commands are parsed with :mod:`shlex`, never run.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from workers.core.memo import memo
from workers.messages.model import Unit

__all__ = [
    "BIG_DATA_READ",
    "DATA_SUFFIXES",
    "TABLE_SUFFIXES",
    "Access",
    "Read",
    "cat_files",
    "covers",
    "is_big_data_read",
    "is_file_read",
    "parse_access",
    "read_path",
    "read_paths",
    "read_patterns",
]

MAX_COMMAND = 20_000
_SHELL_TOOL = re.compile(
    r"(?i)bash|shell|terminal|exec|run|command|^sh$|zsh|powershell|^cmd$|console|cli"
)
_READ_TOOL = re.compile(
    r"(?i)read|view|open|^cat$|get_?file|file_?content|show_?file|load_?file|fetch_?file"
)
_WRITE_TOOL = re.compile(
    r"(?i)write|edit|create|replace|patch|insert|append|save|update|delete|remove|move|rename"
)
# Anthropic's text editor tool (``str_replace_based_edit_tool``, ``str_replace_editor``): the
# record codec writes its ``view`` as ``cat PATH`` (``sed -n 'A,Bp' PATH`` for a range) and its
# ``create`` as ``tee PATH``, its ``str_replace``/``insert`` as ``patch PATH`` (workers.messages.codec)
_EDITOR_TOOL = re.compile(r"(?i)str_replace|text_?editor")
# write tools that change a file in place (Claude Code's Edit and MultiEdit, apply_patch)
_EDIT_TOOL = re.compile(r"(?i)edit|replace|patch|insert|append|update")
_NOT_READ_TOOL = re.compile(r"(?i)search|grep|find|list|glob|ls\b|dir|tree|symbol")
_HEREDOC = re.compile(r"(?<!<)<<-?(?!<)\s*['\"]?([\w.-]{1,64})['\"]?")
_FD = re.compile(r"(?<![\w\\$])([0-9])(?=>)")
_REDIRECT = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_SEPARATORS = frozenset({";", "&&", "||", "&", "|", "|&", ";;"})
_NUMBERED = re.compile(r"^\s*(\d{1,9})(?:→|\t)")
NUMBER_PREFIX = re.compile(r"^[ \t]*\d{1,9}(?:→|\t)", re.M)
_SED_RANGE = re.compile(
    r"^\s*(\d{1,9})\s*(?:,\s*(\d{1,9}|\$)\s*)?p\s*(?:;\s*\d{1,9}\s*q\s*)?;?\s*$"
)
READ_FAILED = re.compile(
    r"^(?:(?:cat|head|tail|sed|nl|less|more|bat|batcat): |error\b|file does not exist|"
    r"no such file|<tool_use_error>)",
    re.I,
)
WRITE_FAILED = re.compile(
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
    """What one tool call did to files: the file it read (if any), files it wrote (replaced,
    created, moved or removed) and files it edited in place (``sed -i``, ``perl -i``,
    ``patch``, an append, an edit tool's replace or insert)."""

    read: Read | None
    writes: tuple[str, ...] = ()
    edits: tuple[str, ...] = ()


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


def _writes_of(words: list[str], cwd: str) -> tuple[list[str], list[str]]:
    """``(written, edited)`` paths of one simple command (see :class:`Access`)."""
    args, redirects = _split_redirects(words)
    paths: list[str] = []
    edited: list[str] = []
    for _fd, op, target in redirects:
        if op in _REDIRECT and not (op == ">&" and (target.isdigit() or target == "-")):
            (edited if op in (">>", "&>>") else paths).append(target)
    if args:
        name = posixpath.basename(args[0])
        rest = args[1:]
        plain = [a for a in rest if not a.startswith("-")]
        if name == "tee":
            (edited if "-a" in rest or "--append" in rest else paths).extend(plain)
        elif name == "sed":
            edited.extend(_sed_in_place_files(rest))
        elif name == "perl":
            edited.extend(_perl_in_place_files(rest))
        elif name == "patch" and plain:
            edited.append(plain[0])  # ``patch FILE [PATCHFILE]``
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
    cleaned_edits = [_clean_path(p, cwd) for p in edited]
    return [p for p in cleaned if p], [p for p in cleaned_edits if p]


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


@memo(entries=512, chars=16_000_000)  # keys are at most MAX_COMMAND characters
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
    edits: list[str] = []
    for _op, words in segments:
        if words and words[0] == "cd" and len(words) == 2:
            target = words[1]
            if _BAD_PATH.search(target):
                cwd = "\x00"  # unknown directory from here on
            else:
                cwd = posixpath.normpath(posixpath.join(cwd, target)) if cwd != "\x00" else cwd
            continue
        if cwd != "\x00":
            written, edited = _writes_of(words, cwd)
            writes.extend(written)
            edits.extend(edited)
    read: Read | None = None
    cwd = ""
    body = list(segments)
    while body and body[0][1] and body[0][1][0] == "cd" and len(body[0][1]) == 2:
        if len(body) > 1 and body[1][0] not in ("&&", ";", "\n"):
            break
        target = body[0][1][1]
        if _BAD_PATH.search(target):
            if not writes and not edits:
                return None
            return Access(None, tuple(dict.fromkeys(writes)), tuple(dict.fromkeys(edits)))
        cwd = posixpath.normpath(posixpath.join(cwd, target))
        body = body[1:]
    if len(body) == 1:
        read = _read_of(body[0][1], cwd)
    elif len(body) == 2 and body[1][0] == "|":
        first = _read_of(body[0][1], cwd)
        if first is not None and first.first == 1 and first.last is None and first.tail is None:
            read = _filter_range(first, body[1][1])
    if read is None and not writes and not edits:
        return None
    return Access(read, tuple(dict.fromkeys(writes)), tuple(dict.fromkeys(edits)))


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
        if words[:1] == ["sed"] and _EDITOR_TOOL.search(tool_name):
            return _shell_access(command)  # the editor's view of a line range
        if len(words) != 2 or words[0] not in ("cat", "tee", "patch"):
            return None
        path = _clean_path(words[1], "")
        if path is None:
            return None
        # what the record codec writes for an editor's create (``tee``) and its replace or
        # insert (``patch``)
        if words[0] == "tee":
            return Access(None, (path,))
        if words[0] == "patch":
            return Access(None, (), (path,))
        editor = _EDITOR_TOOL.search(tool_name) is not None  # its ``cat`` is a view
        if not editor and _WRITE_TOOL.search(tool_name) and not re.search(r"(?i)read", tool_name):
            if _EDIT_TOOL.search(tool_name):
                return Access(None, (), (path,))
            return Access(None, (path,))
        if not editor and (not _READ_TOOL.search(tool_name) or _NOT_READ_TOOL.search(tool_name)):
            return None
        numbered = _numbered_range(path, text)
        if numbered is not None:
            return Access(numbered)
        if "truncated" in text[-400:].lower():
            return None  # a partial read of unknown range
        return Access(Read(path, assumed=True))
    return _shell_access(command)


def is_file_read(unit: Unit) -> bool:
    """Whether ``unit`` is the output of a command or tool call that read a file."""
    if not unit.command:
        return False
    access = parse_access(unit.command, unit.tool_name, unit.text)
    return access is not None and access.read is not None


# files of data, not code or prose: a read of one is a document to look things up in
DATA_SUFFIXES = (".json", ".jsonl", ".ndjson", ".geojson", ".har", ".csv", ".tsv", ".xml")
BIG_DATA_READ = 32_000  # characters: a data file this big is crushed like any JSON output


TABLE_SUFFIXES = (".csv", ".tsv")


def is_big_data_read(unit: Unit, suffixes: tuple[str, ...] = DATA_SUFFIXES) -> bool:
    """Whether ``unit`` read a data file (``.json``, ``.csv``, ...: one of ``suffixes``) of
    ``BIG_DATA_READ`` characters or more: no file an agent edits by its lines; the lossy
    engines may shorten its output as they shorten an API's answer (a file read otherwise
    stays whole)."""
    if len(unit.text) < BIG_DATA_READ:
        return False
    path = read_path(unit)
    return path is not None and path.lower().endswith(suffixes)


def read_path(unit: Unit) -> str | None:
    """The file ``unit``'s command or tool call read, or None."""
    if not unit.command:
        return None
    access = parse_access(unit.command, unit.tool_name, unit.text)
    return access.read.path if access is not None and access.read is not None else None


def cat_files(command: str) -> tuple[str, ...]:
    """The files a ``[cd DIR &&] cat [-n] A B ...`` of two files or more prints, one after
    the other (no pipe, no redirect to a file); ``()`` for any other command."""
    if not command or len(command) > MAX_COMMAND or "cat" not in command:
        return ()
    tokens = _tokens(command)
    if tokens is None:
        return ()
    segments = _segments(tokens)
    cwd = ""
    while len(segments) > 1 and segments[0][1][:1] == ["cd"] and len(segments[0][1]) == 2:
        if segments[1][0] not in ("&&", ";", "\n") or _BAD_PATH.search(segments[0][1][1]):
            return ()
        cwd = posixpath.normpath(posixpath.join(cwd, segments[0][1][1]))
        segments = segments[1:]
    if len(segments) != 1:
        return ()
    args, redirects = _split_redirects(segments[0][1])
    if redirects or not args or posixpath.basename(args[0]) != "cat":
        return ()
    opts = [a for a in args[1:] if a.startswith("-") and a != "-"]
    files = [a for a in args[1:] if not (a.startswith("-") and a != "-")]
    if len(files) < 2 or any(not set(o[1:]) <= _CAT_OPTS for o in opts):
        return ()
    paths = [_clean_path(f, cwd) for f in files]
    return tuple(p for p in paths if p) if all(paths) else ()


_PATTERN_READERS = frozenset({"cat", "head", "tail", "less", "more"})


def read_patterns(command: str | None) -> tuple[str, ...]:
    """The file patterns one ``cat``/``head``/``tail`` prints (``cat target/surefire-reports/
    *.txt``), each wildcard as a name's character (``src/*.py`` stands for a ``.py`` file);
    ``()`` for any other command (a pipe, a redirect, a brace pattern, no pattern)."""
    if not command or len(command) > MAX_COMMAND or ("*" not in command and "?" not in command):
        return ()
    tokens = _tokens(command)
    if tokens is None:
        return ()
    segments = _segments(tokens)
    if len(segments) != 1:
        return ()
    args, redirects = _split_redirects(segments[0][1])
    if redirects or not args or posixpath.basename(args[0]) not in _PATTERN_READERS:
        return ()
    patterns = [a for a in args[1:] if not a.startswith("-") and ("*" in a or "?" in a)]
    if any("{" in a for a in args):
        return ()
    return tuple(p.replace("*", "x").replace("?", "x") for p in patterns)


def read_paths(unit: Unit) -> tuple[str, ...]:
    """The files ``unit`` shows as they are: the path of a read of one file, the paths of a
    ``cat`` of several; ``()`` for any other output."""
    if not unit.command:
        return ()
    access = parse_access(unit.command, unit.tool_name, unit.text)
    if access is not None and access.read is not None:
        return (access.read.path,)
    if unit.tool_name is None or _SHELL_TOOL.search(unit.tool_name) is not None:
        return cat_files(unit.command)
    return ()
