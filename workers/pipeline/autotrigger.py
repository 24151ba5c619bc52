"""Mode ``auto``: the mode follows the record's token count.

With the default thresholds (all in the settings):

======================================  ============
tokens                                  mode
======================================  ============
under ``CTXPRESS_AUTO_OFF_BELOW``       off
under ``CTXPRESS_AUTO_LOSSLESS_BELOW``  lossless
at least share x context window         aggressive
anything else                           standard
======================================  ============

The count is the record's ``tokens_before`` (every text slot, exact tiktoken
counts), so the decision can be checked against the stats.  The aggressive
rule wins over the lossless one when the context window is small.
"""

from __future__ import annotations

from dataclasses import dataclass

from workers.core.settings import Settings

__all__ = ["AUTO", "Decision", "Thresholds"]

AUTO = "auto"


@dataclass(frozen=True, slots=True)
class Decision:
    mode: str
    rule: str  # the threshold that decided, as a human reads it


@dataclass(frozen=True, slots=True)
class Thresholds:
    off_below: int = 2000
    lossless_below: int = 16000
    context_window: int = 128000
    aggressive_share: float = 0.75

    @classmethod
    def from_settings(cls, settings: Settings) -> Thresholds:
        return cls(
            settings.auto_off_below,
            settings.auto_lossless_below,
            settings.context_window,
            settings.auto_aggressive_share,
        )

    @property
    def aggressive_from(self) -> int:
        """The token count from which a record is aggressive."""
        return max(1, int(self.context_window * self.aggressive_share))

    def decide(self, tokens: int) -> Decision:
        if tokens < self.off_below:
            return Decision("off", f"tokens < {self.off_below} (CTXPRESS_AUTO_OFF_BELOW)")
        aggressive = self.aggressive_from
        if tokens >= aggressive:
            return Decision(
                "aggressive",
                f"tokens >= {aggressive} ({self.aggressive_share:g} of the context window "
                f"{self.context_window})",
            )
        if tokens < self.lossless_below:
            return Decision(
                "lossless", f"tokens < {self.lossless_below} (CTXPRESS_AUTO_LOSSLESS_BELOW)"
            )
        return Decision(
            "standard", f"{self.lossless_below} <= tokens < {aggressive} (standard band)"
        )
