"""Fast paths of the fact extractors decide exactly like the plain rules."""

from __future__ import annotations

import re
from collections.abc import Iterator

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.fidelity import facts
from workers.fidelity import lossy as gate
from workers.fidelity.testlogs import passing_test_logs
from workers.messages import parse_record

WORDS = st.sampled_from(
    [
        "error", "errors", "ERROR", "Error", "Errors while running", "FAILED", "SUBFAILED", "FAIL", "FAILURE", "failed", "Failed",
        "fatal", "FATAL", "Fatal", "panic", "Exception", "Traceback", "CRITICAL", "critical",
        "Warning", "WARNING", "warning", "WARN", "denied", "refused", "KeyError", "IOException",
        "terror", "Errors", "xErrorx", "_error", "error_", "WARNED", "panicked", " ", "\t", ":",
        "Out of memory", "SEVERE", "SEVEREx", "[warn]", "[crit]", "[alert]", "[emerg]", "[warn",
        '"level":"warn"', '"severity": "crit"', '"lvl":"dpanic"', '"level":"warning"', "E1203 16:41:11.123456 ",
        "W0101 00:00:00.000000\t", "I1203 16:41:11.123456 ", '"level":50', '"level": 40', '"level":30', '"level":500', "oom-killer", "oom-kill", "segfault", "segfaults", "failure", "failures", "Failure", "Failures", "FAILURES", "failuresx", "panicky",
        "a", "Z9", "é", "-", "\n", "  ", "ok", "[FTL]", "[ERR]", "[ALERT] ", "[EMERG] ", "[ALERT]x",
        "err=49", 'err="<nil>"', "err=0", "status: NXDOMAIN", "ERRO[0003]", "3:05PM ERR ",
    ]
)  # fmt: skip
LINES = st.one_of(st.lists(WORDS, max_size=12).map("".join), st.text(max_size=40))


@settings(max_examples=3000, deadline=None)
@given(LINES)
def test_is_error_line_is_the_error_regex(line: str) -> None:
    # (the error words' regex, or the rare shapes without one: ``[FTL]``, ``err=49``)
    assert facts.is_error_line(line) == facts._error_search(line)


TEXT_PARTS = st.sampled_from(
    ["a", " ", "\t", "\n", "\n\n", "\n\n\n\n", "  \n", "\t\n", "x \t", "é"]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(TEXT_PARTS, max_size=30).map("".join))
def test_whitespace_normal_form_is_the_regex_definition(text: str) -> None:
    expected = re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+$", "", text, flags=re.M))
    assert gate._ws_normal(text) == expected


