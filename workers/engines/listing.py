"""Listings as compact views: every path stays visible, the original is stashed.

Five kinds of tool output are read from their lines (the command or the
filter picked for it is only a hint):

- *paths* (``find``, ``fd``, ``git ls-files``, ``rg --files``, ``ls -1``,
  ``ls -R``): one path per line becomes a tree of directories, each written
  once with its file names on one line::

      ./: README.md LICENSE index.js
        man/man5/: folders.5 npmrc.5
        lib/: cli.js npm.js

  A header is the directory relative to the header above it (two spaces of
  indent per level); a directory with nothing but one subdirectory joins it
  (``man/man5/``).  A name with blanks, quotes or a trailing ``:`` is written
  as a JSON string.
- *long* listings (``ls -la``, ``ls -lR``, ``find -ls``, ``find -exec ls -la
  {} +``): each entry keeps its name and size; ``/`` marks a directory, ``*``
  an executable, ``-> target`` a symlink; the mode and owner show only when
  they differ from the listing's usual ones, named once in the first line.
  Link counts, dates, inodes and blocks are left to the stash.
- *git stat* (``git log --stat``, ``git show --stat``, ``--numstat``): commit,
  date and subject lines stay, and author lines but one that repeats the
  commit above (the message body is left to the stash); each ``path | 12
  ++++----`` line becomes ``path +8 -4``; when git scaled the bar to the
  terminal width the split is not known, and the line keeps the total and the
  bar as git wrote it (``path 120 ++++++--``): an estimate from the bar's share
  would write numbers the output never had.
- *git log* without file stats: the same view of its commits (commit, date and
  subject lines, author lines but one that repeats the commit above; the message
  body left to the stash).
- *blame* (``git blame``): each commit's author and date are written once, in
  the order the commits first appear, and each line keeps its commit, its line
  number and its code (``f0bbfec5 12) return total``).

The view is followed by the structured-view envelope
(:mod:`workers.markers.structured_view`): ``VIEW\\n<<cx:view>>… note
<<cx:KEY>>`` with the original stashed under ``KEY``, so ``ctxpress expand``
gives back the input byte for byte.  Lines that are not entries (``find:
... Permission denied``, blank lines, ``total 12``) are kept as written;
every critical line of the gate stays visible.  A view is only written when
it saves tokens and the gate would accept it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

from workers.core.tokens import TokenCounter
from workers.fidelity.facts import critical_lines
from workers.fidelity.lossy import check_lossy
from workers.markers.stash import LITERAL, stash_marker
from workers.markers.structured_view import HEADER_LINE

__all__ = [
    "MIN_ENTRIES",
    "MIN_SAVED",
    "MIN_SAVED_PATHS",
    "MIN_SAVED_PATH_TOKENS",
    "MIN_SAVED_TOKENS",
    "Listing",
    "compact_listing",
    "listing_kind",
    "tree_paths",
]

MIN_ENTRIES = 8  # fewer entries than this: not worth a view
MIN_COMMITS = 3  # a plain git log of fewer commits stays as it is
MIN_SAVED = 0.10  # the view must save at least this share of the tokens ...
MIN_SAVED_STAT = 0.05  # ... of a git log (its summaries stay as written: less to gain)
MIN_SAVED_TOKENS = 12  # ... or, when the command says listing, at least this many
MIN_SAVED_PATHS = 0.25  # a path listing's tree must save this share of its tokens ...
MIN_SAVED_PATH_TOKENS = 150  # ... and this many (held-out set 34: 20 paths of find, 12 saved)
MAX_CHARS = 4_000_000
_INDENT = "  "

_PATH_HINTS = frozenset({"find", "ls"})
_STAT_HINTS = frozenset({"git-log", "git-diff"})
# outputs whose filter keeps every line the gate needs (``grep -l`` files are its facts)
_NOT_LISTINGS = frozenset({"grep"})


@dataclass(frozen=True, slots=True)
class Listing:
    text: str
    stash: dict[str, str]
    kind: str  # ``paths``, ``long``, ``git-stat``, ``git-log`` or ``blame``
    entries: int


# --- names ----------------------------------------------------------------------

_PLAIN_NAME = re.compile(r'[^\s"]+')


def _name(name: str) -> str:
    """A name as written in a view: as it is, or a JSON string when it could be misread."""
    if _PLAIN_NAME.fullmatch(name) and not name.endswith(":"):
        return name
    return json.dumps(name, ensure_ascii=False)


def _split_names(line: str) -> list[str]:
    """The names of one view line (JSON strings decoded)."""
    out: list[str] = []
    i, n = 0, len(line)
    decoder = json.JSONDecoder()
    while i < n:
        if line[i] == " ":
            i += 1
            continue
        if line[i] == '"':
            try:
                value, end = decoder.raw_decode(line, i)
            except ValueError:  # not a name this module wrote (a kept line): a word
                value, end = line[i:], n
            out.append(str(value))
            i = end
            continue
        j = line.find(" ", i)
        j = n if j < 0 else j
        out.append(line[i:j])
        i = j
    return out


# --- the tree -------------------------------------------------------------------


@dataclass(slots=True)
class _Dir:
    names: list[str] = field(default_factory=list)  # entries as written in the view
    subdirs: dict[str, _Dir] = field(default_factory=dict)
    shown: bool = False  # printed by the input itself (a ``find`` line, an ``ls -R`` header)


class _Tree:
    def __init__(self) -> None:
        self.root = _Dir()

    def dir(self, parts: list[str]) -> _Dir:
        node = self.root
        for part in parts:
            child = node.subdirs.get(part)
            if child is None:
                child = node.subdirs[part] = _Dir()
            node = child
        return node

    def add(self, parts: list[str], entry: str) -> None:
        self.dir(parts).names.append(entry)

    def render(self, one_per_line: bool = False) -> list[str]:
        """The view lines; ``one_per_line``: each entry on its own line under its header."""
        out: list[str] = []
        self._render(self.root, "", 0, out, one_per_line)
        return out

    def _render(self, node: _Dir, rel: str, depth: int, out: list[str], one: bool) -> None:
        printed = bool(rel)
        indent = _INDENT * depth
        if printed:
            head = indent + _name(rel + "/") + ":"
            if one or not node.names:
                out.append(head)
            else:
                out.append(head + " " + " ".join(node.names))
        if node.names and (one or not printed):
            if one:
                inner = indent + _INDENT if printed else indent
                out.extend(inner + name for name in node.names)
            else:
                out.append(indent + " ".join(node.names))
        for part, child in node.subdirs.items():
            chain = [part]
            while not child.names and len(child.subdirs) == 1 and not child.shown:
                part2, grand = next(iter(child.subdirs.items()))
                chain.append(part2)
                child = grand
            self._render(child, "/".join(chain), depth + 1 if printed else depth, out, one)


def _parts(path: str) -> list[str]:
    """``./a/b.c`` -> ``[".", "a", "b.c"]``; ``/usr/lib`` -> ``["", "usr", "lib"]``."""
    return path.split("/")


def tree_paths(view: str) -> set[str]:
    """Every path a path-tree view shows (directories with a trailing ``/``).

    The reader of :func:`compact_listing`'s ``paths`` views: for tests and
    for the check that every input path is visible.
    """
    paths: set[str] = set()
    stack: list[tuple[int, str]] = []  # (depth, directory prefix ending in "/")
    for line in view.split("\n"):
        if not line.strip() or line.startswith("<<cx:") or line.startswith("…"):
            continue
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // len(_INDENT)
        head, names_text = _header(stripped)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        prefix = stack[-1][1] if stack else ""
        if head is not None:
            prefix = prefix + head
            stack.append((depth, prefix))
            paths.add(prefix)
        for name in _split_names(names_text):
            paths.add(prefix + name)
    return paths


def _header(line: str) -> tuple[str | None, str]:
    """(directory ending in ``/`` or None, the names after it) of one view line."""
    if line.startswith('"'):
        try:
            value, end = json.JSONDecoder().raw_decode(line, 0)
        except ValueError:
            return None, line
        if isinstance(value, str) and value.endswith("/") and line[end : end + 1] == ":":
            return str(value), line[end + 1 :]
        return None, line
    at = line.find("/:")
    if at >= 0 and " " not in line[:at] and (at + 2 == len(line) or line[at + 2] == " "):
        return line[: at + 1], line[at + 2 :]
    return None, line


# --- path listings ------------------------------------------------------------

_LS_HEADER = re.compile(r"^(\S.*):$")
# not a path: control characters, ``name: message``, blanks at either end or in a
# row (``ls -C`` columns), markers, ``file:12:`` (grep -n, compiler positions)
_NOT_PATH = re.compile(r"[\t\x00-\x1f]|: |^\s|\s$|  |<<|…|:\d+(?:[:-]|$)")


def _path_listing(
    text: str, hint: str, crit: frozenset[str] = frozenset()
) -> tuple[list[str], _Tree, int] | None:
    """(view lines, tree, entries) of a listing with one path per line, or None."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tree = _Tree()
    other: list[str] = []
    entries = slashed = 0
    current: list[str] | None = None  # the directory of an ``ls -R`` / ``ls a b`` header
    spaced = hint in _PATH_HINTS  # names with blanks only when the command says listing
    for line in lines:
        if not line.strip():
            continue
        m = _LS_HEADER.match(line)
        if m is not None and hint == "ls" and not _NOT_PATH.search(m.group(1)):
            current = [p for p in _parts(m.group(1).rstrip("/"))]
            tree.dir(current).shown = True
            continue
        if len(line) > 1024 or _NOT_PATH.search(line) or (" " in line and not spaced):
            other.append(line)
            continue
        if line.strip() in crit and "/" in line:  # the gate wants it as written (``./error.js``)
            other.append(line)
            entries += 1
            slashed += "/" in line
            continue
        path = line
        is_dir = path.endswith("/") and len(path) > 1
        if is_dir:
            path = path.rstrip("/")
        parts = _parts(path) if current is None else [*current, *_parts(path)]
        if "/" in line:
            slashed += 1
        if path in (".", "..", "/") or (is_dir and current is None):
            tree.dir(parts if path != "/" else [""]).shown = True
        else:
            tree.add(parts[:-1], _name(parts[-1]))
        entries += 1
    # ``find`` may print many ``Permission denied`` lines: they stay as written
    if entries < MIN_ENTRIES or len(other) * (2 if hint == "find" else 10) > entries:
        return None
    if hint not in _PATH_HINTS and slashed * 2 < entries:
        return None
    _fold_dirs(tree.root)
    return tree.render() + other, tree, entries


