"""``ctxpress worker``: run the Faust worker (what ``faust -A workers.app:app worker`` does).

Every setting comes from the environment (see ``ctxpress worker --help``); the
few flags here override the most common ones.  SIGTERM and Ctrl-C stop the
worker gracefully: the batch in flight is published (or, with exactly_once,
its transaction aborted) before the process exits.

The process never outlives a stop or a crash by long (:class:`ExitWatchdog`):

- after SIGTERM or SIGINT it exits within ``CTXPRESS_SHUTDOWN_TIMEOUT`` seconds,
  gracefully when it can, else with ``os._exit(1)`` (nothing is lost: offsets
  commit only with their outputs, and the next owner aborts open transactions);
- when the app crashed (a publication failed for good, an agent died), a monitor
  thread starts the same stop and exits with code 1 within
  ``min(10, CTXPRESS_SHUTDOWN_TIMEOUT)`` seconds, even if the stop hangs.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

from workers.core.settings import Settings, SettingsError, settings_help

__all__ = ["CRASH_EXIT_S", "ExitWatchdog", "register", "restore_root_logger", "run_worker"]

log = logging.getLogger(__name__)

#: a crashed worker exits at most this many seconds after the crash is seen
CRASH_EXIT_S = 10.0


class ExitWatchdog:
    """Ends the process with ``os._exit`` if it is still alive at the deadline."""

    def __init__(self) -> None:
        self.deadline: float | None = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def arm(self, seconds: float, why: str, code: int = 1) -> None:
        """Exit with ``code`` in ``seconds`` unless the process ended first (earliest wins)."""
        with self._lock:
            deadline = time.monotonic() + seconds
            if self.deadline is not None and self.deadline <= deadline:
                return
            if self._timer is not None:
                self._timer.cancel()
            self.deadline = deadline
            self._timer = threading.Timer(seconds, self._fire, (seconds, why, code))
            self._timer.daemon = True
            self._timer.start()

    def cancel(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None
            self.deadline = None

    @staticmethod
    def _fire(seconds: float, why: str, code: int) -> None:
        message = (
            f"ctxpress worker: still running {seconds:g} s after {why}; exiting with code {code}"
        )
        log.critical(message)
        print(message, file=sys.stderr)
        for handler in logging.getLogger().handlers:
            try:
                handler.flush()
            except Exception:
                pass
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def restore_root_logger(loglevel: str | int) -> None:
    """The root logger back at ``loglevel``, without Faust's start-up spinner handler.

    For its terminal spinner Faust sets the root logger to DEBUG and adds a handler that
    turns the spinner once per record; after start-up the spinner stops, but the level
    stayed: every ``log.debug`` of aiokafka and Faust (several per produced batch and
    fetch) built a record that no handler printed, about 5 % of the event loop's time in
    a py-spy profile of the worker under ``ctxpress bench-kafka``.
    """
    from faust.utils.terminal.spinners import SpinnerHandler
    from mode.utils.logging import level_number

    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, SpinnerHandler):
            root.removeHandler(handler)
    root.setLevel(level_number(loglevel))


EPILOG = """\
The worker reads {prefix}transcripts and {prefix}tool-outputs and writes
{prefix}compressed, {prefix}stats, {prefix}dead-letter, {prefix}offload and its
savings table's changelog {prefix}savings-changelog. Create them first with
'ctxpress topics create' (the worker creates no topic; it exits with code 2 and
that command when one is missing). Metrics: http://WEB_HOST:WEB_PORT/metrics;
originals: GET /expand/{{hash}}.

Also startable the usual Faust way (same settings):
  faust -A workers.app:app worker -l info
  faust -A workers.app:app agents            # the agent and the topics it reads

Combos (named engine chains, CTXPRESS_COMBOS_FILE=combos.toml or --combos): each record
runs the first chain named by its ctxpress.combo header, its ctxpress.mode header, its
"combo" field, its "mode" field, its tenant ([select] tenant_header / tenant_field and
tenants in the file), its input topic ([select] topics), CTXPRESS_COMBO, CTXPRESS_MODE.
Unknown combos, engines and engine options stop the worker at start-up (exit 2) with
the valid names; an unknown combo named by a record is a dead letter. Mode auto: the
record's token count picks off, lossless, standard or aggressive (CTXPRESS_AUTO_*,
CTXPRESS_CONTEXT_WINDOW). The compressed record's compression object and every stats
record name the chain ("combo") and the decision ("route": its source, header, record
field, tenant, topic, threshold or default).

