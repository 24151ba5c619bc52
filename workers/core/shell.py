"""Shell commands as ctxpress reads them: segments, wrappers and paths removed (pure).

One parser for what a command runs: the tool filters pick a filter by the
segments, the fact rules pick a command family by them.  (Which files a command
reads or writes is word-level work on top of shlex: workers.engines._shell.)

``cd /x && FOO=1 sudo time npx jest | tee o`` -> ``("cd /x", "jest", "tee o")``:
the command is split at unquoted ``;``, ``&&``, ``||``, ``|``, ``&`` and
newlines, and each segment loses its wrappers (``sudo``, ``env``, ``time``,
``npx``, ``uv run``, ``python -m`` ...), its program path and git's global
options, so that a filter's ``match.command`` regexes see the program first.
"""

from __future__ import annotations

import re
from functools import lru_cache

from workers.core.memo import register

__all__ = ["MAX_COMMAND", "command_segments"]

MAX_COMMAND = 4096

_WRAPPER = re.compile(
    r"(?:sudo|doas)(?:\s+-[ugpCDrtUh]\s+[^\s-]\S*|\s+-[A-Za-z]+|\s+--[a-z-]+(?:=\S+)?){0,6}\s+"
    r"|(?:time|nohup|command|exec|builtin|unbuffer|xvfb-run|caffeinate)\s+"
    r"|nice\s+-n\s*-?\d+\s+"
    r"|env(?:\s+-[iu]\S*)?\s+"
    r"|timeout\s+(?:-\S+\s+)?\d+[smhd]?\s+"
    r"|stdbuf\s+-\S+\s+"
    r"|[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+"
    r"|npx\s+(?:--yes\s+|-y\s+|-p\s+\S+\s+)?"
    r"|pnpx\s+|bunx\s+|uvx\s+"
    r"|(?:pnpm|yarn|bun)\s+(?:exec|dlx)\s+"
    r"|npm\s+exec\s+(?:--\s+)?"
    r"|(?:uv|poetry|pipenv|pdm|hatch|rye)\s+run\s+"
    r"|bundle\s+exec\s+"
    r"|(?:python[0-9.]*|py)\s+(?:-[BuOI]\s+)*-m\s+"
    r"|\(\s*|\{\s+"
)
_PROGRAM_PATH = re.compile(r"(?:\.{0,2}/)?(?:[\w.@+-]+/)+(?=[\w.+-]+(?:\s|$))")
_GIT_GLOBAL = re.compile(
    r"git((?:\s+(?:-C|-c|--git-dir|--work-tree|--namespace)\s+\S+"
    r"|\s+--(?:git-dir|work-tree|namespace)=\S+|\s+--no-pager|\s+-P|\s+--paginate|\s+-p"
    r"|\s+--no-optional-locks|\s+--literal-pathspecs)+)(?=\s)"
)


def _split(command: str) -> list[str]:
    """Split a shell command at unquoted ``;``, ``&&``, ``||``, ``|``, ``&``, newlines."""
    segments: list[str] = []
    buf: list[str] = []
    quote = ""
    i = 0
    n = len(command)
    while i < n:
        ch = command[i]
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < n:
                buf.append(command[i + 1])
                i += 1
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
        elif ch == "\\" and i + 1 < n:
            if command[i + 1] != "\n":
                buf.append(ch)
                buf.append(command[i + 1])
            i += 1
        elif ch in ";|&\n":
            prev = command[i - 1] if i else ""
            nxt = command[i + 1] if i + 1 < n else ""
            if ch == "&" and (prev in "<>" or nxt == ">"):
                buf.append(ch)  # redirection: 2>&1, &>file, >&2
            else:
                segments.append("".join(buf))
                buf = []
                if ch in "&|" and nxt == ch:
                    i += 1
        else:
            buf.append(ch)
        i += 1
    segments.append("".join(buf))
    return [s.strip() for s in segments if s.strip()]


def _normalise(segment: str) -> str:
    seg = segment
    for _ in range(12):
        match = _WRAPPER.match(seg)
        if match is None or match.end() == 0:
            break
        seg = seg[match.end() :]
    match = _PROGRAM_PATH.match(seg)
    if match:
        seg = seg[match.end() :]
    if seg.startswith("git"):
        seg = _GIT_GLOBAL.sub("git", seg, count=1)
    return seg.strip()


def command_segments(command: str) -> tuple[str, ...]:
    """Normalised segments of a shell command, in order (wrappers and paths removed)."""
    return _segments(command[:MAX_COMMAND])


@register  # emptied with every content cache
@lru_cache(maxsize=1024)  # pure; parsing is slow and the same commands come back
def _segments(command: str) -> tuple[str, ...]:
    return tuple(s for s in (_normalise(x) for x in _split(command)) if s)