def reference_tool_lines(text: str, family: str | None) -> Iterator[tuple[str, str]]:
    """The plain per-line rules, as they were before the fast paths (every regex on every line)."""
    last_frame: str | None = None
    last_user_frame: str | None = None
    first_user_frame: str | None = None
    error_here = False  # the last non-blank line was an error line
    since_error = facts._PG_DETAIL_WINDOW + 1
    in_traceback = False
    in_failures = False
    mocha = re.search(r"^\s*\d+ failing\b", text, re.MULTILINE) is not None
    title_lines = 0
    failed = False
    in_status_untracked = False
    in_hunk = False
    want_frame = False
    want_message = False
    in_example = False
    in_conflict = False
    in_expected = False
    expected_indent = 0
    in_cmake_error = False
    want_panic_message = False
    javac_detail = 0
    rust_label = False
    in_snippet = False  # under a compiler's finding: its numbered lines are quoted source
    above = ""
    in_deadlock = False  # inside a JVM thread dump's deadlock report
    crashed = False  # a crash headline came before: a Go dump's goroutines re-arm the frame
    said: set[str] | None = set() if "[ERROR] " in text or "[WARNING] " in text else None
    path_header: str | None = None
    report_file: str | None = None  # phpcs's ``FILE:`` until a row under it
    grep_files: set[str] = set()
    has_ansi = "\x1b" in text
    written = all_lines = text.splitlines()
    events = facts._output_events(all_lines)  # go test -json: each event's printed line
    if events is not None:
        all_lines = [events.get(i, "") for i in range(len(all_lines))]
    quiet = passing_test_logs(all_lines)  # a passing go test's log lines are no facts
    for index, raw_line in enumerate(all_lines):
        if index in quiet:
            continue
        raw = facts._ANSI.sub("", raw_line) if has_ansi else raw_line
        line = raw.strip()
        # The token that must stay visible is the line as written (colours included).
        token = (raw_line if events is None else written[index]).strip()[:600]
        if not line:
            title_lines = 0
            in_status_untracked = in_cmake_error = want_panic_message = rust_label = False
            in_example = in_conflict = in_snippet = False
            path_header = None
            error_here = False
            above = ""
            last_frame = last_user_frame = first_user_frame = None  # a blank line ends a stack
            continue
        named, above = above, token  # the line above (its token), "" after a blank line
        if len(line) > 600:
            line = line[:600]
        error_above, error_here = error_here, False
        since_error += 1
        if line.startswith("FILE: "):
            report_file = token
        elif report_file is not None and facts._PHPCS_ROW.match(line):
            yield "finding", report_file
            report_file = None
        if in_snippet and re.match(r"\s*\d+ +[|│+-](?: |$)", raw):
            continue  # the source a compiler quotes under its finding
        if line.startswith("--> ") or re.search(
            r":\d+(?::\d+)?: (?:fatal )?(?:error|warning|note)(?:\[\w+\])?: ", line
        ):
            in_snippet = True
        if in_expected:
            indent = len(raw) - len(raw.lstrip())
            if facts._EXPECTED_END.match(raw) or indent < expected_indent:
                in_expected = False
            elif line.startswith(("+", "-", "@@")):
                yield "test_failure", token
                continue
        if want_message:
            want_message = False
            if not facts._TRACE_FRAME.match(raw):
                yield "test_failure", token
                in_expected = facts._EXPECTED_HEAD.match(line) is not None
                expected_indent = len(raw) - len(raw.lstrip())
                continue
        if in_example:
            in_example = facts.EXAMPLE_END.match(line) is None
            if in_example:
                yield "test_failure", token
            continue
        if in_conflict:
            if raw[0].isspace():
                yield "error_line", token
                continue
            in_conflict = False
        if line == facts.CONFLICT_HEAD:
            in_conflict = True
        if facts.EXAMPLE_HEAD.match(line):
            in_example = True
            yield "test_failure", token
            continue
        if facts._DIFF_HEADER.match(raw):
            in_hunk = raw.startswith(("@@", "Diff in "))
            yield "diff_header", token
            continue
        if in_hunk:
            if raw[:1] in ("+", "-", " ", "\\"):
                continue  # hunk body: trimmable, its headers carry the facts
            in_hunk = False
        if in_deadlock:
            if facts._DEADLOCK_THREAD.match(line):
                want_frame = True
                yield "error_detail", token
                continue
            if line.startswith('which is held by "'):
                yield "error_detail", token
                continue
            if facts._DEADLOCK_END.match(line):
                in_deadlock = False
        elif facts._DEADLOCK_HEAD.match(line):
            in_deadlock = True
        if crashed and "goroutine " in text and facts._GOROUTINE_HEAD.match(line):
            want_frame = True
        if said is not None:
            plain = facts.RELOGGED.sub("", line, count=1).strip()
            if facts.RELOGGED.match(line) and plain in said:
                continue  # said above, then again behind a log level
            said.add(plain)
            if facts.TOOL_ADVICE.match(line):
                continue  # a build tool's advice: help text
        if facts._SUREFIRE_PASS.match(line):
            continue  # a test class that passed
        if facts.SYSTEM_HEADER_NOTE.match(line) or facts.SYSTEM_HEADER_STEP.match(line):
            path_header = None
            continue  # a compiler's note in a header it ships: help text
        if facts._TRACE_FRAME.match(raw):
            if line.startswith("File "):
                last_frame = token
                in_traceback = True
                if not facts._NOT_USER_FRAME.search(raw):
                    last_user_frame = token
                    if first_user_frame is None:
                        first_user_frame = token
            else:  # an ``at`` frame in a library is no frame of the next error line
                last_frame = None if facts._NOT_USER_FRAME.search(raw) else token
            if want_frame and line.startswith("at ") and not facts._NOT_USER_FRAME.search(raw):
                want_frame = False
                yield "stack_frame", token
            continue
        if facts._NODE_ERROR_CODE.match(raw):
            yield "error_detail", token
            continue
        if crashed and facts._PHP_THROWN.match(raw):
            yield "error_detail", token
            continue
        if want_frame and facts._NATIVE_FRAME.match(raw) and not facts._NOT_USER_FRAME.search(raw):
            want_frame = False
            yield "stack_frame", token
            if line.startswith("at ") and re.match(r"\d+: \S", named):
                yield "stack_frame", named
        exception = in_traceback and not raw[0].isspace() and not line.startswith("…")
        if exception:
            in_traceback = False
        if family == "grep":
            match = facts._GREP_MATCH.match(raw)
            if match and facts._GREP_FILE.fullmatch(match.group(1)):
                if match.group(1) not in grep_files:
                    grep_files.add(match.group(1))
                    yield "grep_file", match.group(1)
                continue
        if in_cmake_error:
            in_cmake_error = False
            if raw[0].isspace():
                yield "error_detail", token
        if javac_detail:  # a javac error's symbol/required/found under its headline
            javac_detail -= 1
            if raw[0].isspace() and facts._JAVAC_DETAIL.match(raw):
                yield "error_detail", token
                continue
        if facts._JAVAC_HEADLINE.match(line):
            javac_detail = facts._JAVAC_DETAIL_WINDOW
        # rustc's first primary label under an error whose headline names nothing
        if rust_label and facts._RUST_LABEL.match(raw):
            rust_label = False
            yield "error_detail", token
            continue
        if facts._RUST_ERROR.match(raw):
            rust_label = "`" not in raw
        elif rust_label and raw[0].isalpha():
            rust_label = False
        if facts._PG_LOG.search(line):
            since_error = facts._PG_DETAIL_WINDOW + 1
        if (since_error <= facts._PG_DETAIL_WINDOW and facts._PG_DETAIL.search(line)) or (
            error_above and facts._TS_CODE.match(line)
        ):
            yield "error_detail", token
        if want_panic_message:
            want_panic_message = False
            if line != "stack backtrace:" and not line.startswith("note: "):
                yield "error_detail", token
        if family == "git-status" and facts._SHORT_STATUS.match(raw):
            yield "git_status_path", token
        elif facts._GIT_COMMIT.match(raw) or (
            family == "git-log" and facts._ONELINE_COMMIT.match(raw)
        ):
            yield "commit", token
        elif facts._STAT_SUMMARY.match(line):
            yield "stat_summary", token
        elif facts._RESPONSE_STATUS.match(line) or facts._FAILED_RESPONSE.match(line):
            yield "http_status", token
        elif facts._SUMMARY_LINE.match(line) or facts._RUN_OUTCOME.search(line):
            yield "test_summary", token
        elif (
            facts._TEST_FAILURE.match(raw)
            or facts._MINITEST_FAILURE.match(raw)
            or facts._GO_FAIL.match(raw)
            or ((in_failures or mocha) and facts._NUMBERED_FAILURE.match(raw))
        ):
            failed = want_frame = True
            want_message = line.startswith("●")
            numbered = in_failures and mocha and facts._NUMBERED_FAILURE.match(raw) is not None
            title_lines = 3 if numbered else 0
            yield "test_failure", token
        elif title_lines and raw[:1].isspace() and not facts._error_search(line):
            title_lines -= 1
            if line.endswith(":"):
                title_lines = 0
                yield "test_failure", token
        elif failed and facts._ASSERTION.match(raw):
            yield "test_failure", token
        elif failed and facts._EXPECTED_HEAD.match(line):
            in_expected = True
            expected_indent = len(raw) - len(raw.lstrip())
            yield "test_failure", token
        elif failed and facts._TAP_LOCATION.match(raw):
            yield "location", token
        elif facts._RUBY_FRAME.match(raw):
            yield "stack_frame", token
        elif (
            (facts._FINDING.match(raw) and not raw.startswith((" ", "\t", "+", "-")))
            or facts._LOCATION.match(raw)
            or facts.RELATED_LOCATION.match(raw)
        ):
            # a compiler warning is an error line (one kind in one file is one fact)
            yield "error_line" if facts._is_diag_warning(line) else "finding", token
        elif (
            facts._BOXED_HEAD.match(line)
            or facts._SHELLCHECK_LOCATION.match(line)
            or facts._SHELLCHECK_FINDING.match(line)
            or facts._DJANGO_CHECK.match(line)
        ):
            yield "finding", token
        elif facts.CODED_FINDING.match(raw):
            if path_header is not None:
                yield "finding", path_header
            yield "finding", token
        elif (
            facts._CRASH_HEAD.match(line)
            or facts._HTTP_5XX.search(line)
            or facts._error_search(line)
            or exception
        ) and not ("goroutine " in text and facts._go_frame(all_lines, index, raw, line)):
            failed = True
            if last_frame is not None:
                yield "stack_frame", last_frame
                if last_user_frame is not None and last_user_frame != last_frame:
                    yield "stack_frame", last_user_frame
                if first_user_frame is not None and first_user_frame not in (
                    last_frame,
                    last_user_frame,
                ):
                    yield "stack_frame", first_user_frame
                last_frame = last_user_frame = first_user_frame = None
            if path_header is not None and facts._ESLINT_FINDING.match(raw):
                yield "finding", path_header
                path_header = None
            error_here = True
            since_error = 0
            yield "error_line", token
            if facts._FRAME_HEAD.match(line):
                want_frame = crashed = True
        elif facts._GIT_STATUS.match(raw) and ":" in line[:22]:
            yield "git_status_path", token
        if line.startswith("Untracked files:"):
            in_status_untracked = True
        elif in_status_untracked and raw.startswith("\t"):
            yield "git_status_path", token
        if line.startswith("CMake Error"):
            in_cmake_error = True
        if facts._PANIC_WITH_MESSAGE_BELOW.match(line):
            want_panic_message = True
        elif line.startswith("Traceback (most recent call last)"):
            in_traceback = True
            last_frame = last_user_frame = first_user_frame = None
        elif facts._FAILURES_HEAD.match(line):
            in_failures = True
        if path_header is not None and line.startswith("…") and "<<cx:" in line:
            yield "finding", path_header
        path_header = token if not raw[0].isspace() and facts._PATH_HEADER.match(line) else None