def _fold_dirs(node: _Dir) -> None:
    """A name that is also a directory of the tree is shown by its header: drop the name."""
    if node.subdirs:
        kept = []
        for name in node.names:
            child = node.subdirs.get(name)
            if child is not None:
                child.shown = True
            else:
                kept.append(name)
        node.names = kept
    for child in node.subdirs.values():
        _fold_dirs(child)


def _input_paths(text: str, hint: str) -> set[str]:
    """The paths of a path listing as :func:`tree_paths` reads them back."""
    out: set[str] = set()
    current = ""
    spaced = hint in _PATH_HINTS
    for line in text.split("\n"):
        if not line.strip():
            continue
        m = _LS_HEADER.match(line)
        if m is not None and hint == "ls" and not _NOT_PATH.search(m.group(1)):
            current = m.group(1).rstrip("/") + "/"
            continue
        if len(line) > 1024 or _NOT_PATH.search(line) or (" " in line and not spaced):
            continue
        path = current + line
        if path.endswith("/"):
            path = path.rstrip("/") + "/" if path != "/" else path
        out.add(path)
    return out


# --- long listings ------------------------------------------------------------

_DATE = (
    r"(?:[A-Z][a-z]{2}\s+\d{1,2}|\d{1,2}\s+[A-Z][a-z]{2})\.?\s+(?:\d{4}|\d{1,2}:\d{2})"
    r"|\d{4}-\d\d-\d\d(?:\s+\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\s+[+-]\d{4})?)?"
    r"|\d\d-\d\d\s+\d\d:\d\d"
)
_LONG = re.compile(
    r"^\s*(?P<pre>(?:\d+\s+){0,2})"
    r"(?P<type>[-dlcbpsDnCM?])(?P<mode>[-rwxsStTlL]{9})(?P<attr>[.@+]?)\s+"
    r"(?P<links>\d+)\s+(?P<owner>\S+)\s+(?:(?P<group>\S+)\s+)?"
    r"(?P<size>\d[\d.,]*[KMGTPEkB]?|\d+,\s*\d+)\s+"
    rf"(?P<date>{_DATE})(?P<gap>\s+)(?P<name>\S.*)$"
)
_TOTAL = re.compile(r"^total \d[\d.,]*[KMGTPE]?$")
_HEADER, _CRITICAL = "\0", "\1"  # row prefixes: an ``ls -R`` header, an entry kept as written


