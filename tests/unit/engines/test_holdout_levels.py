"""Log levels that are not error words: java.util.logging's ``SEVERE:``, klog's level letter
(``E1203 07:02:11.958000 ...``, ``W1203 ...``) and zap's lower-case ``"level":"warn"``.
Each output is a captured run of a seeded program (a JUL feed importer in Java, a reconcile
loop in Go writing klog lines or zap's production JSON); every distinct error line of it
stays in sight in every lossy mode, and one line of each warning's shape does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines, is_error_line, line_shape

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
KUBECTL = "kubectl logs -n shop deploy/order-controller"
CASES = {
    "jul-feed": "tail -n 61 logs/feed-import.log",
    "klog-controller": KUBECTL,
    "zap-json-controller": KUBECTL,
}


def _text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text(encoding="utf-8")


def _errors(name: str) -> list[str]:
    lines = _text(name).splitlines()
    if name == "jul-feed":
        return [line for line in lines if line.startswith("SEVERE: ")]
    if name == "klog-controller":
        return [line for line in lines if line.startswith("E1203 ")]
    return [line for line in lines if json.loads(line)["level"] == "error"]


def _warnings(name: str) -> list[str]:
    lines = _text(name).splitlines()
    if name == "jul-feed":
        return [line for line in lines if line.startswith("WARNING: ")]
    if name == "klog-controller":
        return [line for line in lines if line.startswith("W1203 ")]
    return [line for line in lines if json.loads(line)["level"] == "warn"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_levels_are_error_lines(name: str) -> None:
    errors, warnings = _errors(name), _warnings(name)
    assert errors and warnings
    assert all(is_error_line(line) for line in errors + warnings)
    facts = critical_lines(_text(name), "tool_result", CASES[name])
    assert all(("error_line", line) in facts for line in errors)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_error_and_each_warning_shape_stays_visible(name: str, mode: str) -> None:
    text, _ = compress_soundly(tool_output(_text(name), CASES[name]), mode)
    visible = set(text.splitlines())
    for line in _errors(name):
        assert line in visible, line
    for shape in {line_shape(line) for line in _warnings(name)}:
        assert any(line_shape(line) == shape for line in visible), shape
