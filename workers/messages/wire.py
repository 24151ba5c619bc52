"""Compressed lines that keep the input's bytes: write one, and restore the input from it.

A line one of :data:`workers.core.jsonl.LAYOUTS` reproduces (orjson compact,
``json.dumps`` with or without ``ensure_ascii``) is written as before: the
compressed record serialised, ``compression.layout`` naming the layout.  Any
other valid line (``\\u00e9``, ``\\/``, ``1.50``, tabs between tokens,
duplicate keys, leading spaces, CR LF ...) gets ``"layout": "bytes"``: the
compressed line is the input's own bytes with only the changed string values
replaced, and the ``compression`` object inserted before the final ``}``.
Untouched bytes are never re-serialised, so expand only has to put the
changed strings back, each in its original spelling:

- ``spelling``: unit id -> style of :func:`workers.core.jsonbytes.encode_string`
  (absent: ``utf8``, what orjson writes);
- ``verbatim``: unit id -> the string token's bytes (without quotes) when no
  style reproduces them (correct, only less compact);
- ``margins``: ``[leading, trailing]`` whitespace of the input line (a CR of a
  CR LF line end included), when there is any.

These three fields are only on the written line, not in ``outcome.stats``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from workers.core.jsonbytes import encode_string, spelling_of, splice, string_spans
from workers.core.jsonl import detect_layout
from workers.messages.codec import RESERVED_KEY, parse_record
from workers.messages.model import Path

__all__ = ["BYTES_LAYOUT", "compressed_line", "restore_line"]

BYTES_LAYOUT = "bytes"
_MEMBER = b'"' + RESERVED_KEY.encode("ascii") + b'":'


def _at(data: Any, path: Path) -> Any:
    for key in path:
        data = data[key]
    return data


def compressed_line(
    line: bytes, value: Any, record: dict[str, Any], stripped: bytes | None = None
) -> bytes | None:
    """The compressed line for input ``line`` (without its ``\\n``), or None.

    None: a known layout reproduces ``line``; it is named in
    ``record["compression"]["layout"]`` and the caller serialises ``record``.
    ``value`` is the decoded input, ``record`` the compressed record,
    ``stripped`` (optional) ``line.strip()``.
    """
    comp: dict[str, Any] = record[RESERVED_KEY]
    if stripped is None:
        stripped = line.strip()
    if len(stripped) == len(line):
        layout = detect_layout(stripped, value)
        if layout is not None:
            comp["layout"] = layout
            return None
    comp["layout"] = BYTES_LAYOUT
    changed = set(comp.get("changed") or ())
    units = {u.path: u for u in parse_record(value).units if u.uid in changed}
    spans = string_spans(stripped, units)
    spelling: dict[str, str] = {}
    verbatim: dict[str, str] = {}
    replacements = []
    for path, unit in units.items():
        start, end = spans[path]
        token = stripped[start:end]
        style = spelling_of(unit.text, token)
        if style is None:
            verbatim[unit.uid] = token[1:-1].decode("utf-8")
        elif style != "utf8":
            spelling[unit.uid] = style
        replacements.append((start, end, orjson.dumps(_at(record, path))))
    wire = dict(comp)
    if spelling:
        wire["spelling"] = spelling
    if verbatim:
        wire["verbatim"] = verbatim
    lead = line[: len(line) - len(line.lstrip())]
    trail = line[len(line.rstrip()) :]
    if lead or trail:
        wire["margins"] = [lead.decode("ascii"), trail.decode("ascii")]
    body = splice(stripped[:-1], replacements)  # without the final "}"
    comma = b"" if body.rstrip().endswith(b"{") else b","
    return body + comma + _MEMBER + orjson.dumps(wire) + b"}"


def restore_line(
    line: bytes, value: dict[str, Any], texts: Mapping[Path, tuple[str, str]]
) -> bytes | None:
    """The input line of compressed ``line`` with the strings at ``texts`` put back.

    ``value`` is ``line`` decoded; ``texts`` maps the path of every changed
    unit to (unit id, restored text).  None when ``line`` is not a
    ``bytes``-layout line or its ``compression`` object was rewritten after
    compress (the caller then serialises the restored record).
    """
    comp = value.get(RESERVED_KEY)
    if not isinstance(comp, dict) or comp.get("layout") != BYTES_LAYOUT:
        return None
    member = _MEMBER + orjson.dumps(comp) + b"}"
    if not line.endswith(member):
        return None
    body = line[: -len(member)]
    if body.endswith(b","):
        body = body[:-1]
    elif not body.rstrip().endswith(b"{"):
        return None
    spelling = comp.get("spelling") or {}
    verbatim = comp.get("verbatim") or {}
    spans = string_spans(line, texts)
    replacements = []
    for path, (uid, text) in texts.items():
        if path not in spans:
            return None
        start, end = spans[path]
        if uid in verbatim:
            token = b'"' + str(verbatim[uid]).encode("utf-8") + b'"'
        else:
            token = encode_string(text, str(spelling.get(uid, "utf8")))
        replacements.append((start, end, token))
    out = splice(body, replacements) + b"}"
    margins = comp.get("margins")
    if isinstance(margins, list) and len(margins) == 2:
        out = str(margins[0]).encode("utf-8") + out + str(margins[1]).encode("utf-8")
    return out
