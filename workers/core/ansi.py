"""Terminal escape sequences: the pattern the readers of coloured tool output match with.

CSI sequences (``ESC [`` parameters, intermediates, a final byte: colours,
cursor moves), character set designations (``ESC ( B``) and OSC sequences
(``ESC ]`` ... BEL or ``ESC \\``: titles, hyperlinks), with bounded lengths so a
hostile text cannot make the match slow.
Engines match rules on :func:`strip_ansi` of a line and keep the text as it was.
The ``ansi`` engine, which takes sequences out for good, has a wider grammar of
its own (:data:`workers.markers.ansi.SEQUENCE`: private CSI parameters,
unbounded OSC, two-byte escapes such as ``ESC (B``); a text it has not changed
may hold sequences this pattern leaves in place.
"""

from __future__ import annotations

import re

__all__ = ["ANSI", "SGR_RUN", "strip_ansi"]

ANSI = re.compile(
    r"\x1b\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,400}(?:\x07|\x1b\\)"
    # a character set's designation: ``tput sgr0`` (rustfmt's, any terminfo program's colour
    # reset) writes ``ESC ( B`` before ``ESC [ m``
    r"|\x1b[()][0-9A-Za-z]"
)
#: a regex fragment: any run of colour (SGR) sequences, e.g. before a diff header
SGR_RUN = r"(?:\x1b\[[0-9;]{0,20}m)*"


def strip_ansi(text: str) -> str:
    """``text`` without its escape sequences (one substring test when it has none)."""
    return ANSI.sub("", text) if "\x1b" in text else text
