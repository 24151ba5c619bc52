"""/expand checks the address really bound, survives odd headers and rejects non-hash paths."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.service.app import create_app
from workers.service.publish import ListPublisher
from workers.service.web import authorized, bound_hosts, expand_handler
from workers.testing.worker import gate_rejecting_pipeline

DIGEST = "0123456789abcdef"


def _app(token: str, hosts: Sequence[str]) -> web.Application:
    store = MemoryStore()
    store.put(DIGEST, "the original")
    app = web.Application()
    app.router.add_get("/expand/{digest}", expand_handler(store, token, lambda: list(hosts)))
    return app


async def _get(app: web.Application, path: str, **headers: str) -> tuple[int, str]:
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.get(path, headers=headers)
        return response.status, await response.text()


def test_loopback_without_token_serves() -> None:
    status, text = asyncio.run(_get(_app("", ["127.0.0.1"]), f"/expand/{DIGEST}"))
    assert (status, text) == (200, "the original")


def test_a_bind_beyond_loopback_without_token_is_refused_per_request() -> None:
    # what `faust worker --web-bind 0.0.0.0` does after the start-up check passed
    for host in ("0.0.0.0", "::", "10.1.2.3"):
        status, text = asyncio.run(_get(_app("", [host]), f"/expand/{DIGEST}"))
        assert status == 403 and "beyond loopback" in text and "the original" not in text


def test_a_bind_beyond_loopback_with_token_needs_the_token() -> None:
    app = _app("s3cret", ["0.0.0.0"])
    assert asyncio.run(_get(app, f"/expand/{DIGEST}"))[0] == 401
    ok = asyncio.run(
        _get(_app("s3cret", ["0.0.0.0"]), f"/expand/{DIGEST}", Authorization="Bearer s3cret")
    )
    assert ok == (200, "the original")


def test_bound_hosts_follow_the_runner_then_the_configured_bind() -> None:
    conf = SimpleNamespace(web_bind="127.0.0.3")
    assert bound_hosts(SimpleNamespace(conf=conf, web=SimpleNamespace())) == ["127.0.0.3"]
    runner = SimpleNamespace(addresses=[("0.0.0.0", 6066)])
    app = SimpleNamespace(conf=conf, web=SimpleNamespace(_runner=runner))
    assert bound_hosts(app) == ["0.0.0.0"]


async def _raw(app: web.Application, request: bytes) -> bytes:
    async with TestServer(app, host="127.0.0.1") as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(request)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(65536), 10)
        writer.close()
        return data


def test_a_non_ascii_authorization_header_is_401_not_500() -> None:
    request = (
        f"GET /expand/{DIGEST} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
        + "Authorization: Bearer sécret\u2603\r\n\r\n".encode()
    )
    reply = asyncio.run(_raw(_app("s3cret", ["127.0.0.1"]), request))
    assert reply.startswith(b"HTTP/1.1 401"), reply[:200]
    assert not authorized("s3cret", "Bearer s\udce9cret")  # surrogate-escaped bytes


def test_a_hash_with_a_newline_is_rejected() -> None:
    app = _app("", ["127.0.0.1"])
    assert asyncio.run(_get(app, f"/expand/{DIGEST}%0A"))[0] == 400
    assert asyncio.run(_get(_app("", ["127.0.0.1"]), f"/expand/{DIGEST}%0a"))[0] == 400
    assert asyncio.run(_get(_app("", ["127.0.0.1"]), f"/expand/{DIGEST}"))[0] == 200


def _worker_app(web_bind: str | None) -> Any:
    settings = Settings(app_id=f"test-{uuid.uuid4().hex[:8]}", topic_prefix="t.")
    store = MemoryStore()
    store.put(DIGEST, "the original")
    app = create_app(
        settings,
        pipeline=gate_rejecting_pipeline(settings),
        publisher=ListPublisher(),
        offload=store,
        source=None,
    )
    app.finalize()
    if web_bind is not None:
        app.conf.web_bind = web_bind  # what `faust worker --web-bind HOST` does
    return app


async def _worker_get(app: Any, path: str) -> tuple[int, str]:
    app.web.init_server()
    async with TestClient(TestServer(app.web.web_app, host="127.0.0.1")) as client:
        response = await client.get(path)
        return response.status, await response.text()


def test_the_real_worker_app_follows_web_bind_set_after_it_was_built() -> None:
    assert asyncio.run(_worker_get(_worker_app(None), f"/expand/{DIGEST}")) == (200, "the original")
    status, text = asyncio.run(_worker_get(_worker_app("0.0.0.0"), f"/expand/{DIGEST}"))
    assert status == 403 and "'0.0.0.0'" in text
    assert asyncio.run(_worker_get(_worker_app("127.0.0.3"), f"/expand/{DIGEST}"))[0] == 200
    assert asyncio.run(_worker_get(_worker_app(None), f"/expand/{DIGEST}%0A"))[0] == 400
