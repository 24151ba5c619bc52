"""``pytest -q``: no ``PASSED``/``FAILED`` line per test, only the failure sections, the short
test summary (``FAILED tests/x.py::test_y - ...``) and a bare ``3 failed, 8 passed in 0.55s``.
The lines still make a test report: the source context of each failure is stashed, its
``>`` and ``E`` lines, locations and the summary stay.  The output is a real pytest run's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.sound import compress_soundly, tool_output
from workers.engines.toolfilter.blocks import analyse

TESTS = """\
import pytest


def lookup(stock, sku):
    level = stock[sku]
    return level


@pytest.fixture
def stock():
    return {"SKU-00017": 3, "SKU-00042": 12}


def test_known(stock):
    assert lookup(stock, "SKU-00017") == 3


def test_unknown(stock):
    assert lookup(stock, "SKU-99999") == 0


def test_total(stock):
    total = sum(stock.values())
    assert total == 16


def test_passes():
    assert True
"""


def _pytest_quiet(tmp_path: Path) -> str:
    (tmp_path / "test_stock.py").write_text(TESTS)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--tb=long",
            "-p",
            "no:cacheprovider",
            "test_stock.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    return run.stdout


def test_a_quiet_run_is_a_report(tmp_path: Path) -> None:
    text = _pytest_quiet(tmp_path)
    assert "FAILED test_stock.py::test_unknown - KeyError: 'SKU-99999'" in text
    structure = analyse(text.split("\n"), lambda i: False)
    assert "report" in structure.family
    lines = text.split("\n")
    dropped = {lines[i] for i in structure.drop}
    assert "    def test_unknown(stock):" in dropped  # source context of a failure
    for line in lines:
        if line.startswith(("E ", ">", "FAILED ")) or " failed, " in line:
            assert line not in dropped, line


def test_a_quiet_run_saves_and_keeps_every_failure(tmp_path: Path) -> None:
    text = _pytest_quiet(tmp_path)
    out, saved = compress_soundly(tool_output(text, "python -m pytest -q --tb=long"), "standard")
    for needle in (
        "E       KeyError: 'SKU-99999'",
        "E       assert 15 == 16",
        "FAILED test_stock.py::test_total - assert 15 == 16",
        "2 failed, 2 passed in",
    ):
        assert needle in out
    assert saved > 0.3
