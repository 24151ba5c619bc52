"""gcc's ``f.c: In function 'g':`` above a warning is decoration; above an error it stays.

Captured on this machine (gcc 12, ``-Wall -Wextra``) from files written for these tests:
``tests/data/holdout-build/gcc-wall.txt`` is ``gcc -Wall -Wextra -fsyntax-only src/pixel.c
src/rotate.c src/palette.c`` (47 warnings of seven kinds, one function each);
``gcc-error-and-warnings.txt`` is ``gcc -Wall -Wextra -c queue.c`` (four warnings and an
error, in three functions); ``make-gcc-warnings.txt`` is ``make`` of a CMake build of the three
files of the first, where a ``note: here`` and its code frame sit right above make's next
``[ 50%] Building C object`` line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-build"
WALL = (DATA / "gcc-wall.txt").read_text(encoding="utf-8")
MIXED = (DATA / "gcc-error-and-warnings.txt").read_text(encoding="utf-8")
MAKE = (DATA / "make-gcc-warnings.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_function_context_of_warnings_goes_into_the_view(mode: str) -> None:
    command = "gcc -Wall -Wextra -fsyntax-only src/pixel.c src/rotate.c src/palette.c"
    text, saved = compress_soundly(tool_output(WALL, command), mode)
    assert ": In function " not in text
    assert "function context lines" in text  # the view's note counts them
    assert "src/pixel.c:7:23: warning: comparison of integer expressions" in text
    assert saved > 0.58  # 0.49 with them


def test_function_context_of_an_error_stays() -> None:
    text, _ = compress_soundly(tool_output(MIXED, "gcc -Wall -Wextra -c queue.c"), "standard")
    lines = text.splitlines()
    at = lines.index("queue.c:12:13: error: ‘struct queue’ has no member named ‘size’")
    assert lines[at - 1] == "queue.c: In function ‘queue_push’:"
    assert "queue.c: In function ‘queue_find’:" not in text
    assert "queue.c: In function ‘queue_dump’:" not in text
    for line in MIXED.splitlines():
        if ": warning: " in line or ": error: " in line:
            assert line in text


def test_a_code_frame_goes_and_the_build_step_under_it_stays() -> None:
    text, saved = compress_soundly(tool_output(MAKE, "make"), "standard")
    assert "case 2: x += 2; break;" not in text  # the note's code frame
    assert "[ 50%] Building C object CMakeFiles/img.dir/src/rotate.c.o" in text
    assert "/work/holdout-a/proj/imgmini/src/pixel.c:68:5: note: here" in text
    assert saved > 0.5


def test_a_files_repeats_list_each_place_as_written() -> None:
    """Each place as the compiler wrote it (``src/pixel.c:21:44``): one note per file, and
    a place is found by what it says (the file once, then ``21:44``, was not)."""
    command = "gcc -Wall -Wextra -fsyntax-only src/pixel.c src/rotate.c src/palette.c"
    text, _ = compress_soundly(tool_output(WALL, command), "standard")
    notes = [line for line in text.splitlines() if line.startswith("… ")]
    assert "… warning -Wunused-parameter 1 more time at src/pixel.c:21:44; warning " in notes[0]
    for note in notes:
        places = re.findall(r" (\S+):\d+:\d+", note)
        assert places and len(set(places)) == 1  # one file's repeats per note
