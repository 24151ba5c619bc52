"""The Grafana dashboards in grafana/dashboards/ query only what the worker exports.

Every panel query is read far enough to pull out its metric names, label matchers and
grouping labels; each name must be a sample name of the worker's Prometheus registry (our
``ctxpress_*`` metrics and Faust's ``faust_*`` sensors, built by ``workers.service.app.create_app``
without a broker), and each label must be one of that metric's labels. A dashboard that
names a metric the worker does not export fails here, before anyone opens Grafana.

The helpers (``dashboard_queries``, ``concrete``, ``exported_metrics``) are also used by
tests/integration/test_grafana_prometheus.py, which runs every query on a real Prometheus.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
DASHBOARDS = REPO / "grafana" / "dashboards"
PROVISIONING = REPO / "grafana" / "provisioning"

#: Stable uids: links, bookmarks and alerts point at these.
UIDS = {"ctxpress-overview.json": "ctxpress-overview", "ctxpress-engine.json": "ctxpress-engine"}
#: Grafana unit ids the panels may use: counts (tokens, records), percent, time, bytes/s.
UNITS = {"short", "none", "percent", "percentunit", "s", "ms", "Bps", "bytes"}
#: Labels Prometheus adds to every scraped sample.
TARGET_LABELS = {"job", "instance"}

PROMQL_FUNCTIONS_AND_KEYWORDS = {
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "inf",
    "nan",
    "Inf",
    "NaN",
}


# -- what the worker exports ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Exported:
    """One sample name in the worker's /metrics and the labels its samples carry."""

    name: str
    family: str
    type: str
    labels: frozenset[str]


@cache
def exported_metrics() -> dict[str, Exported]:
    """Every sample name the worker's registry exposes, with its labels.

    The registry is the one ``create_app`` fills (our metrics and Faust's sensors with the
    prefix the app gives them); no broker is contacted. Labelled metrics that have not seen
    a value yet have no samples, so the names come from the collectors' types: a counter
    ``x`` is exposed as ``x_total`` (and ``x_created``), a histogram ``h`` as ``h_bucket``
    (with ``le``), ``h_sum``, ``h_count``, ``h_created``, a gauge as itself.
    """
    from prometheus_client import CollectorRegistry

    from workers.core.offload import MemoryStore
    from workers.core.settings import Settings
    from workers.service.app import create_app
    from workers.service.publish import ListPublisher

    registry = CollectorRegistry()
    create_app(
        Settings.from_env({}),
        publisher=ListPublisher(),
        offload=MemoryStore(),
        registry=registry,
        source=None,
    )
    collectors: dict[int, Any] = {id(c): c for c in registry._names_to_collectors.values()}
    out: dict[str, Exported] = {}
    for collector in collectors.values():
        family: str = collector._name
        kind: str = collector._type
        labels = frozenset(collector._labelnames)
        if kind == "counter":
            names = {f"{family}_total": labels, f"{family}_created": labels}
        elif kind == "histogram":
            names = {
                f"{family}_bucket": labels | {"le"},
                f"{family}_sum": labels,
                f"{family}_count": labels,
                f"{family}_created": labels,
            }
        elif kind == "summary":
            names = {
                family: labels | {"quantile"},
                f"{family}_sum": labels,
                f"{family}_count": labels,
                f"{family}_created": labels,
            }
        else:
            names = {family: labels}
        for name, label_set in names.items():
            out[name] = Exported(name, family, kind, frozenset(label_set))
    return out


# -- reading the dashboards ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query:
    dashboard: str
    panel: str
    ref: str
    expr: str
    instant: bool

    @property
    def where(self) -> str:
        return f"{self.dashboard}: panel {self.panel!r} query {self.ref}"


def dashboard_files() -> list[Path]:
    return sorted(DASHBOARDS.glob("*.json"))


