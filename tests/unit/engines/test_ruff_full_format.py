"""ruff's full output format as diagnostics: the ``CODE message`` headline and its ``-->``
location stay, the code frame, the suggestion and the help line are stashed."""

from __future__ import annotations

from tests.support.sound import compress_soundly
from workers.engines.toolfilter.blocks import analyse

# ruff check --output-format=full, as ruff 0.x prints it
RUFF_FULL = """\
E401 [*] Multiple imports on one line
 --> src/inventory/report.py:3:1
  |
1 | \"\"\"Reorder reports.\"\"\"
2 |
3 | import os, sys
  | ^^^^^^^^^^^^^^
4 | import json
5 | from typing import Optional
  |
help: Split imports
  |
2 |
  - import os, sys
3 + import os
4 + import sys
5 | import json
  |

F401 [*] `json` imported but unused
 --> src/inventory/report.py:4:8
  |
3 | import os, sys
4 | import json
  |        ^^^^
5 | from typing import Optional
  |
help: Remove unused import: `json`

UP045 [*] Use `X | None` for type annotations
  --> src/inventory/report.py:18:43
   |
16 |
17 |
18 | def render(warehouse: Warehouse, minimum: Optional[int] = None):
   |                                           ^^^^^^^^^^^^^
19 |     skus = reorder(warehouse, minimum)
   |
help: Convert to `X | None`

Found 3 errors.
[*] 3 fixable with the `--fix` option.
"""


def test_headlines_and_locations_stay_and_code_frames_go() -> None:
    record = {
        "id": "ruff",
        "kind": "tool_output",
        "command": "ruff check --output-format=full .",
        "content": RUFF_FULL,
    }
    text, saved = compress_soundly(record, "standard")
    for kept in (
        "E401 [*] Multiple imports on one line",
        " --> src/inventory/report.py:3:1",
        "F401 [*] `json` imported but unused",
        " --> src/inventory/report.py:4:8",
        "UP045 [*] Use `X | None` for type annotations",
        "  --> src/inventory/report.py:18:43",
        "Found 3 errors.",
    ):
        assert kept in text
    assert "^^^^" not in text and "3 + import os" not in text and "  - import os, sys" not in text
    assert "snippet lines" in text
    assert saved > 0.3


def test_a_code_headline_without_a_location_is_no_diagnostic() -> None:
    lines = ["E501 is the rule for long lines", "  it is off in this project", "done"]
    assert analyse(lines).family == ""
    assert analyse(RUFF_FULL.split("\n")).family == "diagnostics"
