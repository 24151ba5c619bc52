"""A file read again after an edit stays whole (it is what the model works on), also a
``cat`` of several files; the older copy is what goes.

Before, dedup replaced the unchanged blocks of the newer read by back-references to the
older one: the function asked about after the fix read as fragments between references
(set 5: ``cat lib/filters.c lib/image.c`` read twice around an edit).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.engines._shell import cat_files
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record


def _c_file(fixed: bool) -> str:
    body = []
    for k in range(6):
        body += [
            f"static int helper_{k}(image_t *img, int level) {{",
            f"    int total = level * {k + 2};",
            "    for (int i = 0; i < img->width; i++)",
            "        total += img->data[i] % 7;",
            "    return total;",
            "}",
            "",
        ]
    body += [
        "int filter_apply(image_t *img, filter_kind kind, int strength) {",
        "    switch (kind) {",
        "    case FILTER_EDGE:",
        "        to_gray(img);",
    ]
    if fixed:
        body.append("        return filter_convolve(img, EDGE3, 3);")
    body += [
        "    case FILTER_INVERT:",
        "        invert(img);",
        "        break;",
        "    default:",
        "        return -2;",
        "    }",
        "    return 0;",
        "}",
        "",
    ]
    return "\n".join(body)


def _header() -> str:
    return "\n".join(
        [
            "#ifndef IMAGE_H",
            "#define IMAGE_H",
            *[f"int image_op_{k}(image_t *img, int arg_{k});" for k in range(12)],
            "#endif",
            "",
        ]
    )


def _call(cid: str, command: str, output: str) -> list[dict[str, Any]]:
    call = {
        "id": cid,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": cid, "content": output},
    ]


def _session(command: str, before: str, after: str) -> dict[str, Any]:
    edit = {
        "id": "e1",
        "type": "function",
        "function": {
            "name": "edit_file",
            "arguments": json.dumps({"path": "lib/filters.c", "old": "x", "new": "y"}),
        },
    }
    return {
        "id": "reread",
        "messages": [
            {"role": "user", "content": "The edge filter of a flat image is not 0."},
            *_call("r1", command, before),
            {"role": "assistant", "content": None, "tool_calls": [edit]},
            {"role": "tool", "tool_call_id": "e1", "content": "Applied edit to lib/filters.c"},
            *_call("r2", command, after),
            {"role": "assistant", "content": "I have the outputs above."},
            {"role": "user", "content": "Explain filter_apply after the fix."},
        ],
    }


def _run(record: dict[str, Any], mode: str) -> list[str]:
    outcome = Pipeline(Settings(mode=mode)).run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    assert expanded_record(outcome) == record
    return [m["content"] for m in outcome.record["messages"] if m["role"] == "tool"]


def test_cat_of_several_files_names_them() -> None:
    assert cat_files("cat lib/filters.c lib/image.c") == ("lib/filters.c", "lib/image.c")
    assert cat_files("cd proj && cat -n a.c b.h") == ("proj/a.c", "proj/b.h")
    assert cat_files("cat lib/filters.c") == ()  # one file: a read of it
    assert cat_files("cat a.c b.c | grep x") == ()
    assert cat_files("cat a.c b.c > all.c") == ()


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_a_cat_of_several_files_read_again_shows_the_fixed_function_whole(mode: str) -> None:
    command = "cat lib/filters.c lib/image.h"
    before, after = _c_file(False) + _header(), _c_file(True) + _header()
    record = _session(command, before, after)
    outputs = _run(record, mode)
    newest = outputs[-1]
    fixed = after[after.index("int filter_apply") : after.index("    return 0;\n}") + 14]
    assert fixed in newest
    assert "[[dup:" not in newest


def test_lossless_mode_still_refers_a_reread_to_its_first_copy() -> None:
    command = "cat lib/filters.c lib/image.h"
    record = _session(command, _c_file(False) + _header(), _c_file(True) + _header())
    outputs = _run(record, "lossless")
    assert "[[dup:" in outputs[-1]


def test_a_single_file_read_again_stays_whole_and_supersedes_the_older_copy() -> None:
    record = _session("cat lib/filters.c", _c_file(False), _c_file(True))
    outputs = _run(record, "standard")
    assert outputs[-1] == _c_file(True)
    assert "[[dup:" not in outputs[-1]
    assert outputs[0] != _c_file(False)  # the older copy went (superseded or outlined)
