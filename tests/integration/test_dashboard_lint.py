"""The Grafana dashboards pass dashboard-linter's rules (``lint --strict``: warnings fail too).

- Every dashboard in grafana/dashboards/ is clean under the rules of Grafana's dashboard-linter,
  checked by tests/integration/dashboard_lint.py (PromQL parsed by promql-parser); the failure
  lists the findings.
- Each rule fires on a dashboard broken in the way it guards against, so the clean result
  means something.
- Grafana's own Go linter, built by scripts/dashboard-linter.sh (pinned version, cached under
  .cache/tools/), runs with ``lint --strict`` on every dashboard where it can be built; where Go
  is missing or the Go module proxy does not serve it, that test skips with the reason.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration import dashboard_lint
from tests.integration.dashboard_lint import lint_dashboard, lint_files, lint_target

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = sorted((REPO / "grafana" / "dashboards").glob("*.json"))
LINTER = REPO / "scripts" / "dashboard-linter.sh"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "grafana" / "dashboards" / name).read_text())
    return data


def test_every_dashboard_passes_the_linter_rules() -> None:
    assert len(DASHBOARDS) == 2, DASHBOARDS
    findings = lint_files(DASHBOARDS)
    assert findings == [], "dashboard-linter rules:\n" + "\n".join(map(str, findings))


def test_the_command_line_reports_and_fails(tmp_path: Path) -> None:
    lines: list[str] = []
    assert dashboard_lint.main([str(p) for p in DASHBOARDS], echo=lines.append) == 0
    assert lines == ["2 dashboards, 0 findings"]
    broken = load("ctxpress-engine.json")
    broken["editable"] = True
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    lines.clear()
    assert dashboard_lint.main([str(path)], echo=lines.append) == 1
    assert lines[0].startswith("[error] uneditable-dashboard: broken.json (ctxpress / engines)")
    assert lines[-1] == "1 dashboards, 1 findings"


def test_job_and_instance_variables_filter_every_query() -> None:
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text())
        variables = {v["name"]: v for v in dashboard["templating"]["list"]}
        assert variables["job"]["query"]["query"] == "label_values(ctxpress_worker_info, job)"
        assert (
            variables["instance"]["query"]["query"]
            == 'label_values(ctxpress_worker_info{job=~"$job"}, instance)'
        )
        assert dashboard["editable"] is False
        exprs = [t["expr"] for p in dashboard_lint.panels(dashboard) for t in p.get("targets", [])]
        assert exprs and all('job=~"$job", instance=~"$instance"' in e for e in exprs), path.name


# -- each rule fires on a dashboard that breaks it --------------------------------------------------


def _var(d: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(v for v in d["templating"]["list"] if v["name"] == name)
    return found


def _panel(d: dict[str, Any], title: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in dashboard_lint.panels(d) if p.get("title") == title)
    return found


def _drop_var(name: str) -> Callable[[dict[str, Any]], None]:
    def go(d: dict[str, Any]) -> None:
        d["templating"]["list"] = [v for v in d["templating"]["list"] if v["name"] != name]

    return go


def _set_expr(expr: str) -> Callable[[dict[str, Any]], None]:
    def go(d: dict[str, Any]) -> None:
        _panel(d, "Gate rejections (time range)")["targets"][0]["expr"] = expr

    return go


SEL = '{job=~"$job", instance=~"$instance"}'
BREAKAGES: dict[str, tuple[Callable[[dict[str, Any]], None], str, str]] = {
    "editable": (lambda d: d.update(editable=True), "uneditable-dashboard", "error"),
    "no job variable": (_drop_var("job"), "template-job-rule", "error"),
    "no instance variable": (_drop_var("instance"), "template-instance-rule", "error"),
    "job not multi": (lambda d: _var(d, "job").update(multi=False), "template-job-rule", "error"),
    "instance all value": (
        lambda d: _var(d, "instance").update(allValue=".*"),
        "template-instance-rule",
        "error",
    ),
    "job label": (lambda d: _var(d, "job").update(label="job"), "template-job-rule", "warning"),
    "datasource label": (
        lambda d: _var(d, "datasource").update(label="Prometheus"),
        "template-datasource-rule",
        "warning",
    ),
    # the panels' ${datasource} then names no variable: they are reported too
    "no datasource variable": (
        _drop_var("datasource"),
        "template-datasource-rule panel-datasource-rule",
        "error",
    ),
    "variable refresh": (
        lambda d: _var(d, "mode").update(refresh=1),
        "template-on-time-change-reload",
        "error",
    ),
    "variable query": (
        lambda d: _var(d, "engine")["query"].update(
            query="label_values(ctxpress_engine_runs_total{, engine)"
        ),
        "template-label-promql-rule",
        "error",
    ),
    "fixed datasource": (
        lambda d: _panel(d, "Gate rejections / s by kind").update(
            datasource={"type": "prometheus", "uid": "P1"}
        ),
        "panel-datasource-rule",
        "error",
    ),
    "no description": (
        lambda d: _panel(d, "Gate rejections / s by kind").update(description=""),
        "panel-title-description-rule",
        "error",
    ),
    "no unit": (
        lambda d: _panel(d, "Gate rejections / s by kind")["fieldConfig"]["defaults"].pop("unit"),
        "panel-units-rule",
        "error",
    ),
    "unknown unit": (
        lambda d: _panel(d, "Gate rejections (time range)")["fieldConfig"]["defaults"].update(
            unit="tokens"
        ),
        "panel-units-rule",
        "error",
    ),
    "no targets": (
        lambda d: _panel(d, "Gate rejections / s by kind").pop("targets"),
        "panel-no-targets-rule",
        "error",
    ),
    "invalid promql": (
        _set_expr("sum(rate(x" + SEL + "[$__rate_interval])"),
        "target-promql-rule",
        "error",
    ),
    "fixed rate range": (
        _set_expr("sum(rate(ctxpress_gate_rejections_total" + SEL + "[5m]))"),
        "target-rate-interval-rule",
        "error",
    ),
    "no job matcher": (
        _set_expr('sum(increase(ctxpress_gate_rejections_total{instance=~"$instance"}[$__range]))'),
        "target-job-rule",
        "error",
    ),
    "instance matcher not a regexp": (
        _set_expr(
            'sum(increase(ctxpress_gate_rejections_total{job=~"$job", instance="$instance"}[$__range]))'
        ),
        "target-instance-rule",
        "error",
    ),
    "raw counter": (
        _set_expr("sum(ctxpress_gate_rejections_total" + SEL + ")"),
        "target-counter-agg-rule",
        "error",
    ),
    "counter in max_over_time": (
        _set_expr("max(max_over_time(ctxpress_gate_rejections_total" + SEL + "[$__range]))"),
        "target-counter-agg-rule",
        "error",
    ),
}


@pytest.mark.parametrize("what", sorted(BREAKAGES))
def test_each_rule_fires_on_a_broken_dashboard(what: str) -> None:
    break_it, rule, severity = BREAKAGES[what]
    dashboard = copy.deepcopy(load("ctxpress-engine.json"))
    assert lint_dashboard(dashboard) == []
    break_it(dashboard)
    findings = lint_dashboard(dashboard)
    assert findings, f"{what}: no finding"
    assert {(f.rule, f.severity) for f in findings} == {(r, severity) for r in rule.split()}, (
        "\n".join(map(str, findings))
    )


def test_target_rules_accept_what_grafana_users_write() -> None:
    assert lint_target("sum(irate(a_total" + SEL + "[$__rate_interval]))") == []
    assert lint_target("sum(increase(a_total" + SEL + "[1h]))") == []  # increase: any range
    assert (
        lint_target(
            "histogram_quantile(0.9, sum by (le) (rate(h_bucket" + SEL + "[${__rate_interval}])))"
        )
        == []
    )
    assert lint_target("count(up" + SEL + ") or vector(0)") == []  # a gauge needs no rate
    assert [
        r for r, _ in lint_target('sum(rate(a_total{job=~"$job", instance=~"$instance"}[1m]))')
    ] == ["target-rate-interval-rule"]


# -- Grafana's own linter, where it can be built -----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_grafanas_dashboard_linter_passes(path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip(
            "Go is not installed: scripts/dashboard-linter.sh builds the linter with go install"
        )
    done = subprocess.run(
        ["bash", str(LINTER), "lint", "--strict", str(path)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=REPO,
    )
    if done.returncode == 69:  # the script's 'cannot build it here'
        pytest.skip(f"dashboard-linter could not be built here: {done.stderr.strip()[-400:]}")
    assert done.returncode == 0, (
        f"dashboard-linter lint --strict {path.name}:\n{done.stdout}\n{done.stderr}"
    )


def test_the_readme_command_passes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration.dashboard_lint"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "2 dashboards, 0 findings"