"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "worker",
        help="run the Kafka worker (Faust agents: compress, publish, dead-letter)",
        description=(
            "Run the ctxpress stream-processing worker on Kafka: consume transcripts and tool "
            "outputs, compress them, publish compressed records, per-engine stats, dead letters "
            "and offloaded originals."
        ),
        epilog=EPILOG.format(prefix="ctxpress.") + settings_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-l",
        "--loglevel",
        default=os.environ.get("CTXPRESS_LOG_LEVEL", "info"),
        choices=("debug", "info", "warning", "error", "critical"),
        help="log level (default: info, or CTXPRESS_LOG_LEVEL)",
    )
    p.add_argument("--bootstrap", default=None, help="override CTXPRESS_KAFKA_BOOTSTRAP")
    p.add_argument("--web-port", type=int, default=None, help="override CTXPRESS_WEB_PORT")
    p.add_argument(
        "--mode", default=None, help="override CTXPRESS_MODE (default mode of records; or auto)"
    )
    p.add_argument("--combos", default=None, metavar="FILE", help="override CTXPRESS_COMBOS_FILE")
    p.add_argument("--combo", default=None, metavar="NAME", help="override CTXPRESS_COMBO")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_env(
            kafka_bootstrap=args.bootstrap,
            web_port=args.web_port,
            mode=args.mode,
            combos_file=args.combos,
            combo=args.combo,
        )
    except SettingsError as exc:
        print(f"ctxpress worker: {exc}", file=sys.stderr)
        return 2
    return run_worker(settings, args.loglevel)


def _check_topics(app: Any) -> int:
    """0 when every topic exists and takes the largest output; else print what to do, return 2."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from workers.service.kafka.clients import kafka_error_hint
    from workers.service.topics import MissingTopicsError, TopicLimitError, require_topics

    parts = app.ctxpress
    # its own loop in a thread: the Faust worker owns this thread's event loop
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(asyncio.run, require_topics(parts.settings, parts.names))
        try:
            future.result()
        except (MissingTopicsError, TopicLimitError) as exc:
            print(f"ctxpress worker: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:
            hint = kafka_error_hint(exc, "worker")
            if hint is None:
                raise
            print(hint, file=sys.stderr)
            return 1
    parts.topics_checked = True
    return 0


def run_worker(settings: Settings, loglevel: str = "info") -> int:
    """Build the app and run a Faust worker until it stops; returns the exit code."""
    import faust

    from workers.engines import UnknownEngine
    from workers.service.app import create_app

    try:
        app: Any = create_app(settings)
    except (SettingsError, UnknownEngine) as exc:
        print(f"ctxpress worker: {exc}", file=sys.stderr)
        return 2
    refused = _check_topics(app)
    if refused:
        return refused
    watchdog = ExitWatchdog()
    timeout = settings.shutdown_timeout
    health = app.ctxpress.health

    class Worker(faust.Worker):  # type: ignore[misc]
        def install_signal_handlers(self) -> None:
            super().install_signal_handlers()

            # A Python-level handler next to asyncio's: it runs even while the event loop is
            # blocked (asyncio still dispatches the signal to Faust through its wakeup fd).
            def on_signal(signum: int, _frame: Any) -> None:
                watchdog.arm(timeout, f"{signal.Signals(signum).name}", code=1)

            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, on_signal)

        def _on_startup_end_spinner(self) -> None:
            super()._on_startup_end_spinner()
            restore_root_logger(loglevel)

    def monitor() -> None:
        while True:
            time.sleep(0.5)
            reason = health.fatal or getattr(app, "crash_reason", None)
            if reason is not None:
                log.critical("the worker crashed (%r); stopping it", reason)
                watchdog.arm(min(CRASH_EXIT_S, timeout), f"a crash ({reason!r})", code=1)
                os.kill(os.getpid(), signal.SIGTERM)  # Faust's graceful stop
                return

    worker = Worker(app, loglevel=loglevel, redirect_stdouts=False)
    logging.getLogger("workers").setLevel(loglevel.upper())
    threading.Thread(target=monitor, name="ctxpress-crash-monitor", daemon=True).start()
    code: int = 0
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if code == 0 and (health.fatal is not None or getattr(app, "crash_reason", None)):
        code = 1
    return code