LINE_PARTS = st.sampled_from(
    [
        "diff --git a/x.py b/x.py", "@@ -1,3 +1,4 @@ def f():", "+added", "-removed", " ctx",
        "--- a/x.py", "+++ b/x.py", "rename from a", "new file mode 100644", "\\ No newline",
        '  File "/app/x.py", line 12, in f', "    at com.x.Y(Y.java:10)", "    at f (/a/b.js:1:2)",
        "ValueError: bad", "E   assert 1 == 2", "FAILED tests/test_x.py::test_y - boom",
        "===== 2 failed, 3 passed in 0.1s =====", "Tests:       1 failed, 2 total", "ok  pkg 0.1s",
        "test result: ok.", "Ran 3 tests in 0.1s", "OK", "FAILED (failures=1)", "Found 2 errors",
        "3 problems", "Successfully installed a-1", "added 3 packages", "Installed 2 packages",
        "Packages: +3", "up to date", "BUILD SUCCESS", "src/a.ts:10:5: error TS2322", "a.py(3): x",
        "  ✕ renders", "● suite › test", "  ● Console", "✖ slug keeps case 4 (2.1ms)", "  + actual - expected", "  + 'item-4'", "    + actual - expected", "  code: 'ERR_ASSERTION'", "× fails", "modified:   a.py", "M  a.py", "?? new.txt",
        "Untracked files:", "\tnew.txt", "warning: x", "WARN deprecated", "plain text", "",
        "   ", "\x1b[31merror\x1b[0m", "١٢ errors", "\u3000Found 1 error", "x" * 700 + "Error",
        "Traceback (most recent call last):", "src/x.rs:1:1", "a:b", "(c)", "U", "F", "a",
        "error[E0308]: mismatched types", "  --> src/lib.rs:28:13", "-->", "  -->  x",
        "thread 'main' panicked at src/report.rs:60:23:", "panic: boom", "goroutine 1 [running]:",
        "\t/work/app/main.go:14 +0x1d", "\t/usr/local/go/src/runtime/panic.go:9", "\t/a.go:3",
        "WARNING: DATA RACE", "      /work/app/counter.go:12 +0x44", "--- FAIL: TestX/case_5 (0.00s)",
        "/usr/include/c++/12/bits/basic_string.h:3432:5: note: candidate: 'template<class _CharT>'",
        "/usr/include/x.h:3:5: note:   template argument deduction/substitution failed:",
        "src/main.cpp:8:37: note:   mismatched types 'int' and 'x'",
        "thread 'main' (4120) panicked at src/rates.rs:3:22:", "   5: shop::rates::lookup",
        "             at ./src/rates.rs:3:22", "             at /rustc/5980/library/core/src/a.rs:9:5",
        "  19:     0x55d0 - std[e282]::rt::lang_start", "stack backtrace:", "C:\\Program Files\\x.h:1: note: a",
        "    --- FAIL: TestX/y", "--- PASS: TestX", "    x_test.go:18: got 1", "\tx.go:18: y",
        "==12==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6",
        "    #0 0x55d4 in vec_push /work/cvec/vec.c:42:15", "    #1 0x7f in __libc_start /lib/x.c:1",
        "SUMMARY: AddressSanitizer: heap-buffer-overflow /w/vec.c:42:15 in vec_push",
        "Direct leak of 40 byte(s) in 1 object(s) allocated from:", "==42== Invalid read of size 4",
        "==42==    at 0x109182: sum (leak.c:14)", "==42==    definitely lost: 40 bytes in 1 blocks",
        "==42==     in use at exit: 36 bytes in 6 blocks", "==42==   in use at exit: 0 bytes in 0 blocks",
        "==42== 40 bytes in 1 blocks are definitely lost in loss record 1 of 1",
        "==42==    by 0x4846828: malloc (in /usr/libexec/valgrind/vgpreload.so)",
        "==42== ERROR SUMMARY: 1 errors from 1 contexts", "CMake Error at CMakeLists.txt:12 (x):",
        "  No SOURCES given to target: app", "CMake Errors", "make: *** [Makefile:5: all] Error 2",
        "make[1]: *** No rule to make target 'x'.", "[ERROR] /a/Cart.java:[12,5] cannot find symbol",
        "[WARNING] /a/Cart.java:[12,5] deprecated", "/work/web/src/app.js", "src\\a.js", "./x",
        "   3:7   error    'x' is unused  no-unused-vars", "  12:1  warning  Unexpected console",
        "\u2026 4 lines omitted <<cx:0123456789abcdef>>", "\u2026 x", "Found 1 data race(s)",
        '10.0.0.5 - - [12/Mar/2025:10:00:01 +0000] "GET /api/orders/338 HTTP/1.1" 502 12',
        '"POST /a HTTP/1.1" 200 1', "Exception in thread \"main\" java.lang.IllegalStateException: x",
        "TypeError: Cannot read properties of undefined", "    at total (/work/web/cart.js:44:18)",
        "    at Module._compile (node:internal/modules/cjs/loader:1364:14)", "ValueError: x",
        '{"id": 3, "message": "2 failures in batch"}', "Failures: 1", "FAILURES",
        "Failures:", "  2 failing", "There were 2 failures:", "  1) Cart#total applies", "2) x",
        "     expected: 90.0", "            got: 99.0", "  left: 501", " right: 500",
        "E       assert 53.0 == 53.97", "_____ test_x _____", "---- tests::a stdout ----",
        "rspec ./spec/cart_spec.rb:38 # Cart#total", "     # ./spec/cart_spec.rb:41:in `block'",
        "31 examples, 2 failures", "Tests: 66, Assertions: 121, Failures: 2.", "FAILURES!",
        "  30 passing (11ms)", "ImportFailed: row 120", "KeyError: 12", "  ❯ a/b.test.js:3:5",
        "  location: '/a/b.test.js:36:1'", '  File "/usr/lib/python3.11/json/decoder.py", line 3',
        '  File "/x/lib/python3.11/site-packages/y.py", line 9, in z', "    return json.loads(raw)",
        "# tests 32", "# pass 30", "AssertionError [ERR_ASSERTION]: Expected values",
        "      at Context.<anonymous> (mocha/slug.test.js:36:42)", "=== RUN   TestX",
        "=== RUN   TestX/y", "=== CONT  TestX", "--- PASS: TestX (0.00s)", "    --- SKIP: TestX/y",
        "        continued message", "mod.c:4:61: note: ‘sprintf’ output",
        "- Expected  - 2", "+ Received  + 1", "- Expected", "    -   \"retryAfter\": 30,",
        "+     \"timeout\": 2500,", "  ● Cart › stores item shape", "    upstream timeout for 13",
        "    expect(received).toEqual(expected) // deep equality", "⎯⎯⎯⎯[1/4]⎯",
        " ❯ fetchUser src/lib.js:15:102", " FAIL  test/cart.test.js > Cart > x",
        "PASS __tests__/math.spec.js", "@@ -2,11 +2,10 @@",
        "[INFO] Tests run: 6, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.127 s -- in a.BTest",
        "Tests run: 5, Failures: 0, Errors: 0, Skipped: 1, Time elapsed: 0.05 sec",
        "[ERROR] Tests run: 8, Failures: 4, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE!",
        "\tat org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:9)",
        "\tat com.example.shop.Cart.total(Cart.java:12)", "\tat sbt.Execute.work(Execute.scala:244)",
        "index out of bounds: the len is 3 but the index is 7", "note: run with `RUST_BACKTRACE=1`",
        '{"Action":"output","Test":"TestX/case_5","Output":"--- FAIL: TestX/case_5 (0.00s)\\n"}',
        '{"Action":"output","Test":"TestX","Output":"    x_test.go:18: got 1\\n"}',
        '{"Action":"output","Output":"FAIL\\texample.com/shop\\t0.01s\\n"}', '{"Action":"pass"}',
        '{"Action":"output","Output":"panic: boom\\n"}', '{"Output":3}', '{"Output":"x',
        "All files |      61 |       50 |   53.12 |   68.08 |", "TOTAL     412     37    91%",
        "ok  \texample.com/shop/pkga\t(cached)\tcoverage: 100.0% of statements",
        "terminate called after throwing an instance of 'std::out_of_range'", "  what():  map::at",
        "main.stage(0x9, 0xdaccc700070, 0x0?)", "fatal error: all goroutines are asleep - deadlock!",
        "goroutine 12 [chan send]:", "    at Test.runInAsyncScope (node:async_hooks:206:9)",
        "ℹ tests 41", "ℹ pass 37", "ℹ fail 4", "ℹ todo 0", "ℹ duration_ms 406.9", " Test Files  5 passed (5)",
        "      Tests  48 passed (48)", "Tests  3 failed | 45 passed (48)",
        "WARNING: ThreadSanitizer: data race (pid=9502)", "    #0 work /tmp/race.c:4 (race+0x11e9)",
        "    #0 pthread_create ../../src/libsanitizer/tsan/x.cpp:1001 (libtsan.so.2+0x5e686)",
        "error[E0308]: mismatched types", "error: missing field `weight`", "  --> src/a.rs:9:5",
        "   |        ^^^^ expected `u32`, found `&str`", "   |   ---  ^^^ help", "warning: unused",
        "src/lib/A.java:10: error: cannot find symbol", "  symbol:   variable size",
        "  required: int", "  location: class A",
        "  3 failing", "  1) cart", "    1) never returns a negative total", "       coupons",
        "         never returns a negative total:", "SUBFAILED(total=10) tests/t.py::test_x",
        "Errors while running CTest", "  src/types.ts:1:51", "    'unitCents' is declared here.",
        "\tlib/a.go:3:9",
        "Found one Java-level deadlock:", '"ledger-reconciler":', "Found 1 deadlock.",
        '  which is held by "journal-poster"', "\tat Ledger.post(Ledger.java:20)",
        "SIGQUIT: quit", "goroutine 18 gp=0x33b0 m=nil [sleep]:",
        "\t/w/cmd/main.go:26 +0x74 fp=0x33b0 sp=0x33b0 pc=0x49f9",
        "In deploy.sh line 13:", "^----^ SC2086 (info): Double quote to prevent globbing.",
        "CONFLICT (content): Merge conflict in a.py", "Could not apply 3d375cd... fix",
        "9a6e7d59 (Sam Okafor 2026-10-01 09:16:00 +0000 13)         return x",
        "^e486879 (Dana Ruiz  2026-10-01 09:01:00 +0000  2) ",
    ]
)  # fmt: skip
MULTILINE = st.lists(LINE_PARTS, max_size=25).map("\n".join)
FAMILIES = st.sampled_from([None, "grep", "git-status"])


