"""After start-up the worker's root logger is back at its level: no debug records are built.

Faust's start-up spinner sets the root logger to DEBUG and adds a handler that turns the
spinner per record; ``restore_root_logger`` (called when the spinner ends) undoes both.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import faust
import pytest
from faust.utils.terminal.spinners import SpinnerHandler

from workers.cli.worker_cmd import restore_root_logger


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize("loglevel", ["warning", "info", "error"])
def test_faust_leaves_debug_on_and_restore_turns_it_off(
    root_logger: logging.Logger, loglevel: str
) -> None:
    app = faust.App("ctxpress-logging-test", broker="kafka://127.0.0.1:1")
    worker = faust.Worker(app, loglevel=loglevel, redirect_stdouts=False)
    worker._setup_logging()
    kafka_log = logging.getLogger("aiokafka.producer.sender")
    spinning = any(isinstance(h, SpinnerHandler) for h in root_logger.handlers)
    # what Faust does at start-up with a level of WARN or above (info: no spinner)
    assert spinning == (loglevel != "info")
    assert kafka_log.isEnabledFor(logging.DEBUG) == spinning

    restore_root_logger(loglevel)

    assert not any(isinstance(h, SpinnerHandler) for h in root_logger.handlers)
    assert root_logger.level == getattr(logging, loglevel.upper())
    assert not kafka_log.isEnabledFor(logging.DEBUG)
    assert kafka_log.isEnabledFor(logging.ERROR)
