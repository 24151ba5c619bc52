"""Crash reports as structure (:mod:`workers.engines.toolfilter.blocks`): whatever the
command, library frames, AddressSanitizer's shadow map and valgrind's banner are stashed;
the headline, every frame in user code and the summary stay visible."""

from __future__ import annotations

import pytest

from tests.support.sound import compress_soundly
from workers.engines.toolfilter.blocks import analyse
from workers.fidelity.facts import critical_lines

GO_RACE = """\
==================
WARNING: DATA RACE
Read at 0x00c000016418 by goroutine 25:
  example.com/gocart/cart.(*Cart).Add()
      /home/dev/gocart/cart/cart.go:17 +0xda
  example.com/gocart/cart.TestConcurrentAdd.func1()
      /home/dev/gocart/cart/cart_test.go:47 +0x8c

Goroutine 25 (running) created at:
  example.com/gocart/cart.TestConcurrentAdd()
      /home/dev/gocart/cart/cart_test.go:47 +0xfb
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
  runtime.goexit()
      /usr/local/go/src/runtime/asm_amd64.s:1700 +0x1
  testing.(*T).Run()
      /usr/local/go/src/testing/testing.go:2101 +0x9f1
==================
"""

ASAN = (
    "=================================================================\n"
    "==4530==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x603000000060 at pc "
    "0x564c36c3345b bp 0x7ffd10d96a70 sp 0x7ffd10d96a68\n"
    "READ of size 4 at 0x603000000060 thread T0\n"
    "    #0 0x564c36c3345a in vec_sum_window /home/dev/crash/vec.c:10\n"
    "    #1 0x564c36c335bd in main /home/dev/crash/vec.c:16\n"
    "    #2 0x7fd517845249 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58\n"
    "    #3 0x7fd517845304 in __libc_start_main_impl ../csu/libc-start.c:360\n"
    "    #4 0x564c36c33130 in _start (/home/dev/crash/vec+0x1130)\n"
    "\n"
    "SUMMARY: AddressSanitizer: heap-buffer-overflow /home/dev/crash/vec.c:10 in vec_sum_window\n"
    "Shadow bytes around the buggy address:\n"
    + "".join(
        f"  0x0c067fff7f{k}0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n" for k in "abcdef"
    )
    + "=>0x0c067fff8000: fa fa 00 00 00 fa fa fa 00 00 00 00[fa]fa fa fa\n"
    + "".join(
        f"  0x0c067fff80{k}0: fa fa fa fa fa fa fa fa fa fa fa fa fa fa fa fa\n" for k in "1234"
    )
    + "Shadow byte legend (one shadow byte represents 8 application bytes):\n"
    "  Addressable:           00\n"
    "  Partially addressable: 01 02 03 04 05 06 07 \n"
    "  Heap left redzone:       fa\n"
    "  Freed heap region:       fd\n"
    "  Stack left redzone:      f1\n"
    "  Stack mid redzone:       f2\n"
    "  Stack right redzone:     f3\n"
    "  Stack after return:      f5\n"
    "==4530==ABORTING\n"
)

JAVA = """\
Exception in thread "main" java.lang.IllegalStateException: bad quantity in row: x3
\tat app.Main.parseQty(Main.java:8)
\tat app.Main.load(Main.java:13)
\tat app.Main.main(Main.java:17)
Caused by: java.lang.NumberFormatException: For input string: "x3"
\tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)
\tat java.base/java.lang.Integer.parseInt(Integer.java:668)
\tat java.base/java.lang.Integer.parseInt(Integer.java:786)
\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)
\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)
\tat app.Main.parseQty(Main.java:6)
\t... 2 more
"""


def test_a_race_report_keeps_user_frames_and_stashes_the_runtime() -> None:
    text, saved = compress_soundly(
        {"id": "r", "kind": "tool_output", "content": GO_RACE}, "standard"
    )
    assert "WARNING: DATA RACE" in text
    for user in ("cart.go:17 +0xda", "cart_test.go:47 +0x8c", "cart_test.go:47 +0xfb"):
        assert user in text
    assert "testing.tRunner()" not in text and "asm_amd64.s" not in text
    assert "library frames omitted" in text
    assert saved > 0.2


