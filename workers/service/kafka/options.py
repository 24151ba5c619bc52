"""Kafka client options from :class:`~workers.core.settings.Settings`, in one place.

``client_options`` gives the keyword arguments every aiokafka client of ours
takes (producer, consumer, admin); ``faust_credentials`` gives the same
security settings in the form ``faust.App(broker_credentials=...)`` wants.
Both fail with a :class:`~workers.core.settings.SettingsError` that names the
variable to fix.
"""

from __future__ import annotations

import ssl
from typing import Any

from workers.core.settings import Settings, SettingsError

__all__ = ["PROTOCOLS", "bootstrap_list", "client_options", "faust_credentials", "ssl_context"]

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def bootstrap_list(settings: Settings) -> list[str]:
    """``host:port`` entries of CTXPRESS_KAFKA_BOOTSTRAP."""
    hosts = [h.strip() for h in settings.kafka_bootstrap.split(",") if h.strip()]
    if not hosts:
        raise SettingsError("CTXPRESS_KAFKA_BOOTSTRAP is empty; set it to host:port[,host:port]")
    return hosts


def _protocol(settings: Settings) -> str:
    protocol = settings.kafka_security_protocol.upper()
    if protocol not in PROTOCOLS:
        raise SettingsError(
            f"CTXPRESS_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol!r} is not one of "
            + ", ".join(PROTOCOLS)
        )
    return protocol


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """A client TLS context when the protocol uses SSL, else None."""
    if _protocol(settings) not in ("SSL", "SASL_SSL"):
        return None
    from aiokafka.helpers import create_ssl_context

    try:
        context: ssl.SSLContext = create_ssl_context(
            cafile=settings.kafka_ssl_cafile or None,
            certfile=settings.kafka_ssl_certfile or None,
            keyfile=settings.kafka_ssl_keyfile or None,
        )
    except (OSError, ssl.SSLError) as exc:
        raise SettingsError(
            f"cannot build the TLS context from CTXPRESS_KAFKA_SSL_CAFILE/CERTFILE/KEYFILE: {exc}"
        ) from exc
    return context


def _sasl(settings: Settings) -> tuple[str, str, str]:
    mechanism = (settings.kafka_sasl_mechanism or "PLAIN").upper()
    if mechanism not in MECHANISMS:
        raise SettingsError(
            f"CTXPRESS_KAFKA_SASL_MECHANISM={settings.kafka_sasl_mechanism!r} is not one of "
            + ", ".join(MECHANISMS)
        )
    if not settings.kafka_sasl_username:
        raise SettingsError(
            "CTXPRESS_KAFKA_SECURITY_PROTOCOL uses SASL but CTXPRESS_KAFKA_SASL_USERNAME is empty"
        )
    return mechanism, settings.kafka_sasl_username, settings.kafka_sasl_password


def client_options(settings: Settings) -> dict[str, Any]:
    """Security keyword arguments for AIOKafkaProducer/Consumer/AdminClient."""
    protocol = _protocol(settings)
    options: dict[str, Any] = {"security_protocol": protocol}
    context = ssl_context(settings)
    if context is not None:
        options["ssl_context"] = context
    if protocol.startswith("SASL"):
        mechanism, user, password = _sasl(settings)
        options.update(
            sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password
        )
    return options


def faust_credentials(settings: Settings) -> Any:
    """``broker_credentials`` for :class:`faust.App` (None for PLAINTEXT)."""
    import faust

    protocol = _protocol(settings)
    context = ssl_context(settings)
    if protocol.startswith("SASL"):
        mechanism, user, password = _sasl(settings)
        return faust.SASLCredentials(
            username=user, password=password, ssl_context=context, mechanism=mechanism
        )
    if context is not None:
        return faust.SSLCredentials(context)
    return None