def load_dashboard(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, including those nested in collapsed rows."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def dashboard_queries(paths: list[Path] | None = None) -> list[Query]:
    queries = []
    for path in paths if paths is not None else dashboard_files():
        for panel in panels(load_dashboard(path)):
            for target in panel.get("targets", []):
                if target.get("hide"):
                    continue
                queries.append(
                    Query(
                        dashboard=path.name,
                        panel=panel.get("title", "?"),
                        ref=target.get("refId", "?"),
                        expr=target["expr"],
                        instant=bool(target.get("instant")) and not target.get("range"),
                    )
                )
    return queries


#: Grafana's built-in interval variables -> a concrete duration.
BUILTIN_DURATIONS = ("$__rate_interval", "$__interval", "$__range")


def concrete(
    expr: str,
    values: dict[str, str] | None = None,
    *,
    rate_interval: str = "5m",
    range_: str = "1h",
) -> str:
    """The query with Grafana's variables replaced: built-in durations, then template
    variables (``$mode``, ``${engine}``; default ``.*``, i.e. All)."""
    out = (
        expr.replace("$__rate_interval", rate_interval)
        .replace("${__rate_interval}", rate_interval)
        .replace("$__interval", rate_interval)
        .replace("$__range", range_)
        .replace("${__range}", range_)
    )
    values = values or {}

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return values.get(name, ".*")

    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", sub, out)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)*'")
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)")
_MATCHERS = re.compile(r"\{([^{}]*)\}")
_IDENT = re.compile(r"(?<![\w.:])([A-Za-z_:][A-Za-z0-9_:]*)")


@dataclass(frozen=True, slots=True)
class Selector:
    metric: str
    matcher_labels: frozenset[str]


@dataclass(frozen=True, slots=True)
class Parsed:
    selectors: tuple[Selector, ...]
    grouping_labels: frozenset[str]


def parse(expr: str) -> Parsed:
    """Metric selectors and grouping labels of a PromQL expression (enough of PromQL for
    dashboards: selectors, matchers, ranges, functions, aggregations, binary operators)."""
    # Strings first (they may hold braces, brackets, commas), then matchers, remembered by
    # position, then ranges and grouping clauses: what is left are names and operators.
    text = _STRING.sub('""', concrete(expr))
    matcher_sets: list[frozenset[str]] = []

    def keep_matchers(match: re.Match[str]) -> str:
        body = match.group(1)
        names = frozenset(
            m.group(1) for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)", body)
        )
        matcher_sets.append(names)
        return f"@{len(matcher_sets) - 1}@"

    text = _MATCHERS.sub(keep_matchers, text)
    text = _RANGE.sub("", text)
    grouping: set[str] = set()

    def drop_grouping(match: re.Match[str]) -> str:
        grouping.update(x.strip() for x in match.group(2).split(",") if x.strip())
        return " "

    text = _GROUPING.sub(drop_grouping, text)
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        assert depth >= 0, f"unbalanced parentheses in {expr!r}"
    assert depth == 0, f"unbalanced parentheses in {expr!r}"
    selectors = []
    for match in _IDENT.finditer(text):
        name = match.group(1)
        rest = text[match.end() :].lstrip()
        if rest.startswith("("):
            continue  # a function or an aggregation
        if name in PROMQL_FUNCTIONS_AND_KEYWORDS:
            continue
        labels: frozenset[str] = frozenset()
        marker = re.match(r"@(\d+)@", rest)
        if marker:
            labels = matcher_sets[int(marker.group(1))]
        selectors.append(Selector(name, labels))
    assert "{" not in text and "}" not in text, f"cannot read the matchers of {expr!r}"
    return Parsed(tuple(selectors), frozenset(grouping))