def test_asan_keeps_headline_user_frames_and_summary_and_stashes_the_shadow_map() -> None:
    record = {"id": "a", "kind": "tool_output", "command": "./vec", "content": ASAN}
    text, saved = compress_soundly(record, "standard")
    assert "SUMMARY: AddressSanitizer: heap-buffer-overflow /home/dev/crash/vec.c:10" in text
    assert "vec_sum_window /home/dev/crash/vec.c:10" in text
    assert "main /home/dev/crash/vec.c:16" in text
    assert "Heap left redzone" not in text and "0x0c067fff8010" not in text
    assert "shadow memory lines" in text
    assert "==4530==ABORTING" in text
    assert saved > 0.4


def test_a_java_exception_keeps_its_frames_in_user_code() -> None:
    record = {"id": "j", "kind": "tool_output", "command": "java -cp out app.Main", "content": JAVA}
    text, _ = compress_soundly(record, "standard")
    for user in ("app.Main.parseQty(Main.java:8)", "app.Main.main(Main.java:17)", "Main.java:6"):
        assert user in text
    assert "Caused by: java.lang.NumberFormatException" in text
    assert "DirectMethodHandleAccessor" not in text


@pytest.mark.parametrize("text", [GO_RACE, ASAN, JAVA])
def test_the_structure_is_a_crash_report(text: str) -> None:
    assert analyse(text.split("\n")).family == "crash"


def test_frames_without_a_crash_headline_are_not_a_crash_report() -> None:
    lines = ["  at parse (/home/dev/app.js:3:9)", "  at main (/home/dev/app.js:9:1)", "done"]
    assert analyse(lines).family == ""


# node --test's spec reporter: the error is indented and its diff comes before the frames
NODE_ASSERT = """\
✖ slug keeps case 4 (2.137013ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
  + actual - expected

  + 'item-4'
  - 'Item-4'
      at TestContext.<anonymous> (/home/dev/nodeshop/test/shop.test.js:8:42)
      at Test.runInAsyncScope (node:async_hooks:206:9)
      at Test.run (node:internal/test_runner/test:796:25)
      at Test.processPendingSubtests (node:internal/test_runner/test:526:18)
      at Test.postRun (node:internal/test_runner/test:889:19)
"""


def test_a_node_assertion_with_its_diff_above_the_frames_is_a_crash_report() -> None:
    structure = analyse(NODE_ASSERT.split("\n"))
    assert "crash" in structure.family
    lines = NODE_ASSERT.split("\n")
    dropped = {lines[i].strip() for i in structure.drop}
    assert "at Test.postRun (node:internal/test_runner/test:889:19)" in dropped
    assert all("shop.test.js" not in line for line in dropped)


def _race(access: str, line: int, offset: int) -> list[str]:
    """One report of ``go test -race`` (the race detector's shape): both stacks in user code."""
    stack = [
        "  example.com/fleet/dispatch.(*Dispatcher).Assign()",
        f"      /src/fleet/dispatch/dispatch.go:{line} +0x{offset:x}",
        "  example.com/fleet/dispatch.TestAssignConcurrent.func1()",
        "      /src/fleet/dispatch/dispatch_test.go:33 +0xe5",
        "  example.com/fleet/dispatch.TestAssignConcurrent.gowrap1()",
        "      /src/fleet/dispatch/dispatch_test.go:36 +0x38",
    ]
    return [
        "==================",
        "WARNING: DATA RACE",
        f"{access} at 0x00c00008c8b0 by goroutine 10:",
        *stack,
        "",
        "Previous write at 0x00c00008c8b0 by goroutine 17:",
        *[row.replace(f"+0x{offset:x}", f"+0x{offset + 30:x}") for row in stack],
        "",
    ]


def test_a_go_stack_the_same_as_one_above_but_for_offsets_goes() -> None:
    text = "\n".join([*_race("Read", 54, 531), *_race("Read", 56, 903), "FAIL"]) + "\n"
    record = {
        "id": "race",
        "kind": "tool_output",
        "command": "go test -race ./...",
        "content": text,
    }
    shown, saved = compress_soundly(record, "standard")
    assert shown.count("dispatch_test.go:33 +0xe5") == 2  # each line of the code, once per line
    assert "dispatch.go:54 +0x213" in shown and "dispatch.go:56 +0x387" in shown
    assert "dispatch.go:54 +0x231" not in shown  # the first report's Previous write: its Read
    assert saved > 0.3


