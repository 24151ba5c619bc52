"""Shared by the lossless engines that write runs of tool-output lines as blocks
(``template``, ``prefix``): which outputs they read, and how blocks go into a text.

- :class:`LineBlockEngine`: the engine around a ``factor(text, count)`` function and a
  marker module: tool outputs only, never a frozen unit, a one-line text or a file read
  that is not a log (source code reads by its lines);
- :func:`splice`: a text's lines with some runs replaced by their blocks, kept only when
  each block and the whole text count fewer tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import ClassVar

from workers.engines._logs import reads_a_log
from workers.engines._shell import is_file_read
from workers.engines.base import EngineContext, EngineOutput, LosslessEngine
from workers.messages.model import Unit

__all__ = ["LineBlockEngine", "splice"]

Count = Callable[[str], int]


def splice(
    text: str,
    lines: list[str],
    blocks: Iterable[tuple[int, int, list[str] | None]],
    count: Count | None,
    worth: Callable[[list[str], list[str]], bool] | None = None,
) -> str:
    """``text`` (split into ``lines``) with each ``(start, end, block)`` written in place of
    ``lines[start:end]`` (in order, not overlapping; a None block is skipped).

    With ``count``, a block goes in only when ``worth(run, block)`` says so (default: the
    block counts fewer tokens than its lines), and the text comes back unchanged unless it
    counts fewer tokens in all.
    """
    out: list[str] = []
    cursor = 0
    for start, end, block in blocks:
        if block is None:
            continue
        run = lines[start:end]
        if count is not None:
            if worth is not None:
                if not worth(run, block):
                    continue
            elif count("\n".join(block)) >= count("\n".join(run)):
                continue
        out.extend(lines[cursor:start])
        out.extend(block)
        cursor = end
    if not out:
        return text
    out.extend(lines[cursor:])
    factored = "\n".join(out)
    if count is not None and count(factored) >= count(text):
        return text
    return factored


class LineBlockEngine(LosslessEngine):
    """A lossless engine that writes runs of a tool output's lines as blocks of ``marker``."""

    marker: ClassVar[ModuleType]  # OPEN and decode(text)

    @staticmethod
    def factor(text: str, count: Count | None = None) -> str:
        raise NotImplementedError

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts: list[str] = []
        blocks = 0
        opening = self.marker.OPEN
        for unit in units:
            text = unit.text
            if (
                unit.frozen
                or not unit.is_tool_output
                or "\n" not in text
                or (is_file_read(unit) and not reads_a_log(text))  # source code: read whole
            ):
                texts.append(text)
                continue
            new = self.factor(text, ctx.tokens.count)
            if new != text:
                blocks += new.count("\n" + opening) + new.startswith(opening)
            texts.append(new)
        return EngineOutput(texts=texts, details={"blocks": blocks} if blocks else {})

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        decoded: str = self.marker.decode(text)
        return decoded