def problems_of(query: Query, exported: dict[str, Exported]) -> list[str]:
    """What is wrong with one query: unknown metrics, unknown labels, no metric at all."""
    parsed = parse(query.expr)
    found: list[str] = []
    if not parsed.selectors:
        found.append(f"{query.where}: no metric in {query.expr!r}")
    known_labels: set[str] = set(TARGET_LABELS)
    for selector in parsed.selectors:
        metric = exported.get(selector.metric)
        if metric is None:
            close = sorted(
                n for n in exported if n.split("_")[:2] == selector.metric.split("_")[:2]
            )
            found.append(
                f"{query.where}: metric {selector.metric!r} is not exported by the worker"
                + (f" (did you mean one of {close[:5]}?)" if close else "")
            )
            continue
        known_labels |= metric.labels
        unknown = selector.matcher_labels - metric.labels - TARGET_LABELS - {"__name__"}
        if unknown:
            found.append(
                f"{query.where}: {selector.metric} has no label(s) {sorted(unknown)} "
                f"(it has {sorted(metric.labels)})"
            )
    unknown_grouping = parsed.grouping_labels - known_labels
    if unknown_grouping and not any(p.startswith(query.where) for p in found):
        found.append(
            f"{query.where}: grouping by {sorted(unknown_grouping)}, which none of its metrics has"
        )
    return found


# -- tests --------------------------------------------------------------------------------------


def test_the_dashboards_exist_with_stable_uids() -> None:
    names = {p.name for p in dashboard_files()}
    assert names == set(UIDS), f"grafana/dashboards holds {sorted(names)}"
    for path in dashboard_files():
        dashboard = load_dashboard(path)
        assert dashboard["uid"] == UIDS[path.name]
        assert dashboard.get("id") is None, "a provisioned dashboard must not carry a db id"
        assert dashboard["title"].startswith("ctxpress")


@pytest.mark.parametrize("path", dashboard_files(), ids=lambda p: p.name)
def test_datasource_variable_and_units(path: Path) -> None:
    dashboard = load_dashboard(path)
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    ds = variables["datasource"]
    assert ds["type"] == "datasource" and ds["query"] == "prometheus"
    ids = [p["id"] for p in panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in panels(dashboard):
        assert "gridPos" in panel
        if panel["type"] == "row":
            continue
        title = panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}", f"{title}: fixed datasource"
        unit = panel["fieldConfig"]["defaults"].get("unit")
        assert unit in UNITS, f"{path.name}: panel {title!r} has unit {unit!r}"
        assert panel.get("description"), f"{title}: say what the panel shows"
        assert panel["targets"], f"{title}: no query"
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", f"{title}: fixed datasource"
            assert target["expr"].strip()
        exprs = " ".join(t["expr"] for t in panel["targets"])
        if "_seconds" in exprs and "histogram_quantile" in exprs:
            assert unit == "s", f"{title}: a latency in seconds needs unit s"
        if exprs.lstrip().startswith("100 *"):
            assert unit == "percent", f"{title}: a percentage needs unit percent"


def test_engine_dashboard_has_mode_and_engine_variables() -> None:
    dashboard = load_dashboard(DASHBOARDS / "ctxpress-engine.json")
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    exported = exported_metrics()
    for name in ("mode", "engine"):
        var = variables[name]
        assert var["type"] == "query" and var["includeAll"] and var["multi"]
        assert var["datasource"]["uid"] == "${datasource}"
        match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", var["query"]["query"])
        assert match, f"${name} must be a label_values(metric, label) query"
        selector, label = match.groups()
        metric = selector.split("{")[0]
        assert metric in exported and label in exported[metric].labels, var["query"]
    used = " ".join(q.expr for q in dashboard_queries([DASHBOARDS / "ctxpress-engine.json"]))
    assert "$mode" in used and "$engine" in used


def test_overview_covers_what_operators_watch() -> None:
    used = " ".join(q.expr for q in dashboard_queries([DASHBOARDS / "ctxpress-overview.json"]))
    for metric in (
        "ctxpress_record_tokens_before_total",  # tokens saved, savings %
        "ctxpress_record_tokens_after_total",
        "ctxpress_engine_tokens_before_total",  # savings by engine
        "ctxpress_records_in_total",  # records in
        "ctxpress_records_out_total",  # records out
        "ctxpress_dead_letters_total",  # dead letters by reason
        "ctxpress_gate_rejections_total",  # gate rejections by engine and kind
        "ctxpress_record_latency_seconds_bucket",  # p50/p95/p99
        "ctxpress_batch_size_bucket",  # batch sizes
        "faust_topic_partition_end_offset",  # consumer lag
        "faust_topic_partition_offset_commited",
        "faust_rebalance_done_latency_count",  # rebalances
        "ctxpress_worker_info",  # worker count
    ):
        assert metric in used, f"the overview does not show {metric}"
    for quantile in ("0.5", "0.95", "0.99"):
        assert f"histogram_quantile({quantile}, sum by (le) (rate(ctxpress_record_latency" in used


