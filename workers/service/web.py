"""The worker's own HTTP endpoints, next to Faust's (``/metrics`` comes from ``workers.service.app``).

- ``GET /expand/{hash}``: the offloaded original behind ``<<cx:HASH>>``
  (``text/plain; charset=utf-8``; 404 with a JSON reason when unknown).  With
  ``CTXPRESS_WEB_TOKEN`` set it requires ``Authorization: Bearer <token>``;
  ``check_web_security`` refuses to start a worker whose web server listens
  beyond loopback without a token, and since ``faust worker --web-bind HOST``
  can change the address after that check, every request also checks the
  addresses the server really listens on and the one it was reached on: beyond
  loopback without a token, ``/expand`` answers 403.
- ``GET /savings``: the current windowed savings aggregates as JSON.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from workers.core.offload import OffloadStore
from workers.core.settings import Settings, SettingsError

__all__ = [
    "authorized",
    "bound_hosts",
    "check_web_security",
    "expand_handler",
    "install_views",
    "is_loopback",
]

_HASH = re.compile(r"[0-9a-f]{8,64}")  # fullmatch: no trailing newline


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
    try:  # a header that is not ASCII/UTF-8 text is a wrong token, not a server error
        given = value.strip().encode("utf-8")
    except UnicodeEncodeError:
        return False
    return scheme.lower() == "bearer" and hmac.compare_digest(given, token.encode("utf-8"))


def bound_hosts(app: Any) -> list[str]:
    """The hosts the Faust app's web server really listens on (its configured bind before it runs).

    ``faust worker --web-bind HOST`` sets ``app.conf.web_bind`` after the app was built.
    """
    runner = getattr(getattr(app, "web", None), "_runner", None)
    addresses = getattr(runner, "addresses", None) or []
    hosts = [str(a[0]) if isinstance(a, tuple) else str(a) for a in addresses]
    return hosts or [str(app.conf.web_bind)]


def expand_handler(
    store: OffloadStore, token: str, hosts: Callable[[], Sequence[str]]
) -> Callable[[Any], Awaitable[Any]]:
    """The aiohttp handler of ``GET /expand/{digest}``."""
    from aiohttp import web

    async def handler(request: web.Request) -> web.Response:
        if not token:
            sockname = request.transport.get_extra_info("sockname") if request.transport else None
            seen = [*hosts(), *([str(sockname[0])] if sockname else [])]
            exposed = [h for h in seen if not is_loopback(h)]
            if exposed:
                return web.json_response(
                    {
                        "error": f"the web server listens on {exposed[0]!r}, beyond loopback, "
                        "without CTXPRESS_WEB_TOKEN: /expand is disabled; set the token or bind "
                        "to 127.0.0.1"
                    },
                    status=403,
                )
        if not authorized(token, request.headers.get("Authorization")):
            return web.json_response(
                {"error": "missing or wrong bearer token (Authorization: Bearer ...)"},
                status=401,
                headers={"WWW-Authenticate": 'Bearer realm="ctxpress"'},
            )
        digest = request.match_info.get("digest", "")
        if not _HASH.fullmatch(digest):
            return web.json_response(
                {"error": f"{digest!r} is not a hash: expected the lowercase hex of <<cx:HASH>>"},
                status=400,
            )
        text = store.get(digest)
        if text is None:
            return web.json_response(
                {
                    "error": f"hash {digest} not found in the offload store",
                    "hint": "it may still be on its way: the store follows the offload topic",
                },
                status=404,
            )
        return web.Response(text=text, content_type="text/plain")  # charset=utf-8 added

    return handler


def install_views(
    app: Any,
    store: OffloadStore,
    settings: Settings,
    savings: Callable[[], list[dict[str, Any]]],
) -> None:
    """Register ``/expand/{hash}`` and ``/savings`` on the Faust app's web server."""
    from faust import web

    token = settings.web_token

    handler = expand_handler(store, token, lambda: bound_hosts(app))

    @app.page("/expand/{digest}")
    class ExpandView(web.View):  # type: ignore[misc]
        async def get(self, request: web.Request, digest: str) -> web.Response:
            response: web.Response = await handler(request)
            return response

    @app.page("/savings")
    class SavingsView(web.View):  # type: ignore[misc]
        async def get(self, request: web.Request) -> web.Response:
            return self.json({"windows": savings()})
