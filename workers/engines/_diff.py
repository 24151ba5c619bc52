"""Unified diffs read line by line: which lines are hunk headers and which a hunk adds or
removes.  Aging keeps an aged diff's changed lines; the tool filter keeps a modified file's
changed lines in sight (only its context lines and a new or deleted file's body may go)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

__all__ = ["HUNK", "changed_rows", "hunk_kinds", "modified_file_changes"]

HUNK = re.compile(r"^@@ -(\d{1,7})(?:,(\d{1,7}))? \+\d{1,7}(?:,(\d{1,7}))? @@", re.M)


def hunk_kinds(lines: Iterable[str]) -> Iterator[str]:
    """Per line of a unified diff: ``@`` for a hunk header (the hunk's old-side start and
    counts follow in :data:`HUNK`), its body lines' first character (`` ``, ``-``, ``+``,
    ``\\``; ``""`` for a blank context line), ``""`` for any other line. Each hunk ends where
    its line counts say (a removed ``-- comment`` line is no file header)."""
    old_left = new_left = 0
    for line in lines:
        if old_left > 0 or new_left > 0:
            first = line[:1]
            if first in (" ", ""):
                old_left -= 1
                new_left -= 1
            elif first == "-":
                old_left -= 1
            elif first == "+":
                new_left -= 1
            elif first != "\\":  # (``\ No newline at end of file``)
                old_left = new_left = 0  # the hunk ended early: read the line as any other
            if old_left > 0 or new_left > 0 or first in (" ", "", "-", "+", "\\"):
                yield first
                continue
        m = HUNK.match(line) if line.startswith("@@ -") else None
        if m is not None:
            old_left = int(m.group(2)) if m.group(2) is not None else 1
            new_left = int(m.group(3)) if m.group(3) is not None else 1
            yield "@"
        else:
            yield ""


def changed_rows(lines: Sequence[str]) -> Iterator[int]:
    """The rows of ``lines`` a diff's hunks add or remove (``+``/``-`` under an ``@@`` header,
    to the end of the hunk its counts give)."""
    return (k for k, kind in enumerate(hunk_kinds(lines)) if kind in ("-", "+"))


CHANGES_PER_FILE = 120  # changed lines of one file kept in sight (a bigger rewrite: its head)
# generated files: their changes are no one's edit (the filter's hunk head shows a few)
_GENERATED = re.compile(
    r"(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock"
    r"|go\.sum|poetry\.lock|Pipfile\.lock|uv\.lock|composer\.lock|Gemfile\.lock|\S+\.min\.(?:js|css)"
    r"|\S+\.snap)$"
)


def modified_file_changes(lines: Sequence[str]) -> frozenset[int]:
    """The rows a diff's hunks add or remove in files that existed before and after (not
    under ``--- /dev/null`` or ``+++ /dev/null``: a new or a deleted file's body is the file,
    not a change to it), at most :data:`CHANGES_PER_FILE` per file, none of a lock file or
    another generated file.  ``lines`` as written, ANSI colour already stripped."""
    found: list[int] = []
    skip = False  # the current file's changes are not kept
    per_file = 0
    for k, (line, kind) in enumerate(zip(lines, hunk_kinds(lines), strict=True)):
        if kind in ("-", "+"):
            if not skip and per_file < CHANGES_PER_FILE:
                found.append(k)
                per_file += 1
        elif kind == "" and line.startswith(("--- ", "+++ ")):
            where = line[4:].split("\t", 1)[0].strip()
            if line.startswith("--- "):
                skip = where == "/dev/null" or _GENERATED.search(where) is not None
                per_file = 0
            elif where == "/dev/null" or _GENERATED.search(where) is not None:
                skip = True
    return frozenset(found)


# a context line that declares what the change is inside (``pub fn format_minor(...)``,
# ``def total(self):``, ``func (s *Store) Get(...)``, ``class Cart``): where the change is
_DECLARATION = re.compile(
    r" \s*(?:(?:pub(?:\([\w:]+\))?|export|default|public|private|protected|static|abstract|final"
    r"|async|override|unsafe|const|extern)\s+){0,4}"
    r"(?:fn|def|func|class|struct|enum|trait|impl|interface|function|module|object|record|type)"
    r"\s+[\w<(*&]"
)


def declaring_context_rows(lines: Sequence[str]) -> Iterator[int]:
    """The context rows of a diff's hunks that declare a function, type or class."""
    return (
        k
        for k, kind in enumerate(hunk_kinds(lines))
        if kind == " " and _DECLARATION.match(lines[k]) is not None
    )
