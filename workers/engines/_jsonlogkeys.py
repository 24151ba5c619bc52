"""A JSON log's keys that say the same on every line, said once.

An Elasticsearch, bunyan, pino or structlog log writes each event as one JSON object, and
most of each line is the same on every line: ``"ecs.version":"1.2.0"``, the service, the
cluster's and the node's ids, the host, the pid.  :func:`shared_keys_view` writes a view of
such an output where the first JSON line and every line that must stay as written (an error
or warning line, a line the gate counts, a line the request names) are whole, and every
other JSON line leaves out the members (key and value, as written) that every JSON line of
the output holds alike; the note at the end names those keys, the first line shows their
values, and the whole output is stashed (:mod:`workers.markers.structured_view`).  The
event's own keys and values (time, level, message, the thread, the request) stay on every
line, byte for byte.

Only the structure is read (:func:`workers.engines._jsonline.members`): no value is decoded
or re-encoded, so any spelling of a member (spaces, escapes, big numbers, ``1.50``) goes
through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from workers.core.tokens import TokenCounter
from workers.engines._jsonline import members
from workers.engines._prose import make_marker
from workers.markers.structured_view import HEADER_LINE, VIEW_HEADER

__all__ = ["MIN_JSON_LINES", "MIN_SHARED_CHARS", "shared_keys_view"]

MIN_JSON_LINES = 4  # JSON lines an output needs (and half of its non-blank lines)
MIN_SHARED_CHARS = 40  # characters of shared members one line must give up at least
MIN_SAVED_TOKENS = 40  # the view must save this many tokens, marker paid
_NOTE_KEYS = 4  # keys named in the note


def _key(prefix: str) -> str:
    """The key of a member as written (with its quotes) from the text before its value
    (``,"key" : ``: the key's string is all that lies between the first quote and the last
    colon, and a key may hold colons of its own, ``"a:b"``: hence the last one)."""
    start = prefix.index('"')
    return prefix[start : prefix.rindex(":")].rstrip()


def _cut(line: str) -> list[str] | None:
    """``members(line)`` when its keys are all different (else None)."""
    parts = members(line)
    if parts is None:
        return None
    keys = [_key(parts[k]) for k in range(0, len(parts) - 1, 2)]
    return parts if len(set(keys)) == len(keys) else None


def _without(parts: list[str], shared: Collection[tuple[str, str]]) -> str:
    """The line of ``parts`` without the members in ``shared`` (``(key, value)`` as written)."""
    opening = parts[0][: parts[0].index('"')]  # ``{`` and the spaces after it
    out: list[str] = []
    for k in range(0, len(parts) - 1, 2):
        prefix, value = parts[k], parts[k + 1]
        if (_key(prefix), value) in shared:
            continue
        if not out:
            prefix = opening + prefix[prefix.index('"') :]
        out += (prefix, value)
    if not out:
        return opening.rstrip() + parts[-1].lstrip()
    out.append(parts[-1])
    return "".join(out)


def shared_keys_view(
    text: str,
    tokens: TokenCounter,
    stays: Callable[[int, str], bool],
) -> tuple[str, dict[str, str]] | None:
    """``(view, stash)`` of ``text`` with the members every JSON line holds alike left out of
    all JSON lines but the first and those ``stays(index, line)`` keeps, or None (too few JSON
    lines, too little shared, or no saving)."""
    if VIEW_HEADER in text:
        return None  # a view already (a view of a view would not decode)
    lines = text.split("\n")
    cuts: dict[int, list[str]] = {}
    crlf: set[int] = set()  # lines that end in a carriage return (a log written with CRLF)
    non_blank = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        non_blank += 1
        body = line[:-1] if line.endswith("\r") else line
        if stripped[0] == "{" and body == stripped:
            parts = _cut(body)
            if parts is not None:
                cuts[i] = parts
                if body is not line:
                    crlf.add(i)
    if len(cuts) < MIN_JSON_LINES or 2 * len(cuts) <= non_blank:
        return None
    shared: set[tuple[str, str]] | None = None
    for parts in cuts.values():
        pairs = {(_key(parts[k]), parts[k + 1]) for k in range(0, len(parts) - 1, 2)}
        shared = pairs if shared is None else shared & pairs
        if not shared:
            return None
    assert shared is not None
    per_line = sum(len(key) + len(value) + 2 for key, value in shared)
    if per_line < MIN_SHARED_CHARS:
        return None
    first = min(cuts)
    out = list(lines)
    shortened = 0
    for i, parts in cuts.items():
        if i == first or stays(i, lines[i]):
            continue
        out[i] = _without(parts, shared) + ("\r" if i in crlf else "")
        shortened += 1
    if not shortened:
        return None
    names = sorted(shared, key=lambda pair: lines[first].find(pair[0]))
    named = ", ".join(key for key, _ in names[:_NOTE_KEYS])
    more = f" and {len(names) - _NOTE_KEYS} more" if len(names) > _NOTE_KEYS else ""
    note = (
        f"{shortened} JSON lines above leave out the {len(names)} keys every line holds "
        f"alike ({named}{more}: their values as in the first line); original"
    )
    marker, key = make_marker(note, text)
    view = "\n".join(out).rstrip("\n") + HEADER_LINE + marker
    if tokens.count(view) + MIN_SAVED_TOKENS > tokens.count(text):
        return None
    return view, {key: text}
