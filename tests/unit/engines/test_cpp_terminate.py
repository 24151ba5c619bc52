"""An uncaught C++ exception: ``terminate called after throwing an instance of
'std::out_of_range'`` and the ``  what():  map::at`` line under it are facts of the gate (a
crash headline and its message; neither holds an error word).  The output is a real
``ctest --output-on-failure`` of a g++-built project written here, one of whose 40 tests
throws (skipped without cmake, ctest or g++)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

CMAKE = """\
cmake_minimum_required(VERSION 3.16)
project(calc CXX)
enable_testing()
add_executable(t_main t.cpp)
foreach(i RANGE 1 40)
  add_test(NAME calc_case_${i} COMMAND t_main ${i})
endforeach()
"""

MAIN = """\
#include <iostream>
#include <map>
#include <string>
#include <cstdlib>
int main(int c, char **v) {
    int i = std::atoi(v[1]);
    std::map<std::string, int> rates{{"EUR", 1}};
    std::cout << "case " << i << " start" << std::endl;
    if (i == 7) return rates.at("CHF");
    std::cout << "case " << i << " ok" << std::endl;
    return 0;
}
"""


def _ctest(tmp_path: Path) -> str:
    if not all(shutil.which(tool) for tool in ("cmake", "ctest", "g++")):
        pytest.skip("no cmake, ctest or g++ on this machine")
    (tmp_path / "CMakeLists.txt").write_text(CMAKE)
    (tmp_path / "t.cpp").write_text(MAIN)
    for args in (["cmake", "-S", ".", "-B", "build"], ["cmake", "--build", "build"]):
        subprocess.run(args, cwd=tmp_path, check=True, capture_output=True, timeout=600)
    run = subprocess.run(
        ["ctest", "--output-on-failure"],
        cwd=tmp_path / "build",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    return run.stdout


def test_an_uncaught_exception_and_its_what_line_are_facts(tmp_path: Path) -> None:
    text = _ctest(tmp_path)
    head = "terminate called after throwing an instance of 'std::out_of_range'"
    what = "what():  map::at"
    assert head in text and what in text
    facts = critical_lines(text, "tool_result", "ctest --output-on-failure")
    assert ("error_line", head) in facts
    assert ("error_detail", what) in facts
    for mode in ("standard", "aggressive"):
        out, saved = compress_soundly(tool_output(text, "ctest --output-on-failure"), mode)
        assert head in out and what in out
        assert "98% tests passed, 1 tests failed out of 40" in out
        assert saved > 0.5
