"""cmake's configure output: the checks that failed stay, those that passed are counted.

``tests/data/holdout-build/cmake-configure.txt`` is ``cmake ..`` (cmake 3.25) of a project
written for this test on this machine: 30 include checks, 10 function checks, 5 type sizes,
three packages and a ``message(WARNING ...)``; ``zstd.h``, ``curl/curl.h`` and ``strlcpy`` are
not found.  Its ``-- `` lines used to read as a diff's removed lines (the git-diff filter's
``^[-+]`` signature), whose head and tail budget stashed the failed checks with the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.engines._filters import builtin_filters

CONFIGURE = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "cmake-configure.txt"
).read_text(encoding="utf-8")


def test_configure_output_is_cmake_not_a_diff() -> None:
    found = builtin_filters().detect(None, None, CONFIGURE)
    assert found.filter is not None and found.filter.name == "cmake"
    assert builtin_filters().detect("cmake ..", "bash", CONFIGURE).filter.name == "cmake"


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_failed_checks_stay_and_passed_ones_are_counted(mode: str) -> None:
    text, saved = compress_soundly(tool_output(CONFIGURE, "cmake .."), mode)
    for line in CONFIGURE.splitlines():
        if line.endswith(" - not found") or line.startswith(("-- Found ", "CMake Warning")):
            assert line in text
    assert "-- Looking for stdio.h - found" not in text
    assert "passed configure checks" in text
    assert saved > 0.65  # 0.48 as a diff, the failed checks out of sight
