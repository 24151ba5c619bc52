"""Filter-author tooling: run a filter's inline ``verify`` samples through the engine."""

from __future__ import annotations

from workers.core.tokens import TokenCounter
from workers.engines._filters import Filter, FilterSet, Sample
from workers.engines.base import EngineContext
from workers.engines.toolfilter.engine import ToolFilterEngine
from workers.markers.stash import KEY_PATTERN
from workers.messages.model import Unit

__all__ = ["sample_unit", "verify_filter"]


def sample_unit(sample: Sample) -> Unit:
    """The tool-result unit a filter's ``verify`` sample stands for (tool ``bash`` if unnamed)."""
    return Unit(
        uid="m1",
        index=1,
        role="tool",
        kind="tool_result",
        text=sample.input,
        path=("messages", 1, "content"),
        command=sample.command,
        tool_name=sample.tool or "bash",
    )


def verify_filter(
    filt: Filter, tokens: TokenCounter, filters: FilterSet | None = None
) -> list[str]:
    """Run a filter's inline ``verify`` samples through the engine; return the failures.

    ``filters`` is the set the filter is part of (default: the built-in set).
    A sample passes when the engine's output equals ``expected`` (offload keys
    normalised to ``<<cx:*>>``) and, if anything was dropped, this filter did it.
    """
    failures: list[str] = []
    engine = ToolFilterEngine()
    ctx = EngineContext(tokens=tokens, filters=filters)
    for i, sample in enumerate(filt.verify):
        out = engine.apply([sample_unit(sample)], ctx)
        got = KEY_PATTERN.sub("<<cx:*>>", out.texts[0])
        hits = out.details.get("filters_hit", {})
        if got != sample.expected:
            failures.append(f"{filt.origin}: verify[{i}]: output differs from 'expected'")
        elif out.texts[0] != sample.input and hits != {filt.name: 1}:
            failures.append(
                f"{filt.origin}: verify[{i}]: handled by {sorted(hits)}, not {filt.name}"
            )
    return failures
