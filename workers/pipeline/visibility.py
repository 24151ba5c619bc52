"""Which critical facts of a record's tool outputs are still visible after compression.

The oracle behind the corpus tests and ``ctxpress bench``: for every tool-result
unit of the input, each critical line (:func:`workers.fidelity.facts.critical_lines`,
with the unit's command) must be readable in the output unit, in a JSON block
re-encoded by a lossless engine (decoded without any store), or in the unit a
dedup back-reference names.  Lines written compactly (JSON without its layout)
and error lines repeated with other numbers count as visible.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from workers.fidelity.facts import SHAPED_KINDS, critical_lines, line_shape
from workers.markers import ansi, store_free_decoders
from workers.markers.dup import DUP_MARKER
from workers.messages import RESERVED_KEY, parse_record

__all__ = ["count_facts", "lost_facts"]

_SPACE = re.compile(r"\s+")


def _decoded_views(text: str) -> Iterator[str]:
    """The text, and its JSON re-encodings decoded (they need no offload store)."""
    yield text
    for _name, decode in store_free_decoders():
        try:
            decoded = decode(text)
        except Exception:  # a view that does not decode is simply not a view
            continue
        if decoded != text:
            yield decoded


_JSON_MEMBER = re.compile(r'^("(?:[^"\\]|\\.)+")\s*:\s*(.+?),?$')


def _table_cell_visible(key: str, value: str, views: list[str]) -> bool:
    for view in views:
        for header in re.finditer(r"\[\[json-table:v1 columns=(\[[^\n]*?\]) rows=", view):
            if key in header.group(1) and value in view[header.end() :]:
                return True
    return False


def _plain(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != RESERVED_KEY}


def lost_facts(data: dict[str, Any], output: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(unit, kind, line) of every critical tool-output line no longer visible in ``output``."""
    before = parse_record(_plain(data)).units
    after = parse_record(_plain(output)).units
    out_by_uid = {u.uid: u.text for u in after}
    lost: list[tuple[str, str, str]] = []
    for a, b in zip(before, after, strict=True):
        if a.kind != "tool_result":
            continue
        critical = critical_lines(a.text, "tool_result", a.command)
        if not critical:
            continue
        views = list(_decoded_views(b.text))
        for match in DUP_MARKER.finditer(b.text):
            source = out_by_uid.get(match.group(1))
            if source is not None:
                views.extend(_decoded_views(source))
        shapes: set[str] | None = None
        compact: list[str] | None = None
        for kind, line in critical:
            if any(line in view for view in views):
                continue
            if ansi.ESC in line:  # read as the ansi engine shows it: its plain text
                # (stripped again: ``\x1b[0m  \x1b[2m12:3 ...`` keeps the spaces the codes
                # hid from the first strip, and the shapes below are of stripped lines)
                line = ansi.strip(line)[0].strip()
                if any(line in view for view in views):
                    continue
            if compact is None:
                compact = [_SPACE.sub("", view) for view in views]
            squeezed = _SPACE.sub("", line)
            if squeezed and any(squeezed in view for view in compact):
                continue  # JSON written compactly: the same tokens, without the layout
            member = _JSON_MEMBER.match(line)
            if member and _table_cell_visible(member.group(1), member.group(2), views):
                continue  # a row of a JSON table: the key is its column, the value its cell
            if kind in SHAPED_KINDS:
                if shapes is None:
                    shapes = {
                        line_shape(x.strip()[:600]) for view in views for x in view.splitlines()
                    }
                if line_shape(line) in shapes:
                    continue
            lost.append((a.uid, kind, line))
    return lost


def count_facts(data: dict[str, Any]) -> int:
    """Number of critical tool-output lines of a record."""
    return sum(
        len(critical_lines(u.text, "tool_result", u.command))
        for u in parse_record(_plain(data)).units
        if u.kind == "tool_result"
    )