def test_every_query_names_only_exported_metrics_and_labels() -> None:
    exported = exported_metrics()
    queries = dashboard_queries()
    assert len(queries) > 30
    problems = [p for q in queries for p in problems_of(q, exported)]
    assert not problems, "\n".join(problems)


def test_the_check_fails_for_a_metric_the_worker_does_not_export() -> None:
    exported = exported_metrics()

    def check(expr: str) -> list[str]:
        return problems_of(Query("x.json", "p", "A", expr, False), exported)

    assert check("sum(rate(ctxpress_records_in_total[$__rate_interval]))") == []
    assert check("sum(rate(ctxpress_records_in[5m]))")  # counter without _total
    assert check("sum(rate(ctxpress_tokens_saved_total[5m]))")
    assert check('sum(rate(faust_messages_received_total{topic="x"}[5m]))')  # no such label
    assert check("sum by (engine) (rate(ctxpress_records_in_total[5m]))")  # no such label
    assert check("histogram_quantile(0.9, sum by (le) (rate(ctxpress_batch_size[5m])))")
    assert check("myapp_total_rebalances")  # Faust's sensor under another prefix
    assert check("42") != []  # no metric at all


def test_a_dashboard_with_an_unknown_metric_fails(tmp_path: Path) -> None:
    dashboard = load_dashboard(DASHBOARDS / "ctxpress-overview.json")
    target = next(p for p in panels(dashboard) if p["type"] != "row")["targets"][0]
    target["expr"] = target["expr"].replace("ctxpress_record_tokens_before_total", "ctxpress_nope")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dashboard))
    problems = [p for q in dashboard_queries([bad]) for p in problems_of(q, exported_metrics())]
    assert any("ctxpress_nope" in p for p in problems)


def test_parse_reads_selectors_matchers_and_grouping() -> None:
    parsed = parse(
        'max by (topic, partition) (faust_topic_partition_end_offset{topic=~".+(a|b)$"})'
        " - ignoring(x) sum without (y) (rate(ctxpress_records_in_total[$__rate_interval] offset 5m))"
        ' > 0 and on() vector(1) unless ctxpress_worker_info{guarantee!="x, y}"}'
    )
    assert [s.metric for s in parsed.selectors] == [
        "faust_topic_partition_end_offset",
        "ctxpress_records_in_total",
        "ctxpress_worker_info",
    ]
    assert parsed.selectors[0].matcher_labels == {"topic"}
    assert parsed.selectors[2].matcher_labels == {"guarantee"}
    assert parsed.grouping_labels == {"topic", "partition", "x", "y"}


def test_concrete_replaces_every_variable() -> None:
    expr = 'rate(m{mode=~"$mode", engine=~"${engine}"}[$__rate_interval]) / increase(m[$__range])'
    assert concrete(expr, {"mode": "standard"}) == (
        'rate(m{mode=~"standard", engine=~".*"}[5m]) / increase(m[1h])'
    )


def test_provisioning_finds_the_dashboards() -> None:
    provider = yaml.safe_load((PROVISIONING / "dashboards" / "ctxpress.yaml").read_text())
    assert provider["apiVersion"] == 1
    (entry,) = provider["providers"]
    assert entry["type"] == "file" and entry["options"]["path"]
    datasources = yaml.safe_load((PROVISIONING / "datasources" / "prometheus.yaml").read_text())
    assert datasources["apiVersion"] == 1
    (ds,) = datasources["datasources"]
    assert ds["type"] == "prometheus" and ds["uid"] and ds["url"].startswith("http")
