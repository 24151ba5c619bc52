"""Every Grafana panel query returns data on a real Prometheus that scraped a real worker.

The test installs Prometheus from Debian packages when it is missing (``apt-get install
prometheus``: Prometheus 2.42 with ``promtool``; needs root and the Debian mirror), starts
``ctxpress worker`` on the local Kafka broker (uuid topic prefix and consumer group), starts
its own Prometheus on 127.0.0.1 (temporary config and storage, scrape every second), pushes
the bundled sample through the worker twice (so every counter has moved between two
scrapes, and ``rate()`` sees it) - the broken lines and gate-rejected records only in the
first round, after the worker was scraped, so the dead-letter and gate-rejection panels show
them only if those counters existed at 0 before their first event - then:

- ``promtool check rules`` on a rules file with every dashboard expression (Grafana's
  variables replaced by concrete values) - the queries are valid PromQL for this Prometheus;
- every expression through ``/api/v1/query``: each returns at least one finite value, and one
  that is not 0 (except the panels in ``MAY_BE_ZERO``, which are 0 on a healthy run).

It stops the worker and Prometheus it started, by PID.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kafka_broker import kafka_bootstrap  # noqa: F401  (session fixture)
from tests.unit.service.test_dashboards import (
    DASHBOARDS,
    Query,
    concrete,
    dashboard_queries,
    load_dashboard,
)
from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline, RecordError
from workers.testing import FunctionEngine

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "sample.jsonl"
CTXPRESS = Path(sys.executable).with_name("ctxpress")
#: The worker runs :func:`gate_rejecting_pipeline` (below; the worker imports it from this
#: module, with the repository on PYTHONPATH).
PIPELINE_FACTORY = "tests.integration.test_grafana_prometheus:gate_rejecting_pipeline"
GATE_MODE = "aggressive"
GATE_ENGINE = "drop-errors"
GATE_RECORDS = 3
SCRAPE_INTERVAL = "1s"
#: $__rate_interval and $__range for the queries: long enough to span the whole run.
RATE_INTERVAL = "2m"
RANGE = "10m"


def drop_error_lines(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not line.startswith("ERROR"))


def gate_rejecting_pipeline(settings: Settings) -> Pipeline:
    """The real modes, except that aggressive is one engine that deletes ERROR lines: the
    fidelity gate rejects it every time, so the gate-rejection panels have data (no real
    engine is meant to be rejected)."""
    return Pipeline(settings, engines={GATE_MODE: [FunctionEngine(GATE_ENGINE, drop_error_lines)]})


# -- Prometheus from Debian ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PrometheusTools:
    prometheus: str
    promtool: str
    install_seconds: float | None


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


def _tail(done: subprocess.CompletedProcess[str], lines: int = 25) -> str:
    return "\n".join((done.stdout + done.stderr).splitlines()[-lines:])


@pytest.fixture(scope="module")
def prometheus_tools() -> PrometheusTools:
    """``prometheus`` and ``promtool`` on PATH, installed with apt when missing."""
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if prometheus and promtool:
        return PrometheusTools(prometheus, promtool, None)
    if os.geteuid() != 0:
        pytest.fail(
            "Prometheus is not installed and this test is not root, so it cannot install it. "
            "Run 'sudo apt-get install -y prometheus' (Debian: Prometheus 2.x with promtool) "
            "or run the tests as root.",
            pytrace=False,
        )
    if shutil.which("apt-get") is None:
        pytest.fail(
            "Prometheus is not installed and there is no apt-get to install it; put "
            "'prometheus' and 'promtool' on PATH.",
            pytrace=False,
        )
    started = time.monotonic()
    update = _run(["apt-get", "update", "-q"], timeout=600)
    if update.returncode != 0:
        pytest.fail(
            f"'apt-get update' failed (exit {update.returncode}); is the Debian mirror "
            f"reachable?\n{_tail(update)}",
            pytrace=False,
        )
    install = _run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", "prometheus"], timeout=900
    )
    if install.returncode != 0:
        pytest.fail(
            f"'apt-get install -y prometheus' failed (exit {install.returncode}):\n"
            f"{_tail(install)}",
            pytrace=False,
        )
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not (prometheus and promtool):
        pytest.fail(
            "apt-get installed the 'prometheus' package but prometheus/promtool are not on "
            f"PATH ({os.environ.get('PATH')})",
            pytrace=False,
        )
    seconds = time.monotonic() - started
    print(f"installed Prometheus from Debian in {seconds:.1f} s", file=sys.stderr)
    return PrometheusTools(prometheus, promtool, seconds)


# -- processes ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Child:
    """A child process in its own session with its output in a file; stopped by its PID."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 60.0) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._out.close()


