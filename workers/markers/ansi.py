"""ANSI escape sequences kept out of band: the grammar, the writer and the decoder.

The ``ansi`` engine takes the escape sequences (colour, bold, hyperlinks,
cursor moves) out of a text; the visible text is the plain text and what
expand needs to put them back, their positions and exact bytes, lives in the
record's ``compression`` manifest (``markers.ansi``, one entry per unit):

    UNIT=ITEM<TAB>ITEM...      ITEM: N[~L][.C]RUN

Each item is one *run* (adjacent sequences, as written).  Its position is
counted in the plain text's non-whitespace characters: ``N`` more of them
than before the previous run (the first: from the start), then, in the
whitespace that follows, ``L`` line ends and ``C`` more characters of that
line (``~L`` and ``.C`` left out when 0).  A run starts
with ESC and holds no tab, so items split on tabs and a run starts at its
first ESC.  On the plain text the entry was written for, the positions are
exact; counted this way they also survive the whitespace engine of standard
mode (trailing blanks, runs of blank lines), so colours come back there too.

Taken out (:data:`SEQUENCE`): CSI (``ESC [`` parameters, intermediates, a
final byte), OSC (``ESC ]`` printable text, then BEL or ``ESC \\``) and the
other two-byte and ``nF`` escapes (``ESC (B``, ``ESC 7``, ``ESC c``).  Anything
else (a lone ESC, a CSI cut short, an OSC with a line break) stays in the
visible text as it is.

:func:`restore` puts the runs back; an entry that does not parse or that
counts more non-whitespace characters than the text has leaves the text as it
is: an entry can only insert escape sequences.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["ESC", "SEQUENCE", "WS", "entry", "parse", "restore", "strip"]

ESC = "\x1b"
SEQUENCE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\][^\x00-\x1f\x7f]*(?:\x07|\x1b\\)"  # OSC, ended by BEL or ST
    r"|[ -/]*[0-Z\\^-~])"  # nF and two-byte escapes (not ESC [ or ESC ])
)
_RUN = re.compile(f"(?:{SEQUENCE.pattern})+")
_ITEM = re.compile(r"(\d{1,12})(?:~(\d{1,12}))?(?:\.(\d{1,12}))?(\x1b.*)", re.S)
WS = " \t\r\n\f\v"  # what the whitespace engine may trim or fold
_STEP = 256  # restore skips at most this many non-whitespace characters per match


@cache  # n <= _STEP: at most _STEP patterns
def _skip(n: int) -> re.Pattern[str]:
    """Matches up to just after the ``n``-th non-whitespace character."""
    return re.compile(rf"(?:[ \t\r\n\f\v]*[^ \t\r\n\f\v]){{{n}}}")


_BLANKS = re.compile(r"[ \t\r\f\v]*")  # whitespace within a line


def _non_ws(text: str) -> int:
    """How many non-whitespace characters ``text`` holds."""
    return len(text) - sum(text.count(c) for c in WS)


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
    last_count = 0
    count = 0  # non-whitespace characters of plain[:scanned]
    scanned = 0
    # just after the last non-whitespace character before ``scanned``, and the line
    # ends and the start of the last line of plain[anchor:scanned] (counted as the
    # runs go: runs on blank lines after one character would make rescanning quadratic)
    anchor = lines = line_start = 0
    for pos, run in runs:
        kept = plain[scanned:pos].rstrip(WS)
        if kept:
            count += _non_ws(kept)
            anchor = line_start = scanned + len(kept)
            lines = 0
            scanned = anchor
        ends = plain.count("\n", scanned, pos)
        if ends:
            lines += ends
            line_start = plain.rfind("\n", scanned, pos) + 1
        scanned = pos
        col = pos - line_start
        items.append(
            f"{count - last_count}{f'~{lines}' if lines else ''}{f'.{col}' if col else ''}{run}"
        )
        last_count = count
    return "\t".join(items)


def parse(value: str) -> list[tuple[int, int, int, str]] | None:
    """(non-whitespace count, line ends, column, run) of an entry's items; None when it is
    not one."""
    if not value:
        return None
    runs: list[tuple[int, int, int, str]] = []
    count = 0
    for item in value.split("\t"):
        m = _ITEM.fullmatch(item)
        if m is None or _RUN.fullmatch(m.group(4)) is None:
            return None
        count += int(m.group(1))
        runs.append((count, int(m.group(2) or 0), int(m.group(3) or 0), m.group(4)))
    return runs


def restore(text: str, value: str | None) -> str:
    """``text`` with the runs of its entry put back (``value``: the entry, or None).

    A run goes after its count of non-whitespace characters, then past as many
    line ends of the whitespace that follows as it had (or as many as are
    left), then past as many blanks of that line as it had (or as many as are
    left before the line's end or its next character).
    """
    runs = parse(value) if value else None
    if runs is None:
        return text
    pieces: list[str] = []
    n = len(text)
    written = 0  # text[:written] is in pieces
    i = 0  # scan position
    count = 0
    anchor = 0
    # the whitespace after ``anchor``, read once however many runs stand in it: the
    # start of the line after each of its line ends, how far it is read, and where
    # the blanks from a line start end
    starts: list[int] = []
    read = 0
    blank_end: dict[int, int] = {}
    for target, lines, col, run in runs:
        if count < target:
            while count < target:
                step = min(target - count, _STEP)
                m = _skip(step).match(text, i)
                if m is None:
                    return text  # counts more than the text holds: not its entry
                count += step
                i = anchor = m.end()
            starts, read = [], anchor
        while len(starts) < lines and read < n and text[read] in WS:
            read += 1
            if text[read - 1] == "\n":
                starts.append(read)
        j = starts[min(lines, len(starts)) - 1] if lines and starts else anchor
        if col:
            end = blank_end.get(j)
            if end is None:
                blanks = _BLANKS.match(text, j)  # matches the empty string too
                end = blank_end[j] = j if blanks is None else blanks.end()
            j = min(j + col, end)
        j = max(j, written)
        pieces.append(text[written:j])
        pieces.append(run)
        written = i = j
    pieces.append(text[written:])
    return "".join(pieces)