@settings(max_examples=3000, deadline=None)
@given(st.one_of(MULTILINE, st.text(max_size=80)), FAMILIES)
def test_critical_line_rules_with_fast_paths_equal_the_plain_rules(
    text: str, family: str | None
) -> None:
    assert list(facts._tool_lines(text, family)) == list(reference_tool_lines(text, family))


@pytest.mark.slow
def test_critical_line_rules_on_the_corpus_equal_the_plain_rules(corpus_lines: list[bytes]) -> None:
    for raw in corpus_lines:
        record = parse_record(orjson.loads(raw))
        for unit in record.units:
            for family in (None, facts.command_family(unit.command)):
                assert list(facts._tool_lines(unit.text, family)) == list(
                    reference_tool_lines(unit.text, family)
                )


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", " ", "\t", "\n", "\r", "\r\n", "  \n", "é", "|"]), max_size=30
    ).map("".join)
)
def test_line_end_stripping_is_the_regex_definition(text: str) -> None:
    from workers.engines.whitespace import _TRAILING_FAST, strip_line_ends

    assert strip_line_ends(text) == _TRAILING_FAST.subn("", text)


# --- line_shape -------------------------------------------------------------

# The shape pattern as it was before its fast paths (no ``cold`` run, no guards).
PLAIN_SHAPE_TOKEN = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
    r"|\d\d?/[A-Z][a-z]{2}/\d{4}(?::\d\d:\d\d:\d\d(?: [+-]\d{4})?)?"
    r"|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?)"
    r"|\b(?:pool-\d+-thread-\d+|(?:(?:https?|ajp)-)?(?:nio2?|bio|apr)-(?:[\w.]+-)?\d+-exec-\d+"
    r"|ForkJoinPool(?:\.commonPool|-\d+)-worker-\d+|Thread-\d+|ThreadPoolExecutor-\d+_\d+)\b"
    r"|(?P<pos>(?<![\w.~%+/-])(?:[\w.~%+-]*/)*(?:[\w-]+\.[A-Za-z]\w{0,9}|[\w-]*[Mm]akefile)"
    r"(?P<at>:\[?\d+(?:[:,]\d+)*\]?|\(\d+(?:,\d+)?\))|\bline \d+)"
    r"|(?P<keep>"
    r"HTTP/\d(?:\.\d)?\"?\s+\d{3}\b"
    r"|(?<![\w.~%+/-])(?=\S*?[A-Za-z_])[\w.~%+-]*(?:/[\w.~%+-]+)+"
    r"|\b(?:status|code|Status|HTTP|status_code|statusCode)\"?[=: ]{1,3}\d{3}\b"
    r"|(?:\b\w+_id|\b\w*[a-z]Id|\bID|\bid)\b\"?[=:# ]{1,3}\d+"
    r"|\b[A-Za-z][A-Za-z_]*[-_]?\d+(?:-\d+)*\b"
    r"|(?P<named>(?i:\b(?:record|row|item|order|job|task|case|shard|partition|offset|page"
    r"|request|index|entry|element|account|customer|invoice|user|test|chunk|batch|column|step"
    r"|ticket|issue)s?) #?\d+\b)"
    r"|(?<=Error: )-?\d+(?:\.\d+)?$|(?<=Exception: )-?\d+(?:\.\d+)?$"
    r"|(?<=[A-Za-z]):\d{2,5}\b"
    r"|(?<!client )(?<!client=)(?<!remote=)(?<!peer=)(?<!remote_addr=)(?<!remoteAddr=)"
    r"\b\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}\b"
    r"|#\d+"
    r")"
    r"|0x[0-9a-fA-F]+|\b[0-9a-f]{7,64}\b|\d+"
)


