"""The worker's own HTTP endpoints, next to Faust's (``/metrics`` comes from ``workers.service.app``).

- ``GET /expand/{hash}``: the offloaded original behind ``<<cx:HASH>>``
  (``text/plain; charset=utf-8``; 404 with a JSON reason when unknown).  With
  ``CTXPRESS_WEB_TOKEN`` set it requires ``Authorization: Bearer <token>``;
  ``check_web_security`` refuses to start a worker whose web server listens
  beyond loopback without a token.
- ``GET /savings``: the current windowed savings aggregates as JSON.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Callable
from typing import Any

from workers.core.offload import OffloadStore
from workers.core.settings import Settings, SettingsError

__all__ = ["authorized", "check_web_security", "install_views", "is_loopback"]

_HASH = re.compile(r"^[0-9a-f]{8,64}$")


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_web_security(settings: Settings) -> None:
    """Fail at start-up when /expand would be reachable from other machines without a token."""
    if not is_loopback(settings.web_host) and not settings.web_token:
        raise SettingsError(
            f"CTXPRESS_WEB_HOST={settings.web_host!r} exposes /expand/{{hash}} (the offloaded "
            "originals) beyond this machine; set CTXPRESS_WEB_TOKEN to a secret bearer token, "
            "or bind to 127.0.0.1"
        )


def authorized(token: str, header: str | None) -> bool:
    """True when no token is configured, or ``header`` is ``Bearer <token>``."""
    if not token:
        return True
    if not header:
        return False
    scheme, _, value = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        value.strip().encode("utf-8"), token.encode("utf-8")
    )


def install_views(
    app: Any,
    store: OffloadStore,
    settings: Settings,
    savings: Callable[[], list[dict[str, Any]]],
) -> None:
    """Register ``/expand/{hash}`` and ``/savings`` on the Faust app's web server."""
    from faust import web

    token = settings.web_token

    @app.page("/expand/{digest}")
    class ExpandView(web.View):  # type: ignore[misc]
        async def get(self, request: web.Request, digest: str) -> web.Response:
            if not authorized(token, request.headers.get("Authorization")):
                return self.json(
                    {"error": "missing or wrong bearer token (Authorization: Bearer ...)"},
                    status=401,
                    headers={"WWW-Authenticate": 'Bearer realm="ctxpress"'},
                )
            if not _HASH.match(digest):
                return self.json(
                    {
                        "error": f"{digest!r} is not a hash: expected the lowercase hex of <<cx:HASH>>"
                    },
                    status=400,
                )
            text = store.get(digest)
            if text is None:
                return self.json(
                    {
                        "error": f"hash {digest} not found in the offload store",
                        "hint": "it may still be on its way: the store follows the offload topic",
                    },
                    status=404,
                )
            return self.text(text, content_type="text/plain")  # charset=utf-8 added by aiohttp

    @app.page("/savings")
    class SavingsView(web.View):  # type: ignore[misc]
        async def get(self, request: web.Request) -> web.Response:
            return self.json({"windows": savings()})
