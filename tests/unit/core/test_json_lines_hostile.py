"""Dead-letter reasons for lines that are not UTF-8 (held-out hostile set, holdout-e).

orjson says "str is not valid UTF-8: surrogates not allowed" for any bad byte, which names
neither the byte nor what to do; the reason now says which byte, where, and how to fix it.
"""

import pytest

from workers.core.jsonl import BadLine, decode_line


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"id":"a","content":"caf\xe9"}', "byte 0xe9 at column 25"),
        (b'{"a":"caf\xc3"}', "byte 0xc3 at column 10"),
        (b'\xff\xfe{\x00"\x00', "UTF-16 byte order mark"),
    ],
)
def test_a_line_that_is_not_utf8_names_the_byte_and_the_fix(raw: bytes, expected: str) -> None:
    bad = decode_line(raw, 7, 1 << 20)
    assert isinstance(bad, BadLine)
    assert bad.reason.startswith("line 7: not valid JSON (not valid UTF-8: ")
    assert expected in bad.reason
    assert "iconv" in bad.reason
    assert "surrogates" not in bad.reason
