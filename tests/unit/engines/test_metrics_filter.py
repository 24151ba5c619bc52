"""A Prometheus text exposition (a ``/metrics`` scrape) is a machine's format, not a document to
read: under ``curl`` (whose outputs are otherwise left alone) the ``metrics`` filter takes it by
its content; the samples stay, help and type lines, series creation times and histogram buckets
go to the stash, and the samples a request names stay in aggressive mode too.  Held-out set 7:
a 5,991-token scrape saved 0 % in standard."""

from __future__ import annotations

import random

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from workers.core.settings import Settings
from workers.engines._filters import builtin_filters
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, openai_record


def _scrape() -> str:
    rng = random.Random(7)
    reg = CollectorRegistry()
    req = Counter("http_requests", "HTTP requests", ["method", "route", "status"], registry=reg)
    lat = Histogram("http_request_duration_seconds", "Latency", ["route"], registry=reg)
    depth = Gauge("settlement_queue_depth", "Queue depth", ["queue"], registry=reg)
    for route in ("/v1/refunds", "/v1/postings", "/v1/fx/rates", "/healthz"):
        for method in ("GET", "POST"):
            for status in ("200", "404", "503"):
                req.labels(method, route, status).inc(rng.randint(1, 400))
        for _ in range(40):
            lat.labels(route).observe(rng.random() * 2)
    for name, value in (("main", 12), ("retry", 40), ("dead", 305)):
        depth.labels(name).set(value)
    return generate_latest(reg).decode()


def test_a_scrape_under_curl_is_found_by_its_content() -> None:
    text = _scrape()
    found = builtin_filters().detect("curl -s http://127.0.0.1:9100/metrics", "bash", text)
    assert (found.family, found.source) == ("metrics", "output")
    page = "<html><body>" + "<p>release notes</p>\n" * 50 + "</body></html>"
    assert (
        builtin_filters().detect("curl -s https://example.org/notes", "bash", page).source == "skip"
    )


def test_samples_stay_and_the_asked_ones_survive_aggressive() -> None:
    text = _scrape()
    lines = text.splitlines()
    asked = next(
        x
        for x in lines
        if x.startswith('http_requests_total{method="POST",route="/v1/refunds",status="503"}')
    )
    dead = 'settlement_queue_depth{queue="dead"} 305.0'
    for mode in ("standard", "aggressive"):
        data = openai_record(
            f"metrics-{mode}",
            ("user", "How many POST /v1/refunds returned 503, and what is the dead queue depth?"),
            ("tool", text),
            command="curl -s http://127.0.0.1:9100/metrics",
        )
        data["mode"] = mode
        outcome = Pipeline(Settings(mode=mode)).run_raw(data)
        out = (
            outcome.record["messages"][-1]["content"]
            if "messages" in outcome.record
            else outcome.record["content"]
        )
        assert asked in out and dead in out, mode
        assert "# HELP http_" not in out and "_bucket{" not in out, mode
        assert len(out) < len(text) * 0.5, mode
        if mode == "standard":
            samples = [x for x in lines if x.startswith("http_requests_total{")]
            assert all(x in out for x in samples)  # every counter sample stays in standard
        assert expanded_record(outcome) == data
