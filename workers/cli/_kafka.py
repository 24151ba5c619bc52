"""What the Kafka commands share: ``--bootstrap``/``--prefix``, settings, errors.

``ctxpress produce``, ``consume``, ``dlq replay`` and ``bench-kafka`` name topics by
their short names from topics/ (``transcripts``, ``tool-outputs``, ``compressed``,
``stats``, ``dead-letter``, ``offload``); the prefix and the broker come from the
CTXPRESS_* settings.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from workers.cli._common import UserError
from workers.core.settings import Settings, SettingsError

__all__ = ["kafka_arguments", "run_async", "settings_of"]


def settings_of(args: argparse.Namespace) -> Settings:
    try:
        overrides: dict[str, Any] = {}
        if getattr(args, "bootstrap", None):
            overrides["kafka_bootstrap"] = args.bootstrap
        if getattr(args, "prefix", None) is not None:
            overrides["topic_prefix"] = args.prefix
        return Settings.from_env(**overrides)
    except SettingsError as exc:
        raise UserError(str(exc)) from exc


def kafka_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bootstrap",
        default=None,
        metavar="B",
        help="bootstrap servers (default: CTXPRESS_KAFKA_BOOTSTRAP; unset: the local broker, "
        "127.0.0.1:$CTXPRESS_KAFKA_PORT or the one 'ctxpress kafka start' runs, else "
        "127.0.0.1:19092)",
    )
    p.add_argument(
        "--prefix",
        default=None,
        metavar="P",
        help="topic name prefix (default: CTXPRESS_TOPIC_PREFIX, 'ctxpress.')",
    )


def run_async(func: Any, args: argparse.Namespace, name: str) -> int:
    try:
        code: int = asyncio.run(func(args))
        return code
    except UserError as exc:
        print(f"ctxpress {name}: {exc}", file=sys.stderr)
        return 2
    except LookupError as exc:
        print(f"ctxpress {name}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from workers.service.kafka.clients import kafka_error_hint

        hint = kafka_error_hint(exc, name)
        if hint is None:
            raise
        print(hint, file=sys.stderr)
        return 1
