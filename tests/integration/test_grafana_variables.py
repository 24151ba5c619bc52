"""The dashboards' ``$job`` and ``$instance`` variables work on a real Prometheus.

Reuses the stack of tests/integration/test_grafana_prometheus.py (a real worker that processed
the sample, scraped by Prometheus from Debian's package):

- the variables' ``label_values`` queries, asked the way Grafana asks them
  (``/api/v1/label/<label>/values?match[]=<selector>``), offer the scrape job and the worker's
  address;
- every panel query returns data with that job and instance selected, and with the variables'
  All value ``.+``;
- with an instance that does not exist selected, no panel shows a value other than 0: the
  matchers really filter.
"""

from __future__ import annotations

import json
import math
import urllib.parse
from typing import Any

import pytest

from tests.integration.test_grafana_prometheus import (  # noqa: F401  (module fixtures)
    RANGE,
    RATE_INTERVAL,
    Stack,
    http_get,
    kafka_bootstrap,
    prometheus_tools,
    stack,
)
from tests.unit.service.test_dashboards import (
    DASHBOARDS,
    concrete,
    dashboard_queries,
    load_dashboard,
)

pytestmark = pytest.mark.kafka


def label_values(s: Stack, label: str, selector: str) -> list[str]:
    query = urllib.parse.urlencode({"match[]": selector})
    status, body = http_get(f"{s.prometheus_url}/api/v1/label/{label}/values?{query}", timeout=10)
    data: dict[str, Any] = json.loads(body)
    assert status == 200 and data["status"] == "success", data
    return sorted(data["data"])


def variable_query(name: str) -> str:
    dashboard = load_dashboard(DASHBOARDS / "ctxpress-overview.json")
    (var,) = [v for v in dashboard["templating"]["list"] if v["name"] == name]
    text: str = var["query"]["query"]
    return text


def values_of(s: Stack, expr: str) -> list[float]:
    result = s.query(expr)["data"]
    if result["resultType"] == "scalar":
        return [float(result["result"][1])]
    return [float(sample["value"][1]) for sample in result["result"]]


def test_job_and_instance_variables_offer_the_scraped_worker(stack: Stack) -> None:  # noqa: F811
    assert variable_query("job") == "label_values(ctxpress_worker_info, job)"
    assert label_values(stack, "job", "ctxpress_worker_info") == ["ctxpress-worker"]
    selector = variable_query("instance").removeprefix("label_values(").removesuffix(", instance)")
    assert selector == 'ctxpress_worker_info{job=~"$job"}'
    chosen = selector.replace("$job", "ctxpress-worker")
    assert label_values(stack, "instance", chosen) == [f"127.0.0.1:{stack.worker_port}"]


@pytest.mark.parametrize("choice", ["selected", "all"])
def test_every_panel_has_data_for_the_chosen_job_and_instance(stack: Stack, choice: str) -> None:  # noqa: F811
    values = (
        {"job": "ctxpress-worker", "instance": f"127.0.0.1:{stack.worker_port}"}
        if choice == "selected"
        else {"job": ".+", "instance": ".+"}
    )
    empty = []
    queries = dashboard_queries()
    for q in queries:
        expr = concrete(q.expr, values, rate_interval=RATE_INTERVAL, range_=RANGE)
        assert f'instance=~"{values["instance"]}"' in expr, q.where
        if not [v for v in values_of(stack, expr) if math.isfinite(v)]:
            empty.append(f"{q.where}: {expr}")
    assert len(queries) > 40
    assert not empty, "no data:\n" + "\n".join(empty)


def test_an_unknown_instance_shows_nothing(stack: Stack) -> None:  # noqa: F811
    values = {"job": "ctxpress-worker", "instance": "127.0.0.1:1"}
    shown = []
    for q in dashboard_queries():
        expr = concrete(q.expr, values, rate_interval=RATE_INTERVAL, range_=RANGE)
        nonzero = [v for v in values_of(stack, expr) if math.isfinite(v) and v != 0]
        if nonzero:
            shown.append(f"{q.where}: {expr} -> {nonzero}")
    assert not shown, "panels not filtered by $instance:\n" + "\n".join(shown)
