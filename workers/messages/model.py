"""The one internal model the pipeline works on.

A record (OpenAI chat, Anthropic messages, or a single tool output) is kept as
the decoded dict it came in as, so that fields the pipeline does not touch
(unknown keys, key order, tool calls) survive unchanged.  Next to it sits a
flat tuple of :class:`Unit` objects: one per text slot an engine may rewrite,
each with the path where its text lives in the dict.  Engines only ever see
units; the pipeline writes their new texts back through the paths.

Guarantees:
- ``units`` are in conversation order (Anthropic top-level ``system`` first);
- ``Unit.path`` addresses exactly one ``str`` inside ``Record.data``;
- tool-call ids, names and arguments, roles and message order are never units,
  so no engine can change them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Format", "Path", "Record", "Unit"]

Format = Literal["openai", "anthropic", "tool_output"]
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Unit:
    """One rewritable text slot of a record.

    ``index`` is the message index in ``messages`` (``-1`` for the Anthropic
    top-level system prompt and for a single tool output).  ``uid`` is a short
    stable name (``m3``, ``m3.1`` for the second content part, ``s0`` for
    system blocks) that markers use to point at other units.
    """

    uid: str
    index: int
    role: str  # system | user | assistant | tool
    kind: str  # "text" (prose) or "tool_result" (a tool's output)
    text: str
    path: Path
    frozen: bool = False
    command: str | None = None  # shell command that produced a tool result, when known
    tool_name: str | None = None
    is_error: bool = False

    @property
    def is_tool_output(self) -> bool:
        return self.kind == "tool_result"


@dataclass(slots=True)
class Record:
    """A decoded input record plus its text units."""

    data: dict[str, Any]
    format: Format
    units: tuple[Unit, ...]
    record_id: str | None = None
    mode: str | None = None
    budget_tokens: int | None = None
    allow_lossy_structure: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def latest_user_text(self) -> str:
        """Text of the last user prose unit (what relevance scoring aims at)."""
        for unit in reversed(self.units):
            if unit.role == "user" and unit.kind == "text":
                return unit.text
        return ""
