"""``CTXPRESS_PIPELINE_FACTORY=tests.e2e.hang_pipeline:pipeline``: lossless = one engine that
blocks (``time.sleep``, the event loop with it) on a text holding ``HANG-FOREVER``."""

from __future__ import annotations

import time

from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline
from workers.testing import FunctionEngine

MARK = "HANG-FOREVER"


def _hang(text: str) -> str:
    if MARK in text:
        time.sleep(600)
    return text


def pipeline(settings: Settings) -> Pipeline:
    return Pipeline(settings, engines={"lossless": [FunctionEngine("hang", _hang)]})
