"""The rules of Grafana's dashboard-linter (github.com/grafana/dashboard-linter), checked in Python.

Grafana's linter is a Go program; the Go module proxy this project can reach does not serve it
(every version asked for was refused: see scripts/dashboard-linter.sh, which builds it where it
is served, and tests/integration/test_dashboard_lint.py, which runs it then). This module checks
the same rules, under the same names and with the linter's ``--strict`` meaning (warnings fail
too), so the dashboards pass the linter's checks on every machine:

- ``template-datasource-rule``: one ``datasource`` variable of type datasource, query
  ``prometheus``, labelled ``Data source``;
- ``template-job-rule``, ``template-instance-rule``: ``job`` and ``instance`` query variables on
  ``${datasource}``, labelled ``Job`` and ``Instance``, multi-select, All value ``.+``;
- ``template-label-promql-rule``: a ``label_values(selector, label)`` variable's selector is
  valid PromQL;
- ``template-on-time-change-reload``: query variables refresh on time-range change (2);
- ``panel-datasource-rule``: every query panel uses the templated data source;
- ``panel-title-description-rule``: every query panel has a title and a description;
- ``panel-units-rule``: every stat/graph/table/timeseries/gauge panel has a Grafana unit;
- ``panel-no-targets-rule``: every such panel has a query;
- ``target-promql-rule``: every query is valid PromQL once Grafana's variables are expanded;
- ``target-rate-interval-rule``: ``rate``/``irate`` ranges are ``$__rate_interval``;
- ``target-job-rule``, ``target-instance-rule``: every selector has ``job=~"$job"`` and
  ``instance=~"$instance"``;
- ``target-counter-agg-rule``: a counter (``*_total``) appears only as the range of ``rate``,
  ``irate`` or ``increase``;
- ``uneditable-dashboard``: ``editable: false``.

PromQL is parsed by ``promql_parser`` (PyPI promql-parser: a real PromQL parser, not a regular
expression). Grafana's variables are replaced the way the Go linter does it: built-in intervals
by a magic duration, the others by a placeholder name, and not inside quoted strings, where a
variable is a matcher's value.

Run it: ``.venv/bin/python -m tests.integration.dashboard_lint grafana/dashboards/*.json``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import promql_parser

#: The durations the variables stand for while parsing (no dashboard writes these by hand).
RATE_INTERVAL = "3h7m41s"
RANGES = {
    "__rate_interval": RATE_INTERVAL,
    "__interval": "3h7m42s",
    "__interval_ms": "3h7m43s",
    "__range": "3h7m44s",
    "__range_s": "3h7m45s",
    "__range_ms": "3h7m46s",
}
QUERY_PANELS = {"stat", "singlestat", "graph", "table", "timeseries", "gauge"}
DATASOURCE_PANELS = {"singlestat", "graph", "table", "timeseries"}
COUNTER_FUNCTIONS = {"rate", "irate", "increase"}
#: Grafana's unit ids (its valueFormats categories), as the linter lists them.
VALID_UNITS = frozenset(
    """none string short percent percentunit humidity dB hex0x hex sci locale pixel accMS2 accFS2
    accG degree radian grad arcmin arcsec areaM2 areaF2 areaMI2 flops mflops gflops tflops pflops
    eflops zflops yflops ppm conppb conngm3 conngNm3 conμgm3 conμgNm3 conmgm3 conmgNm3 congm3
    congNm3 conmgdL conmmolL currencyUSD currencyGBP currencyEUR currencyJPY currencyRUB
    currencyUAH currencyBRL currencyDKK currencyISK currencyNOK currencySEK currencyCZK
    currencyCHF currencyPLN currencyBTC currencymBTC currencyμBTC currencyZAR currencyINR
    currencyKRW currencyIDR currencyPHP currencyVND bytes decbytes bits decbits kbytes deckbytes
    mbytes decmbytes gbytes decgbytes tbytes dectbytes pbytes decpbytes pps binBps Bps binbps bps
    KiBs Kibits KBs Kbits MiBs Mibits MBs Mbits GiBs Gibits GBs Gbits TiBs Tibits TBs Tbits PiBs
    Pibits PBs Pbits dateTimeAsIso dateTimeAsIsoNoDateIfToday dateTimeAsUS
    dateTimeAsUSNoDateIfToday dateTimeAsLocal dateTimeAsLocalNoDateIfToday dateTimeAsSystem
    dateTimeFromNow watt kwatt megwatt gwatt mwatt Wm2 voltamp kvoltamp voltampreact
    kvoltampreact watth watthperkg kwatth kwattm amph kamph mamph joule ev amp kamp mamp volt
    kvolt mvolt dBm ohm kohm Mohm farad µfarad nfarad pfarad ffarad henry mhenry µhenry lumens
    flowgpm flowcms flowcfs flowcfm litreh flowlpm flowmlpm lux forceNm forcekNm forceN forcekN
    Hs KHs MHs GHs THs PHs EHs massmg massg masslb masskg masst lengthmm lengthin lengthft lengthm
    lengthkm lengthmi pressurembar pressurebar pressurekbar pressurepa pressurehpa pressurekpa
    pressurehg pressurepsi radbq radci radgy radrad radsv radmsv radusv radrem radexpckg radr
    radsvh radmsvh radusvh rotrpm rothz rotrads rotdegs celsius fahrenheit kelvin hertz ns µs ms s
    m h d dtdurationms dtdurations dthms dtdhms timeticks clockms clocks cps ops reqps rps wps
    iops cpm opm rpm wpm velocityms velocitykmh velocitymph velocityknot mlitre litre m3 Nm3 dm3
    gallons bool bool_yes_no bool_on_off""".split()  # noqa: SIM905
)

_VARIABLE = re.compile(r'"\$\w+|\$(\w+)|"\$\{[^}]+\}|\$\{([^}:]+)(?::[^}]*)?\}|\[\[([^\[\]]+)\]\]')


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: str  # "error" or "warning"
    dashboard: str
    message: str

    def __str__(self) -> str:
        return f"[{self.severity}] {self.rule}: {self.dashboard}: {self.message}"


def expand(expr: str) -> str:
    """The query with Grafana's variables replaced, outside quoted strings: built-in intervals
    by their magic durations, any other variable by a placeholder identifier."""

    def sub(match: re.Match[str]) -> str:
        if match.group(0).startswith('"'):
            return match.group(0)  # a matcher's value: a string to PromQL, left alone
        name = match.group(1) or match.group(2) or match.group(3)
        return RANGES.get(name, f"bgludgvy_{name}")

    return _VARIABLE.sub(sub, expr)


def parse_promql(expr: str) -> Any:
    """The parsed expression, or ValueError with the parser's message."""
    try:
        return promql_parser.parse(expand(expr))
    except Exception as err:  # promql_parser raises plain ValueError / RuntimeError
        raise ValueError(f"invalid PromQL {expr!r}: {err}") from err


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, promql_parser.AggregateExpr):
        yield node.expr
        if node.param is not None:
            yield node.param
    elif isinstance(node, promql_parser.BinaryExpr):
        yield node.lhs
        yield node.rhs
    elif isinstance(node, promql_parser.Call):
        yield from node.args
    elif isinstance(node, promql_parser.MatrixSelector):
        yield node.vector_selector
    elif isinstance(
        node, promql_parser.SubqueryExpr | promql_parser.ParenExpr | promql_parser.UnaryExpr
    ):
        yield node.expr