@dataclass(frozen=True, slots=True)
class _Entry:
    type: str
    mode: str
    owner: str
    name: str
    size: str
    target: str | None


def _long_entries(
    text: str, crit: frozenset[str] = frozenset()
) -> tuple[list[tuple[str | None, _Entry | str]], int] | None:
    """Per line: (directory header or None, entry or a line kept as written)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows: list[tuple[str | None, _Entry | str]] = []
    entries = other = 0
    current: str | None = None
    for line in lines:
        m = _LONG.match(line)
        if m is not None and (line.strip() in crit or m.group("gap") != " "):
            # kept as written: the gate's line, or a name that may start with blanks
            # (ls writes one space after the date; the name's own blanks follow it)
            rows.append((current, _CRITICAL + line))
            entries += 1
            continue
        if m is None:
            h = _LS_HEADER.match(line)
            if h is not None and not _NOT_PATH.search(h.group(1)):
                current = h.group(1)
                rows.append((None, _HEADER + current))
                continue
            if line.strip() and not _TOTAL.match(line):
                other += 1
            rows.append((current, line))
            continue
        name, target = m.group("name"), None
        if m.group("type") == "l" and " -> " in name:
            name, target = name.split(" -> ", 1)
        owner = m.group("owner") + (":" + m.group("group") if m.group("group") else "")
        size = m.group("size").replace(" ", "")  # a device's ``5,   1`` is ``5,1``
        entry = _Entry(
            m.group("type"), m.group("type") + m.group("mode"), owner, name, size, target
        )
        rows.append((current, entry))
        entries += 1
    if entries < MIN_ENTRIES or other * 10 > entries:
        return None
    return rows, entries


def _role(entry: _Entry) -> str:
    if entry.type == "d":
        return "dir"
    if entry.type == "l":
        return "link"
    if entry.type == "-" and ("x" in entry.mode[1:4] or "s" in entry.mode[1:4]):
        return "exec"
    if entry.type == "-":
        return "file"
    return "other"


def _long_view(text: str, crit: frozenset[str]) -> tuple[list[str], int] | None:
    found = _long_entries(text, crit)
    if found is None:
        return None
    rows, entries = found
    es = [e for _, e in rows if isinstance(e, _Entry)]
    usual: dict[str, str] = {}
    for role in ("file", "exec", "dir"):
        modes = Counter(e.mode for e in es if _role(e) == role)
        if modes:
            usual[role] = modes.most_common(1)[0][0]
    owner = Counter(e.owner for e in es).most_common(1)[0][0]
    legend = ", ".join(f"{role} {mode}" for role, mode in usual.items())
    out = [f"(name size; / dir, * executable; usual modes {legend}; owner {owner})"]
    nested = any("/" in e.name.rstrip("/") for e in es)
    if not nested:  # ``ls -la``, ``ls -lR``: one entry per line, headers as written
        for _, row in rows:
            if isinstance(row, str):
                out.append(row[1:] + ":" if row.startswith(_HEADER) else row.lstrip(_CRITICAL))
            else:
                out.append(_long_item(row, usual, owner))
        return out, entries
    # ``find -ls``, ``find -exec ls -la {} +``: paths grouped by directory
    tree = _Tree()
    other: list[str] = []
    for current, row in rows:
        under = _parts(current.rstrip("/")) if current else []
        if isinstance(row, str):
            m = _LONG.match(row[1:]) if row.startswith(_CRITICAL) else None
            if m is not None:
                parts = [*under, *_parts(m.group("name").split(" -> ")[0].rstrip("/"))]
                tree.add(parts[:-1], row[1:].strip())
            elif row.strip() and not row.startswith(_HEADER) and not _TOTAL.match(row):
                other.append(row)
            continue
        item = _long_item(row, usual, owner)
        parts = [*under, *_parts(row.name.rstrip("/"))]
        if parts[-1] in (".", ".."):
            if parts[-1] == "." and len(parts) > 1:
                tree.dir(parts[:-1]).shown = True
            if item in ("./", "../"):
                continue  # a usual ``.`` or ``..`` of an ``ls -la`` inside: nothing to say
        elif row.type == "d":
            tree.dir(parts).shown = True
            if item == _name(parts[-1]) + "/":
                continue  # the header ``name/:`` shows it
        node = tree.dir(parts[:-1])
        if item not in node.names:  # ``find -exec ls`` lists a file and its directory
            node.names.append(item)
    return [*out, *tree.render(one_per_line=True), *other], entries


def _long_item(entry: _Entry, usual: dict[str, str], owner: str) -> str:
    role = _role(entry)
    base = entry.name.rsplit("/", 1)[-1] if "/" in entry.name.rstrip("/") else entry.name
    name = _name(base)
    if role == "dir":
        name += "/"
    elif role == "exec":
        name += "*"
    parts = [name]
    if entry.target is not None:
        parts += ["->", _name(entry.target)]
    if role != "dir" or entry.size != "4096":
        parts.append(entry.size)
    if role == "other" or (role in usual and entry.mode != usual[role]):
        parts.append(entry.mode)
    if entry.owner != owner:
        parts.append(entry.owner)
    return " ".join(parts)


# --- git log --stat -----------------------------------------------------------

_STAT = re.compile(r"^ (?P<path>\S.*?)\s+\|\s+(?P<n>\d+) ?(?P<bar>\+*-*)$")
_STAT_BIN = re.compile(r"^ (?P<path>\S.*?)\s+\|\s+(?P<bin>Bin .*)$")
_NUMSTAT = re.compile(r"^(?P<add>\d+|-)\t(?P<del>\d+|-)\t(?P<path>.+)$")
_COMMIT = re.compile(r"^commit [0-9a-f]{7,64}\b")
_SUMMARY = re.compile(
    r"^ (\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?$"
)
_MSG = re.compile(r"^    ")
_DIFF = re.compile(r"^(?:diff --git |@@ -\d)", re.M)


def _stat_view(
    text: str, crit: frozenset[str], plain: bool = False
) -> tuple[list[str], int] | None:
    """The git-stat view (``plain``: of a log without file stats, its commits counted)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[str] = []
    entries = commits = summaries = 0
    in_msg = False
    subject_done = False
    author = ""
    block: list[tuple[str, str]] = []  # (path, numbers) of consecutive stat lines

    def flush() -> None:
        if len(block) >= MIN_ENTRIES and not any(" => " in path for path, _ in block):
            tree = _Tree()
            for path, numbers in block:
                parts = _parts(path)
                tree.add(parts[:-1], f"{_name(parts[-1])} {numbers}")
            out.extend(tree.render(one_per_line=True))
        else:
            out.extend(f" {path} {numbers}" for path, numbers in block)
        block.clear()

    for line in lines:
        m = _STAT.match(line)
        if m is not None and line.strip() not in crit:
            block.append((m.group("path"), _churn(int(m.group("n")), m.group("bar"))))
            entries += 1
            continue
        m = _NUMSTAT.match(line)
        if m is not None and line.strip() not in crit:
            block.append((m.group("path"), _pm(m.group("add"), m.group("del"))))
            entries += 1
            continue
        if block:
            flush()
        if _COMMIT.match(line):
            commits += 1
            in_msg = subject_done = False
            if plain and out and out[-1] != "":
                out.append("")  # (the stats' blank line parts two commits in a stat view)
            out.append(line)
            continue
        if line.startswith("Author: ") and commits:
            if line == author and line not in crit:
                continue  # the same author as the commit above
            author = line
        if commits and _MSG.match(line):
            in_msg = True
            body = line.strip()
            if not subject_done and body:
                out.append("    " + body)
                subject_done = True
            elif body and body in crit:
                out.append(line)
            continue
        if in_msg and not line.strip():
            continue
        in_msg = False
        if line.strip() in crit:
            out.append(line)
            entries += _STAT.match(line) is not None or _NUMSTAT.match(line) is not None
            summaries += _SUMMARY.match(line) is not None  # (a fact of the gate)
            continue
        m = _STAT_BIN.match(line)
        if m is not None:
            out.append(f" {m.group('path')} {m.group('bin')}")
            entries += 1
            continue
        if _SUMMARY.match(line) is not None:
            out.append(line)  # as written: a commit's summary is a fact of its own
            summaries += 1
            continue
        if not line.strip():
            if out and out[-1] != "":
                out.append("")
            continue
        out.append(line)
    if block:
        flush()
    if plain:
        return (out, commits) if commits >= MIN_COMMITS and not entries and not summaries else None
    if commits == 0 and entries < MIN_ENTRIES:
        return None
    if entries == 0 and (summaries == 0 or commits == 0):
        return None  # neither file stats nor --shortstat summaries
    return out, entries or summaries


