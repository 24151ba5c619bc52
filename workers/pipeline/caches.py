"""The per-content caches of the pipeline, and a way to empty them.

Engines and the gate cache what they derive from a text (critical lines,
protected spans, decoded markers, parsed shell commands), because the text
one engine produces is the text the next one and the gate read.  Benchmarks
empty these caches before each timed pass, so that a pass pays for every text
like a worker meeting new traffic does (the token count cache is per
:class:`~workers.core.tokens.TokenCounter` and is replaced the same way).
"""

from __future__ import annotations

__all__ = ["clear_content_caches"]


def clear_content_caches() -> None:
    """Forget everything derived from text contents (compiled rules stay)."""
    # importing the modules registers their memos with workers.core.memo
    import workers.core.shell
    import workers.engines._shell
    import workers.fidelity.facts
    import workers.markers  # noqa: F401
    from workers.core.memo import clear_all

    clear_all()