def http_get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            status: int = resp.status
            return status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_for(what: str, check: Any, timeout: float, child: Child | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        if child is not None and not child.alive():
            raise AssertionError(f"{what}: the process exited:\n{child.tail()}")
        try:
            value = check()
        except (OSError, urllib.error.URLError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            tail = f"\n{child.tail()}" if child is not None else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{tail}")
        time.sleep(0.25)


@dataclass
class Stack:
    prometheus_url: str
    worker_port: int
    env: dict[str, str]
    tools: PrometheusTools
    records_expected: int
    tmp: Path

    def query(self, expr: str) -> dict[str, Any]:
        url = f"{self.prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        status, body = http_get(url, timeout=10)
        data: dict[str, Any] = json.loads(body)
        assert status == 200 and data.get("status") == "success", f"{expr}: {status} {data}"
        return data

    def value(self, expr: str) -> float | None:
        result = self.query(expr)["data"]["result"]
        return float(result[0]["value"][1]) if result else None


def worker_env(bootstrap: str, tag: str, port: int, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXPRESS_")}
    if "CTXPRESS_KAFKA_HOME" in os.environ:
        env["CTXPRESS_KAFKA_HOME"] = os.environ["CTXPRESS_KAFKA_HOME"]
    env.update(
        {
            "CTXPRESS_KAFKA_BOOTSTRAP": bootstrap,
            "CTXPRESS_TOPIC_PREFIX": f"graf{tag}.",
            "CTXPRESS_APP_ID": f"graf-{tag}",
            "CTXPRESS_WEB_HOST": "127.0.0.1",
            "CTXPRESS_WEB_PORT": str(port),
            "CTXPRESS_DATA_DIR": str(tmp / "worker-data"),
            "CTXPRESS_PIPELINE_FACTORY": PIPELINE_FACTORY,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(
                [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
        }
    )
    return env


#: panels that read 0 when nothing went wrong
MAY_BE_ZERO = frozenset(
    {
        "Publish retries (time range)",
        "Consumer lag per input partition",
        "Consumer lag by input topic",
        "Rebalances",
    }
)


def _valid(line: bytes) -> bool:
    try:
        gate_rejecting_pipeline(Settings()).run_raw(json.loads(line))
    except (ValueError, RecordError):
        return False
    return True


def offloading_record(round_no: int) -> bytes:
    """A standard-mode log the toolfilter folds, stashing the original (the offload panel)."""
    lines = "\n".join(f"12:00:{i % 60:02d} INFO request {i} took {i * 7} ms" for i in range(300))
    record = {
        "id": f"graf-std-{round_no}",
        "kind": "tool_output",
        "mode": "standard",
        "command": "tail -n 300 app.log",
        "content": lines,
    }
    return json.dumps(record).encode()


def input_lines(round_no: int) -> list[bytes]:
    """Round 1: the bundled sample (valid and broken lines) plus records the gate rejects.
    Round 2: the sample's valid lines only (no dead letter, no gate rejection). Both rounds:
    one standard-mode record that offloads its original."""
    lines = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    lines.append(offloading_record(round_no))
    if round_no > 1:
        return [line for line in lines if _valid(line)]
    for n in range(GATE_RECORDS):
        record = {
            "id": f"graf-gate-{round_no}-{n}",
            "kind": "tool_output",
            "mode": GATE_MODE,
            "command": "./job.sh",
            "content": "starting job\nERROR db connection refused at 10.0.0.3:5432\nINFO retrying",
        }
        lines.append(json.dumps(record).encode())
    return lines


def in_process() -> tuple[int, dict[tuple[str, str], float]]:
    """What the worker must count for both rounds, from the same pipeline run in-process:
    the lines it dead-letters (undecodable or invalid) and the gate rejections by
    (engine, kind)."""
    pipeline = gate_rejecting_pipeline(Settings())
    broken = 0
    rejections: dict[tuple[str, str], float] = {}
    for round_no in (1, 2):
        for line in input_lines(round_no):
            try:
                outcome = pipeline.run_raw(json.loads(line))
            except (ValueError, RecordError):
                broken += 1
                continue
            for rejection in outcome.rejections:
                for kind in {v.kind for v in rejection.violations} or {"error"}:
                    key = (rejection.engine, kind)
                    rejections[key] = rejections.get(key, 0.0) + 1
    return broken, rejections


def broken_lines() -> int:
    return in_process()[0]


def expected_rejections() -> dict[tuple[str, str], float]:
    return in_process()[1]


def produce(stack: Stack, round_no: int) -> int:
    lines = input_lines(round_no)
    path = stack.tmp / f"round-{round_no}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    done = subprocess.run(
        [str(CTXPRESS), "produce", "-i", str(path)],
        env=stack.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"ctxpress produce failed:\n{done.stdout}\n{done.stderr}"
    return len(lines)


def prometheus_config(worker_port: int) -> dict[str, Any]:
    return {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
        "scrape_configs": [
            {
                "job_name": "ctxpress-worker",
                "metrics_path": "/metrics",
                "scrape_interval": SCRAPE_INTERVAL,
                "scrape_timeout": SCRAPE_INTERVAL,
                "static_configs": [{"targets": [f"127.0.0.1:{worker_port}"]}],
            }
        ],
    }


@pytest.fixture(scope="module")
def stack(
    kafka_bootstrap: str,  # noqa: F811
    prometheus_tools: PrometheusTools,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    """A worker that has processed the sample twice, and a Prometheus that scraped it."""
    tmp = tmp_path_factory.mktemp("grafana-prometheus")
    tag = uuid.uuid4().hex[:8]
    worker_port, prom_port = free_port(), free_port()
    env = worker_env(kafka_bootstrap, tag, worker_port, tmp)
    created = subprocess.run(
        [str(CTXPRESS), "topics", "create"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert created.returncode == 0, f"topics create failed:\n{created.stdout}{created.stderr}"

    children: list[Child] = []
    try:
        worker = Child([str(CTXPRESS), "worker", "-l", "info"], tmp / "worker.log", env)
        children.append(worker)
        config = tmp / "prometheus.yml"
        config.write_text(yaml.safe_dump(prometheus_config(worker_port)))
        prometheus = Child(
            [
                prometheus_tools.prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
                "--storage.tsdb.retention.time=1h",
                "--log.level=warn",
            ],
            tmp / "prometheus.log",
        )
        children.append(prometheus)
        url = f"http://127.0.0.1:{prom_port}"
        s = Stack(url, worker_port, env, prometheus_tools, 0, tmp)
        wait_for(
            "Prometheus ready",
            lambda: http_get(f"{url}/-/ready", 2)[0] == 200,
            60,
            prometheus,
        )
        wait_for(
            "the worker's /metrics",
            lambda: http_get(f"http://127.0.0.1:{worker_port}/metrics", 2)[0] == 200,
            120,
            worker,
        )
        wait_for(
            "the worker to join its group and get the input partitions",
            lambda: "input partitions assigned" in worker.log.read_text(errors="replace"),
            120,
            worker,
        )
        wait_for("a scrape of the worker", lambda: s.value('up{job="ctxpress-worker"} == 1'), 30)
        expected = 0
        for round_no in (1, 2):
            expected += produce(s, round_no)
            wait_for(
                f"Prometheus to see {expected} records out of the worker (round {round_no})",
                lambda want=expected: (s.value("sum(ctxpress_records_out_total)") or 0) >= want,
                120,
                worker,
            )
            time.sleep(3)  # a few more scrapes, so rate() has points on both sides
        s.records_expected = expected
        yield s
    finally:
        for child in reversed(children):
            child.stop()


# -- the checks -----------------------------------------------------------------------------------


def variable_values(stack: Stack) -> dict[str, str]:
    """Concrete values for the engine dashboard's $mode and $engine, as Grafana would offer
    them: the mode and engine of the gate-rejected runs, so every panel has data."""
    dashboard = load_dashboard(DASHBOARDS / "ctxpress-engine.json")
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    # the series exist at 0 for every engine and kind: take one that moved
    rejected = stack.query("ctxpress_gate_rejections_total > 0")["data"]["result"]
    assert rejected, "no gate rejection reached Prometheus"
    engine = rejected[0]["metric"]["engine"]
    runs = stack.query(f'ctxpress_engine_runs_total{{engine="{engine}"}}')["data"]["result"]
    mode = runs[0]["metric"]["mode"]
    assert "label_values(ctxpress_engine_runs_total, mode)" in variables["mode"]["query"]["query"]
    return {"mode": mode, "engine": engine}


def all_queries(stack: Stack) -> list[tuple[Query, str]]:
    """(query, concrete PromQL): every query with All selected, and the engine dashboard's
    again with one mode and one engine selected."""
    out = [
        (q, concrete(q.expr, rate_interval=RATE_INTERVAL, range_=RANGE))
        for q in dashboard_queries()
    ]
    values = variable_values(stack)
    for q in dashboard_queries([DASHBOARDS / "ctxpress-engine.json"]):
        if "$" in q.expr:
            out.append((q, concrete(q.expr, values, rate_interval=RATE_INTERVAL, range_=RANGE)))
    return out


def test_promtool_accepts_every_dashboard_expression(stack: Stack) -> None:
    queries = all_queries(stack)
    rules = {
        "groups": [
            {
                "name": "ctxpress-dashboards",
                "rules": [
                    {"record": f"ctxpress_dashboard:query_{n}:value", "expr": expr}
                    for n, (_, expr) in enumerate(queries)
                ],
            }
        ]
    }
    path = stack.tmp / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump(rules, width=1000))
    done = subprocess.run(
        [stack.tools.promtool, "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"promtool check rules:\n{done.stdout}\n{done.stderr}"
    assert f"{len(queries)} rules found" in done.stdout + done.stderr


def test_every_panel_returns_data(stack: Stack) -> None:
    empty: list[str] = []
    checked = 0
    with_all = len(dashboard_queries())  # all_queries lists the All-selected pass first
    for n, (query, expr) in enumerate(all_queries(stack)):
        # With All selected a panel must show a value other than 0; with the one engine the
        # gate always rejects selected, its savings are truly 0 and data is enough.
        strict = n < with_all or "gate_rejections" in expr
        result = stack.query(expr)["data"]
        values: list[str] = []
        if result["resultType"] == "vector":
            values = [sample["value"][1] for sample in result["result"]]
        elif result["resultType"] == "scalar":
            values = [result["result"][1]]
        finite = [v for v in values if math.isfinite(float(v))]
        moved = [v for v in finite if float(v) != 0]
        if not finite or (strict and not moved and query.panel not in MAY_BE_ZERO):
            empty.append(f"{query.where}: {expr}\n    -> {result['result']!r}")
        checked += 1
    assert checked > 40
    assert not empty, f"{len(empty)} of {checked} queries returned no data:\n" + "\n".join(empty)


def test_the_counts_match_what_was_sent(stack: Stack) -> None:
    """The dashboards' numbers are the worker's: every line sent is counted once."""
    assert stack.value("sum(ctxpress_records_out_total)") == stack.records_expected
    assert stack.value("sum(ctxpress_records_in_total)") == stack.records_expected
    dead_inputs = stack.value('sum(ctxpress_records_out_total{outcome="dead_letter"})')
    assert dead_inputs == broken_lines()
    rejections = stack.query("ctxpress_gate_rejections_total")["data"]["result"]
    seen = {(r["metric"]["engine"], r["metric"]["kind"]): float(r["value"][1]) for r in rejections}
    assert {k: v for k, v in seen.items() if v} == expected_rejections(), seen
    # every known engine and kind is there from the start, at 0 until it happens
    assert ("dedup", "number") in seen and ("drop-errors", "error") in seen
    assert stack.value("count(ctxpress_worker_info)") == 1
    saved = stack.value(
        "sum(ctxpress_record_tokens_before_total) - sum(ctxpress_record_tokens_after_total)"
    )
    assert saved is not None and saved > 0


def test_the_lag_panel_drains_to_zero(stack: Stack) -> None:
    """After the worker caught up, the overview's lag query says 0 for every input partition."""
    overview = dashboard_queries([DASHBOARDS / "ctxpress-overview.json"])
    (lag,) = [q for q in overview if q.panel == "Consumer lag per input partition"]
    expr = concrete(lag.expr, rate_interval=RATE_INTERVAL, range_=RANGE)

    def drained() -> bool:
        result = stack.query(expr)["data"]["result"]
        return bool(result) and all(float(r["value"][1]) == 0 for r in result)

    wait_for(f"zero lag from {expr}", drained, 60)
    partitions = {
        (r["metric"]["topic"], r["metric"]["partition"])
        for r in stack.query(expr)["data"]["result"]
    }
    assert {t for t, _ in partitions} == {
        stack.env["CTXPRESS_TOPIC_PREFIX"] + "transcripts",
        stack.env["CTXPRESS_TOPIC_PREFIX"] + "tool-outputs",
    }
