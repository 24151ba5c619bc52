"""ANSI escape sequences kept out of band: the grammar, the writer and the decoder.

The ``ansi`` engine takes the escape sequences (colour, bold, hyperlinks,
cursor moves) out of a text; the visible text is the plain text and what
expand needs to put them back, their positions and exact bytes, lives in the
record's ``compression`` manifest (``markers.ansi``, one entry per unit):

    UNIT=DIGEST DELTA RUN<TAB>DELTA RUN...

written without the spaces between ``DELTA`` and ``RUN``: ``DIGEST`` is
:func:`text_digest` of the plain text (12 hex digits), each item one *run*
(adjacent sequences, as written) and ``DELTA`` the decimal distance in the
plain text from the previous run's position (the first: from the start).  A
run starts with ESC and holds no tab, so items split on tabs and a run
starts at its first ESC.

Taken out (:data:`SEQUENCE`): CSI (``ESC [`` parameters, intermediates, a
final byte), OSC (``ESC ]`` printable text, then BEL or ``ESC \\``) and the
other two-byte and ``nF`` escapes (``ESC (B``, ``ESC 7``, ``ESC c``).  Anything
else (a lone ESC, a CSI cut short, an OSC with a line break) stays in the
visible text as it is.

:func:`restore` puts the runs back only when the text is exactly the plain
text the entry was written for (its digest) and the entry parses; otherwise
the text stays as it is: an entry can only insert escape sequences.
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "DIGEST_HEX",
    "ESC",
    "SEQUENCE",
    "entry",
    "parse",
    "restore",
    "strip",
    "text_digest",
]

ESC = "\x1b"
SEQUENCE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\][^\x00-\x1f\x7f]*(?:\x07|\x1b\\)"  # OSC, ended by BEL or ST
    r"|[ -/]*[0-Z\\^-~])"  # nF and two-byte escapes (not ESC [ or ESC ])
)
_RUN = re.compile(f"(?:{SEQUENCE.pattern})+")
_ITEM = re.compile(r"(\d{1,12})(\x1b.*)", re.S)
DIGEST_HEX = 12
_DIGEST = re.compile(f"[0-9a-f]{{{DIGEST_HEX}}}")


def text_digest(text: str) -> str:
    """The key of an entry: a digest of the plain text it was written for."""
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=DIGEST_HEX // 2).hexdigest()


def strip(text: str) -> tuple[str, list[tuple[int, str]]]:
    """``text`` without its escape sequences, and the runs taken: (plain position, run)."""
    if ESC not in text:
        return text, []
    pieces: list[str] = []
    runs: list[tuple[int, str]] = []
    cursor = 0
    plain_len = 0
    for m in _RUN.finditer(text):
        piece = text[cursor : m.start()]
        pieces.append(piece)
        plain_len += len(piece)
        runs.append((plain_len, m.group(0)))
        cursor = m.end()
    pieces.append(text[cursor:])
    return "".join(pieces), runs


def entry(plain: str, runs: list[tuple[int, str]]) -> str:
    """The manifest entry (without ``UNIT=``) of the runs taken from ``plain``."""
    items: list[str] = []
    last = 0
    for pos, run in runs:
        items.append(f"{pos - last}{run}")
        last = pos
    return f"{text_digest(plain)} " + "\t".join(items)


def parse(value: str, plain: str) -> list[tuple[int, str]] | None:
    """The runs of an entry written for ``plain``; None when it is not one (digest, grammar)."""
    digest, space, payload = value.partition(" ")
    if not space or not payload or not _DIGEST.fullmatch(digest):
        return None
    if digest != text_digest(plain):
        return None
    runs: list[tuple[int, str]] = []
    pos = 0
    for item in payload.split("\t"):
        m = _ITEM.fullmatch(item)
        if m is None or _RUN.fullmatch(m.group(2)) is None:
            return None
        pos += int(m.group(1))
        if pos > len(plain):
            return None
        runs.append((pos, m.group(2)))
    return runs


def restore(text: str, value: str | None) -> str:
    """``text`` with the runs of its entry put back (``value``: the entry, or None)."""
    if not value:
        return text
    runs = parse(value, text)
    if runs is None:
        return text
    pieces: list[str] = []
    cursor = 0
    for pos, run in runs:
        pieces.append(text[cursor:pos])
        pieces.append(run)
        cursor = pos
    pieces.append(text[cursor:])
    return "".join(pieces)