def plain_warning_shape_token(match: re.Match[str]) -> str:
    """The warning reading as it was before its fast path (``named`` asked first)."""
    if match.group("named") is not None:
        return facts._DIGITS.sub("#", match.group())
    if match.lastgroup == "keep" and "/" in match.group() and not match.group().startswith("HTTP"):
        return facts._PATH_NUMBER.sub("#", match.group())
    if match.lastgroup == "pos":
        at = match.group("at")
        if at is None:
            return "line #"
        return match.group()[: -len(at)] + facts._DIGITS.sub("#", at)
    return facts._shape_token(match)


def reference_line_shape(line: str) -> str:
    """line_shape with every regex on every line (no hints, no cold runs, no guards)."""
    eslint = facts._ESLINT_ERROR.match(line)
    if eslint is not None:
        return eslint.group(1) + reference_line_shape(eslint.group(2))
    line = facts.REQUEST_ID.sub(r"\1#", line)
    if "/proc/" in line:
        line = facts._PROC_PID.sub(lambda m: facts._DIGITS.sub("#", m.group()), line)
    note = facts._DIAG_NOTE.match(line) is not None or (
        line[:1] not in " \t" and facts._LINT_WARNING.match(line) is not None
    )
    if note or (
        facts._WARNING_WORD.search(line) is not None and facts._ERROR_LEVEL.search(line) is None
    ):
        if note or facts._DIAG_WARNING.match(line):
            line = facts._BLANKS.sub(" ", facts._QUOTED.sub("'#'", line))
        return PLAIN_SHAPE_TOKEN.sub(plain_warning_shape_token, line)
    if facts._ASSERTION_WORDS.search(line) is not None:
        return PLAIN_SHAPE_TOKEN.sub(facts._time_token, line)
    return PLAIN_SHAPE_TOKEN.sub(facts._shape_token, line)