def _pm(add: str, dele: str) -> str:
    """``+8 -4``; a side that is 0 is left out (``+3``), both 0 is ``+0``."""
    if dele == "0":
        return f"+{add}"
    if add == "0":
        return f"-{dele}"
    return f"+{add} -{dele}"


def _churn(n: int, bar: str) -> str:
    """``12 ++++----`` as numbers when they are exact (the bar unscaled or one-sided), else
    the total and the bar as written."""
    plus, minus = bar.count("+"), bar.count("-")
    if plus + minus == n or not minus or not plus:
        if not minus:
            return _pm(str(n), "0")
        if not plus:
            return _pm("0", str(n))
        return _pm(str(plus), str(minus))
    return f"{n} {bar}"  # git scaled the bar to the width: the split is not in the output


# git blame's default format: ``f0bbfec5 (Chen Wei   2025-10-05 21:01:32 +0000  12) code``
# (``^f0bbfec`` a boundary commit, a file name after the hash with ``-C`` or several files)
_BLAME = re.compile(
    r"^(?P<hash>\^?[0-9a-f]{7,40}) (?:(?P<file>\S+) +)?\((?P<who>.*?) +"
    r"(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}) +(?P<line>\d+)\) (?P<code>.*)$"
)


def _blame_view(text: str, crit: frozenset[str]) -> tuple[list[str], int] | None:
    """git blame: each commit's author and date once, in the order they first appear
    (``f0bbfec5 Chen Wei 2025-10-05 21:01:32 +0000``), then each line as ``f0bbfec5 12) code``
    (its file name too when blame wrote one)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    who: dict[str, str] = {}
    rows: list[str] = []
    entries = 0
    for line in lines:
        m = _BLAME.match(line)
        if m is None or line.strip() in crit:
            if line.strip() and not entries:
                return None  # a blame starts with its first line
            rows.append(line)
            continue
        h = m.group("hash")
        author = f"{h} {m.group('who').strip()} {m.group('when')}"
        if who.setdefault(h, author) != author:
            return None  # one hash, two authors: not blame as git writes it
        name = f"{m.group('file')} " if m.group("file") else ""
        rows.append(f"{h} {name}{m.group('line')}) {m.group('code')}")
        entries += 1
    if entries < MIN_ENTRIES or entries * 2 < len(lines):
        return None
    return [*who.values(), "", *rows], entries


# --- the view -----------------------------------------------------------------


def listing_kind(text: str, hint: str = "") -> str | None:
    """``paths``, ``long``, ``git-stat``, ``blame`` or None: which listing the lines are."""
    if (
        (hint in _STAT_HINTS or _COMMIT.match(text))
        and not _DIFF.search(text)
        and _stat_view(text, frozenset()) is not None
    ):
        return "git-stat"
    if _long_entries(text) is not None:
        return "long"
    if _BLAME.match(text.split("\n", 1)[0]) and _blame_view(text, frozenset()) is not None:
        return "blame"
    if _path_listing(text, hint) is not None:
        return "paths"
    return None


_SAMPLE = 40


def _looks_like_listing(text: str) -> bool:
    """Cheap test on the first lines: most are paths, long-listing rows or stat lines."""
    head = [line for line in text[:16384].split("\n", _SAMPLE)[:_SAMPLE] if line.strip()]
    if len(head) > 1 and len(text) > 16384:
        head.pop()  # may be cut
    if not head:
        return False
    hits = 0
    for line in head:
        if line.startswith("commit ") and _COMMIT.match(line):
            return True  # git log: the message lines decide nothing
        if (
            _LONG.match(line)
            or _BLAME.match(line)
            or _STAT.match(line)
            or _NUMSTAT.match(line)
            or _COMMIT.match(line)
            or (len(line) <= 1024 and not _NOT_PATH.search(line))
        ):
            hits += 1
    return hits * 2 >= len(head)


def compact_listing(
    text: str,
    tokens: TokenCounter,
    hint: str = "",
    command: str | None = None,
) -> Listing | None:
    """The compact view of a listing, or None (not a listing, or nothing saved).

    ``hint``: the name of the filter the command (or tool) picked (``find``,
    ``ls``, ``git-log`` ...); the lines decide.
    """
    if len(text) > MAX_CHARS or LITERAL in text:
        return None  # an earlier stash or view: its markers stay where they are
    # A dedup back-reference may stay: the view stashes the text as it is, the reference
    # with it, and expand resolves it once the view is undone (repeated commit bodies of a
    # ``git log --stat`` are found by dedup first).
    if hint in _NOT_LISTINGS or not _looks_like_listing(text):
        return None
    crit_pairs = critical_lines(text, "tool_result", command)
    crit = frozenset(line for _, line in crit_pairs)
    kind: str | None = None
    view: list[str] | None = None
    entries = 0
    # git's file stats; a patch (``-p``) is left to the diff filter
    if (hint in _STAT_HINTS or _COMMIT.match(text)) and not _DIFF.search(text):
        found = _stat_view(text, crit)
        if found is not None:
            kind, (view, entries) = "git-stat", found
    if view is None and _COMMIT.match(text) and not _DIFF.search(text):
        found = _stat_view(text, crit, plain=True)
        if found is not None:
            kind, (view, entries) = "git-log", found
    if view is None:
        long = _long_view(text, crit)
        if long is not None:
            kind, (view, entries) = "long", long
    if view is None and _BLAME.match(text.split("\n", 1)[0]):
        blame = _blame_view(text, crit)
        if blame is not None:
            kind, (view, entries) = "blame", blame
    if view is None:
        paths = _path_listing(text, hint, crit)
        if paths is not None:
            view, _tree, entries = paths
            kind = "paths"
            shown = tree_paths("\n".join(view))
            shown.update([path.rstrip("/") for path in shown])
            if not _input_paths(text, hint) <= shown:
                return None  # a path the reader would not find: no view
    if view is None or kind is None:
        return None
    body = "\n".join(view)
    marker, key = stash_marker(f"{kind} listing, {entries} entries; original", text)
    new = f"{body}{HEADER_LINE}{marker}"
    stash = {key: text}
    before = tokens.count(text)
    after = tokens.count(new)
    least = MIN_SAVED_STAT if kind in ("git-stat", "git-log") else MIN_SAVED
    if after > before * (1 - least) and (
        hint not in _PATH_HINTS or after > before - MIN_SAVED_TOKENS
    ):
        return None
    if (
        kind == "paths"
        and (before - after < MIN_SAVED_PATH_TOKENS or after > before * (1 - MIN_SAVED_PATHS))
        and text.count("/") >= entries  # paths written whole (find's), not ``ls``'s names
    ):
        # the tree writes each path in pieces (``lib/: inventory.rb``): a short listing keeps
        # its paths as written, a reader (or a search) finds ``./lib/inventory/cart.rb``
        return None
    visible = set(new.split("\n"))
    stripped = {v.strip() for v in visible}
    if any(c not in stripped and c not in new for c in crit):
        return None
    if check_lossy(text, new, "tool_result", stash, (), command):
        return None
    return Listing(new, stash, kind, entries)
