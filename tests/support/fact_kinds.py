"""The critical lines of one tool output, grouped by kind (the shape tests read them so)."""

from __future__ import annotations

from workers.fidelity.facts import critical_lines


def facts_by_kind(text: str, command: str | None = None) -> dict[str, set[str]]:
    """``{kind: {line, ...}}`` of :func:`~workers.fidelity.facts.critical_lines`."""
    found: dict[str, set[str]] = {}
    for kind, line in critical_lines(text, "tool_result", command):
        found.setdefault(kind, set()).add(line)
    return found
