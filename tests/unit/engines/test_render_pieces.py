"""A run of dropped lines that does not pay as a whole is stashed piece by piece between its
blank lines (each piece has one label, so a shorter note)."""

from __future__ import annotations

from tests.support.sound import compress_soundly
from workers.engines.toolfilter.plan import BLANK, DROP, NORMAL
from workers.engines.toolfilter.render import _pieces

# the end of ``mvn -B test`` (surefire 3.2.5, JUnit 5) as this machine's Maven printed it
SUREFIRE_TAIL = """\
[ERROR] shop.CartTest.total0 -- Time elapsed: 0.002 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <105> but was: <100>
\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
\tat org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)
\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)
\tat org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:150)
\tat org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:145)
\tat org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:531)
\tat shop.CartTest.total0(CartTest.java:6)
\tat java.base/java.lang.reflect.Method.invoke(Method.java:569)
\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1511)
\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1511)

[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   CartTest.total0:6 expected: <105> but was: <100>
[INFO]
[ERROR] Tests run: 25, Failures: 1, Errors: 0, Skipped: 0
[INFO]
[INFO] ------------------------------------------------------------------------
[INFO] BUILD FAILURE
[INFO] ------------------------------------------------------------------------
"""


def test_pieces_split_at_blank_lines() -> None:
    cls = bytearray([DROP, DROP, BLANK, DROP, BLANK, BLANK, DROP, NORMAL])
    assert _pieces(cls, 0, 7) == [(0, 2), (3, 4), (6, 7)]
    assert _pieces(cls, 0, 2) == [(0, 2)]


def test_library_frames_before_a_blank_and_an_empty_info_line_go() -> None:
    record = {
        "id": "mvn",
        "kind": "tool_output",
        "command": "mvn -B test",
        "content": SUREFIRE_TAIL,
    }
    text, _ = compress_soundly(record, "standard")
    assert "java.util.ArrayList.forEach" not in text
    assert "at shop.CartTest.total0(CartTest.java:6)" in text
    assert "[ERROR]   CartTest.total0:6 expected: <105> but was: <100>" in text