SHAPE_PARTS = st.sampled_from(
    [
        " ", "  ", "\t", "\u00a0", "\u3000", "\n", "=", ":", "#", "+", "-", "/", ".", ",", "(",
        ")", "[", "]", '"', "'", "`", "\u2018", "\u2019", "~", "%", "_", "\x1b[31m", "\x1b[0m",
        "0", "7", "12", "338", "2026", "\u0661\u0662", "0x1f", "0xZZ", "deadbee", "deadbeef",
        "abcdef", "abcdef0", "cafe", "faced", "effaced", "ABCDEF0", "1a2b3c4d5e", "a" * 7,
        "2026-12-01", "2026-12-01 09:29:24,718", "2024-03-01T10:00:00Z", "+0000", "10:00:01",
        "12/Mar/2025:10:00:01 +0000", "HTTP/1.1\" 502", "HTTP/2 200", "status=500", "code: 404",
        "Status 200", "user_id=12", "orderId: 7", "ID #3", "id 9", "host-12", "case_5", "E0308",
        "batch 3", "Batch #4", "rows 12", "İtem 3", "ıtems 3", "teſt 2", "\u212aey 1", "records",
        "Error: 12", "Exception: -3.5", "KeyError: 12", "localhost:8080", "#123", "line 12",
        "src/app.py:12:5", "a/b.js(3,4)", "Makefile:5", "x.c:[12,5]", "/proc/123/task/45",
        "/var/log/app.log", "./run.sh", "~/x", "a.b.c", "inventory.sync", "/tmp/rx9h6i2j/x.py",
        "warning: ", "warning[E1]: ", "x.c:3:4: warning: ", "a.ts(1,2): warning ", "3:7  warning ",
        "a.py:55:80: E501 ", "a.py:3:1: F821 ", "a.py:12:0: W0611: ", "a.py:1:0: E1101: ",
        "WARNING", "Warning", "WARN", "error", "ERROR", "Error", "FAILED", "fatal", "panicked",
        "ValueError", "denied", "expected", "Expected", "got", "want", "but was", "Received",
        "assert", " == ", " != ", " === ", "==", "unused variable 'a'", "`b`", '"c d"', "\u2018e\u2019",
        "é", "ü", "ß", "日本", "\U0001f600", "x", "ab", "upstream slow", "(latency", "ms", "of",
        "status =500", "code :404", "HTTP  =200", "user_id =12", "ID :=3", "id ==5", "x id #7",
        "Status  : 201", "pool-2-thread-3", "Thread-12", "http-nio-8080-exec-7", "nio-8080-exec-1",
        "ForkJoinPool.commonPool-worker-3", "ThreadPoolExecutor-0_1", "127.0.0.1:7", "10.8.0.237:7946",
        "1.2.3", "reqId=req-ec692", '"traceId":"4bf92f3577b34da6"', "request_id: r-1", "[warn]", '"level":40', '"level":"warn"', "page #2", "shards  5", "tas\u212a 3", "chun\u212a 4", "Id 12", "ID 1",
        "user_Id=3", "xId: 4", "aid 5", "_id 5", "pages 3", "Jobs #9", "ROW 1", "the 7", "of 5", "shard 3", "Step 2",
    ]
)  # fmt: skip
SHAPE_LINES = st.one_of(
    st.lists(SHAPE_PARTS, max_size=24).map("".join),
    st.text(st.sampled_from("0123456789abcdefxyzABC :=#+-/._()\"' \t\u00a0é\u0661"), max_size=60),
    st.text(max_size=60),
)


