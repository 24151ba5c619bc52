"""The --jobs comparison's input: copies that no cache has seen, cut into segments."""

from __future__ import annotations

import orjson

from workers.bench.multicore import _variant, scaled, segments

LINE = orjson.dumps(
    {
        "id": "rec-17",
        "messages": [
            {
                "role": "tool",
                "content": "tests/test_a.py:42: AssertionError 1.50 \u00e9 \U0001f600",
            },
            {"role": "user", "content": "no digits here"},
        ],
        "n": 123,
    }
)


def test_copies_differ_in_every_text_with_a_digit_and_stay_valid_json() -> None:
    copies = [_variant(LINE, k) for k in range(200)]
    texts = [orjson.loads(c)["messages"][0]["content"] for c in copies]
    assert len(set(texts)) == 200  # no two copies alike, also not copies 9 apart
    assert copies[0] == LINE
    for copy in copies:
        record = orjson.loads(copy)
        assert len(copy) == len(LINE)
        assert record["n"] == 123  # numbers outside strings stay
        assert record["messages"][1]["content"] == "no digits here"
        assert record["messages"][0]["content"].endswith("\u00e9 \U0001f600")


def test_escaped_unicode_is_kept_while_the_digits_around_it_move() -> None:
    line = b'{"id":"x","messages":[{"role":"tool","content":"a 12 \\u00e9 \\ud83d\\ude00 34"}]}'
    copy = _variant(line, 5)
    assert b"\\u00e9 \\ud83d\\ude00" in copy
    assert copy != line
    text = orjson.loads(copy)["messages"][0]["content"]
    assert (text[2:4], text[-2:]) != ("12", "34")
    assert text[2:4].isdigit() and text[-2:].isdigit()
    assert "\u00e9 \U0001f600" in text


def test_scaled_reaches_the_size_and_segments_cover_every_line_once() -> None:
    lines = [LINE] * 10
    big = scaled(lines, 0.05)
    assert sum(len(x) + 1 for x in big) >= 50_000
    parts = segments(big, 0.01)
    assert len(parts) >= 4
    assert [x for part in parts for x in part] == big
    assert segments([], 1.0) == [[]]
