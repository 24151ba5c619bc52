"""``ansi``: colour and other ANSI escape sequences go out of band.

Tool output captured from a terminal (``tsc --pretty``, ``cargo build
--color=always``, ``gcc -fdiagnostics-color=always``, jest, vitest, ``ls
--color``, ``git log --color``, ``grep --color``) carries escape sequences
that cost the model tokens and hide the lines from every engine that reads
them (a diagnostic headline starts with ``\\x1b[1m\\x1b[31merror``, not
``error``).  This engine writes the plain text, without any sequence of
:data:`workers.markers.ansi.SEQUENCE`, and hands the runs it took (positions
and exact bytes) to the pipeline as the unit's out-of-band layout
(``details["_layouts"]``): the gate checks that :meth:`decode_with` gives
back the exact text, and the pipeline writes the entry into the record's
``compression`` manifest (``markers.ansi``), where expand reads it.  Later
engines see the plain text.

Lossless: malformed sequences stay as they are, and a unit is left alone
when taking the sequences out would make marker-like text appear, or would
leave nothing but whitespace (an empty text block is an API error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workers.engines.base import EngineContext, EngineOutput, LosslessEngine
from workers.markers import ansi, marker_tokens
from workers.messages.model import Unit

__all__ = ["AnsiEngine"]


class AnsiEngine(LosslessEngine):
    name = "ansi"
    lossless = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts: list[str] = []
        layouts: dict[int, str] = {}
        sequences = 0
        for i, unit in enumerate(units):
            text = unit.text
            if unit.frozen or ansi.ESC not in text:
                texts.append(text)
                continue
            plain, runs = ansi.strip(text)
            if not runs or not plain.strip() or marker_tokens(plain) != marker_tokens(text):
                # (nothing but sequences and blanks: an empty or blank text block is
                # an error for the Anthropic API, so such a unit keeps its sequences)
                texts.append(text)
                continue
            texts.append(plain)
            layouts[i] = ansi.entry(plain, runs)
            sequences += sum(len(ansi.SEQUENCE.findall(run)) for _, run in runs)
        details: dict[str, Any] = {}
        if layouts:
            details = {"units": len(layouts), "sequences": sequences, "_layouts": layouts}
        return EngineOutput(texts=texts, details=details)

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        """Without its out-of-band entry the plain text is all there is."""
        return text

    def decode_with(self, text: str, layout: str) -> str:
        """``text`` with the escape sequences of its entry put back."""
        return ansi.restore(text, layout)
