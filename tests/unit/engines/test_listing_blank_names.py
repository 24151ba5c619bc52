"""A long listing's name that starts with blanks stays as ls wrote it.

ls writes one space after the date, then the name: ``12:00  notes`` is the
name `` notes``.  The view read any run of blanks as the separator and showed
``notes``, a name the directory does not hold; such a row is now kept as
written.
"""

from __future__ import annotations

from workers.core.tokens import TokenCounter
from workers.engines.listing import compact_listing

ROWS = [f"-rw-r--r--  1 ann staff  {100 + i:>5} Jan  3 12:00 file_{i}.txt" for i in range(20)]


def _view(rows: list[str]) -> str:
    text = "\n".join(["total 80", *rows]) + "\n"
    found = compact_listing(text, TokenCounter(), "ls", "ls -la")
    assert found is not None and found.kind == "long"
    return found.text.split("\n<<cx:view>>")[0]


def test_a_name_with_a_leading_blank_is_kept_as_written() -> None:
    odd = "-rw-r--r--  1 ann staff    512 Jan  3 12:00  notes.txt"
    view = _view([*ROWS[:10], odd, *ROWS[10:]])
    assert odd in view.split("\n")
    assert "notes.txt 512" not in view  # not the name without its blank


def test_plain_names_still_get_the_compact_form() -> None:
    view = _view(ROWS)
    assert "file_3.txt 103" in view.split("\n")
    assert not any(line.startswith("-rw-r--r--") for line in view.split("\n"))