def walk(node: Any, parents: tuple[Any, ...] = ()) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Every node with its ancestors, nearest last (parentheses count as a node, as in Go)."""
    yield node, parents
    for child in _children(node):
        yield from walk(child, (*parents, node))


def _selector_name(selector: Any) -> str:
    name = selector.name
    if name:
        return str(name)
    for m in selector.matchers.matchers:
        if m.name == "__name__":
            return str(m.value)
    return ""


def _matcher_op(m: Any) -> str:
    return {
        "MatchOp.Equal": "=",
        "MatchOp.NotEqual": "!=",
        "MatchOp.Re": "=~",
        "MatchOp.NotRe": "!~",
    }.get(str(m.op), str(m.op))


# -- the rules ---------------------------------------------------------------------------------


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def _variables(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    return list(dashboard.get("templating", {}).get("list", []))


def _ds_uid(obj: dict[str, Any]) -> str:
    ds = obj.get("datasource")
    if isinstance(ds, dict):
        return str(ds.get("uid", ""))
    return str(ds or "")


def lint_dashboard(dashboard: dict[str, Any]) -> list[Finding]:
    title = str(dashboard.get("title", "?"))
    out: list[Finding] = []

    def add(rule: str, message: str, severity: str = "error") -> None:
        out.append(Finding(rule, severity, title, message))

    variables = _variables(dashboard)
    datasources = [v for v in variables if v.get("type") == "datasource"]
    prometheus = bool(datasources) and datasources[0].get("query") == "prometheus"

    # template-datasource-rule
    if not datasources:
        add("template-datasource-rule", "does not have a templated data source")
    for ds in datasources:
        query = str(ds.get("query", ""))
        names = {f"{query.lower()}_datasource"} | (
            {"datasource"} if len(datasources) == 1 else set()
        )
        labels = {f"{query.title()} data source"} | (
            {"Data source"} if len(datasources) == 1 else set()
        )
        if ds.get("name") not in names:
            add(
                "template-datasource-rule",
                f"data source variable {ds.get('name')!r}: name it one of {sorted(names)}",
            )
        elif ds.get("label") not in labels:
            add(
                "template-datasource-rule",
                f"data source variable labelled {ds.get('label')!r}: label it one of {sorted(labels)}",
                "warning",
            )

    # template-job-rule, template-instance-rule
    if prometheus:
        for name in ("job", "instance"):
            rule = f"template-{name}-rule"
            var = next((v for v in variables if v.get("name") == name), None)
            if var is None:
                add(rule, f"is missing the {name} template")
                continue
            if _ds_uid(var) not in {"$datasource", "${datasource}"}:
                add(
                    rule,
                    f"{name} template should use datasource '$datasource', is {_ds_uid(var)!r}",
                )
            if var.get("type") != "query":
                add(rule, f"{name} template should be a Prometheus query, is {var.get('type')!r}")
            if var.get("label") != name.title():
                add(
                    rule,
                    f"{name} template should be labelled {name.title()!r}, is {var.get('label')!r}",
                    "warning",
                )
            if not var.get("multi"):
                add(rule, f"{name} template should be a multi select")
            if var.get("allValue") != ".+":
                add(rule, f"{name} template allValue should be '.+', is {var.get('allValue')!r}")

    for var in variables:
        if var.get("type") != "query":
            continue
        # template-on-time-change-reload
        if var.get("refresh") != 2:
            add(
                "template-on-time-change-reload",
                f"variable {var.get('name')!r} should refresh on time range change (2), is {var.get('refresh')!r}",
            )
        # template-label-promql-rule
        query = var.get("query")
        text = str(query.get("query", "") if isinstance(query, dict) else query or "")
        match = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", text)
        if match:
            try:
                parse_promql(match.group(1))
            except ValueError as err:
                add("template-label-promql-rule", f"variable {var.get('name')!r}: {err}")

    names = [str(v.get("name")) for v in datasources]
    ds_uids = {f"${n}" for n in names} | {"${" + n + "}" for n in names}
    for panel in panels(dashboard):
        kind = panel.get("type")
        ptitle = str(panel.get("title", ""))
        where = f"panel {ptitle!r}"
        if kind in DATASOURCE_PANELS and _ds_uid(panel) not in ds_uids:
            add(
                "panel-datasource-rule",
                f"{where} does not use a templated datasource, uses {_ds_uid(panel)!r}",
            )
        if kind not in QUERY_PANELS:
            continue
        if not ptitle.strip() or not str(panel.get("description", "")).strip():
            add("panel-title-description-rule", f"{where} has a missing title or description")
        config = panel.get("fieldConfig", {})
        unit = str(config.get("defaults", {}).get("unit", ""))
        for override in config.get("overrides", []):
            for prop in override.get("properties", []):
                if prop.get("id") == "unit":
                    unit = str(prop.get("value", ""))
        if unit not in VALID_UNITS:
            add("panel-units-rule", f"{where} has no or invalid units defined: {unit!r}")
        targets = panel.get("targets")
        if targets is None:
            add("panel-no-targets-rule", f"{where} has no targets")
            continue
        if not prometheus:
            continue
        for idx, target in enumerate(targets):
            out.extend(
                Finding(rule, "error", title, f"{where} target {idx}: {message}")
                for rule, message in lint_target(str(target.get("expr", "")))
            )
    # uneditable-dashboard
    if dashboard.get("editable", True):
        add("uneditable-dashboard", "is editable, it should be set to 'editable: false'")
    return out


def lint_target(expr: str) -> list[tuple[str, str]]:
    """(rule, message) for one Prometheus query."""
    try:
        tree = parse_promql(expr)
    except ValueError as err:
        return [("target-promql-rule", str(err))]
    found: list[tuple[str, str]] = []
    rate_interval = promql_parser.parse_duration(RATE_INTERVAL)
    reported: set[str] = set()
    for node, parents in walk(tree):
        if isinstance(node, promql_parser.MatrixSelector) and node.range != rate_interval:
            parent = parents[-1] if parents else None
            if isinstance(parent, promql_parser.Call) and parent.func.name in {"rate", "irate"}:
                found.append(
                    ("target-rate-interval-rule", f"{expr!r}: should use $__rate_interval")
                )
        if not isinstance(node, promql_parser.VectorSelector):
            continue
        name = _selector_name(node)
        for label in ("job", "instance"):
            rule = f"target-{label}-rule"
            if rule in reported:
                continue
            mine = [m for m in node.matchers.matchers if m.name == label]
            if not any(_matcher_op(m) == "=~" and m.value == f"${label}" for m in mine):
                got = ", ".join(f"{m.name}{_matcher_op(m)}{m.value!r}" for m in mine) or "none"
                found.append((rule, f'{expr!r}: {name} needs {label}=~"${label}" (has {got})'))
                reported.add(rule)
        if name.endswith("_total"):
            ok = (
                len(parents) >= 2
                and isinstance(parents[-1], promql_parser.MatrixSelector)
                and isinstance(parents[-2], promql_parser.Call)
                and parents[-2].func.name in COUNTER_FUNCTIONS
            )
            if not ok:
                found.append(
                    (
                        "target-counter-agg-rule",
                        f"{expr!r}: counter metric {name!r} is not aggregated with rate, irate, or increase",
                    )
                )
    return found


def lint_files(paths: list[Path]) -> list[Finding]:
    out: list[Finding] = []
    for path in paths:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
        out.extend(
            Finding(f.rule, f.severity, f"{path.name} ({f.dashboard})", f.message)
            for f in lint_dashboard(dashboard)
        )
    return out


def main(argv: list[str] | None = None, *, echo: Callable[[str], None] = print) -> int:
    """Lint the dashboards given (default: grafana/dashboards/*.json); exit 1 on any finding
    (``--strict``: warnings count)."""
    args = argv if argv is not None else sys.argv[1:]
    paths = [Path(a) for a in args] or sorted(
        (Path(__file__).resolve().parents[2] / "grafana" / "dashboards").glob("*.json")
    )
    findings = lint_files(paths)
    for finding in findings:
        echo(str(finding))
    echo(f"{len(paths)} dashboards, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
