"""The engine contract.

An engine is a pure, synchronous, deterministic function from a record's text
units to new texts.  It does no I/O: what it drops goes into
``EngineOutput.stash`` (hash -> original text) and the pipeline persists it
after the fidelity gate has accepted the change.

Rules every engine follows (the pipeline enforces the first two):
- frozen units are never changed (their new text is ignored);
- ``texts`` has one entry per input unit, in the same order;
- a marker an engine writes is decodable by a decoder registered in
  ``workers.markers`` (lossless engines) or points into the stash
  (``<<cx:HASH>>``, lossy engines);
- the same units and context give the same output, on any worker.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from workers.core.tokens import TokenCounter
from workers.messages.model import Unit

if TYPE_CHECKING:
    from workers.engines._filters import FilterSet

__all__ = ["Engine", "EngineContext", "EngineOutput", "LosslessEngine"]


@dataclass(frozen=True, slots=True)
class EngineContext:
    """What an engine may know besides the units."""

    tokens: TokenCounter
    latest_user_text: str = ""
    budget_tokens: int | None = None
    allow_lossy_structure: bool = False
    filters: FilterSet | None = None  # toolfilter's, loaded with the pipeline; None: built-in
    # every unit's text as the record came in (one per unit, in order): what an
    # output was before earlier engines rewrote it; empty when not known
    input_texts: tuple[str, ...] = ()
    # every engine of the chain is lossless: no lossy engine reads what this one leaves (dedup
    # then also refers to repeats within one output, which the lossy engines read otherwise)
    lossless_chain: bool = False


@dataclass(slots=True)
class EngineOutput:
    """New texts (one per unit), engine-specific details, and stashed originals."""

    texts: list[str]
    details: dict[str, Any] = field(default_factory=dict)
    stash: dict[str, str] = field(default_factory=dict)


class Engine(ABC):
    """One compression step.  Subclasses set ``name`` and ``lossless``."""

    name: ClassVar[str]
    lossless: ClassVar[bool]
    # Set by engines whose changes are mostly trailing blanks and blank-line
    # runs: the gate then tries its whitespace-equality check first (it still
    # checks; a text that is not equal gets the full check).
    whitespace_edits: ClassVar[bool] = False

    @abstractmethod
    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        """Return one new text per unit (unchanged texts returned as they are)."""


class LosslessEngine(Engine):
    """An engine whose every change :meth:`decode` reverses exactly.

    Its marker is a row of :data:`workers.markers.MARKERS`; the pipeline checks
    every change by decoding it, and refuses to build a mode whose lossless
    engine has no marker there.
    """

    lossless: ClassVar[bool] = True

    @abstractmethod
    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        """The text before this engine's change; ``originals``: uid -> restored earlier units."""