# Python 3.11's own traceback (``python3 tb.py`` of a script calling json.loads("{bad"))
PY311 = """\
Traceback (most recent call last):
  File "/tmp/s36/tb.py", line 6, in <module>
    g()
  File "/tmp/s36/tb.py", line 5, in g
    return f("{bad")
           ^^^^^^^^^
  File "/tmp/s36/tb.py", line 3, in f
    return json.loads(x)
           ^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 337, in decode
    obj, end = self.raw_decode(s, idx=_w(s, 0).end())
               ~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 353, in raw_decode
    obj, end = self.scan_once(s, idx)
               ^^^^^^^^^^^^^^^^^^^^^^
json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)
"""


def test_the_carets_under_a_library_frame_go_with_it() -> None:
    record = {"id": "p", "kind": "tool_output", "command": "python3 tb.py", "content": PY311}
    text, _ = compress_soundly(record, "standard")
    rows = text.split("\n")
    for k, row in enumerate(rows):
        if row.strip() and set(row.strip()) <= set("^~"):
            # every caret line still sits under the source line it marks
            assert rows[k - 1].startswith("    ") and not rows[k - 1].lstrip().startswith("File ")
    assert "_default_decoder.decode(s)" not in text
    assert 'return f("{bad")' in text and "json.decoder.JSONDecodeError: Expecting" in text


# ``valgrind --tool=helgrind ./race`` of a program whose two threads bump a global counter
HELGRIND = "".join(
    f"==16814== {row}\n"
    for row in (
        "Helgrind, a thread error detector",
        "Command: ./race",
        "",
        "---Thread-Announcement------------------------------------------",
        "",
        "Thread #3 was created",
        "   at 0x496CB3F: clone (clone.S:76)",
        "   by 0x48ED8EC: pthread_create@@GLIBC_2.34 (pthread_create.c:831)",
        "   by 0x10928A: main (race.c:9)",
        "",
        "----------------------------------------------------------------",
        "",
        "Possible data race during read of size 8 at 0x10C060 by thread #3",
        "Locks held: none",
        "   at 0x109199: worker (race.c:7)",
        "   by 0x484C7D6: ??? (in /usr/libexec/valgrind/vgpreload_helgrind-amd64-linux.so)",
        "   by 0x48ED1F4: start_thread (pthread_create.c:442)",
        "   by 0x496CB4F: clone (clone.S:100)",
        "",
        "This conflicts with a previous write of size 8 by thread #2",
        "Locks held: none",
        "   at 0x1091A4: worker (race.c:7)",
        "   by 0x48ED1F4: start_thread (pthread_create.c:442)",
        ' Address 0x10c060 is 0 bytes inside data symbol "hits"',
        "",
        "Thread #1 unlocked a not-locked lock at 0x10C0A0",
        "   at 0x4850F15: pthread_mutex_unlock (hg_intercepts.c:1086)",
        "   by 0x1092B4: main (race.c:14)",
        "",
        "ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 0 from 0)",
    )
)


def test_a_thread_checkers_findings_are_crash_headlines() -> None:
    record = {"id": "h", "kind": "tool_output", "command": "make check", "content": HELGRIND}
    text, _ = compress_soundly(record, "standard")
    assert "Possible data race during read of size 8 at 0x10C060 by thread #3" in text
    assert "Thread #1 unlocked a not-locked lock at 0x10C0A0" in text
    assert "worker (race.c:7)" in text and "main (race.c:14)" in text
    assert "ERROR SUMMARY: 2 errors" in text
    assert "vgpreload_helgrind" not in text
    facts = critical_lines(HELGRIND, "tool_result", "make check")
    assert (
        "error_line",
        "==16814== Possible data race during read of size 8 at 0x10C060 by thread #3",
    ) in facts
    assert not any("was created" in token for _, token in facts)