@settings(max_examples=6000, deadline=None)
@given(SHAPE_LINES)
def test_line_shape_with_fast_paths_is_the_plain_rule(line: str) -> None:
    assert facts.line_shape.__wrapped__(line) == reference_line_shape(line)
    # the pattern alone, under each of its three readings (whatever the line's branch)
    for token, plain in (
        (facts._shape_token, facts._shape_token),
        (facts._warning_shape_token, plain_warning_shape_token),
        (facts._time_token, facts._time_token),
    ):
        assert facts._SHAPE_TOKEN.sub(token, line) == PLAIN_SHAPE_TOKEN.sub(plain, line)


@settings(max_examples=3000, deadline=None)
@given(SHAPE_LINES)
def test_shape_hints_hold_in_every_match(line: str) -> None:
    if facts._ERROR_LEVEL.search(line) is not None:
        assert facts._ERROR_LEVEL_HINT.search(line) is not None
    if facts._ASSERTION_WORDS.search(line) is not None:
        assert facts._ASSERTION_HINT.search(line) is not None
    if PLAIN_SHAPE_TOKEN.sub(facts._shape_token, line) != line:
        assert facts._HOT.search(line) is not None


def test_line_shape_examples() -> None:
    line = (
        "2026-12-01 09:29:24,720 WARNING inventory.sync [4362] batch 3 of 900: upstream slow"
        " (latency 361 ms above the 250 ms budget), retrying"
    )
    assert facts.line_shape(line) == (
        "# WARNING inventory.sync [#] batch # of #: upstream slow"
        " (latency # ms above the # ms budget), retrying"
    )
    # a digit-free run before a blank and a number is not cold: the path keeps 'batch 3' apart
    assert facts.line_shape("ERROR /var/batch 3 effaced") == "ERROR /var/batch # #"
    assert facts.line_shape("ERROR x batch 3 of effaced") == "ERROR x batch 3 of #"
    assert facts.line_shape("ERROR status : 500 at x.py:12") == "ERROR status : 500 at x.py:12"
    assert facts.line_shape("no digits here, no hex") == "no digits here, no hex"
    assert facts.line_shape("KeyError: 12\n") == "KeyError: 12\n"
    assert facts.line_shape("KeyError: 12 x") == "KeyError: # x"


@pytest.mark.slow
def test_line_shape_on_the_corpus_is_the_plain_rule(corpus_lines: list[bytes]) -> None:
    for raw in corpus_lines:
        record = parse_record(orjson.loads(raw))
        for unit in record.units:
            for line in unit.text.splitlines():
                key = line.strip()[:600]
                assert facts.line_shape.__wrapped__(key) == reference_line_shape(key)
