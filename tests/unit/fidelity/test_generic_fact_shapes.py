"""Facts read by their shape, whatever tool printed them (held-out set 10, tools no rule
names): a runner's closing list of failures, a full commit id opening a sentence (git
bisect's answer), an error code in CONST_CASE (memcached's ``SERVER_ERROR``), a linter's
positional row marked by a cross instead of a word (stylelint, biome).  Each is kept visible
by standard mode, and aggressive mode condenses an older output around it."""

from __future__ import annotations

import json
from typing import Any

from tests.support.sessions import bash_session
from workers.core.settings import Settings
from workers.fidelity.facts import critical_lines, is_error_line, line_shape
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record

SHA = "d3fa0b8567a9e27bbab054d1dc8bf8f51164abc3"
BEHAVE_TAIL = """\
Errored scenarios:
  features/loans.feature:15  Borrow a book
  features/loans.feature:35  Fines for late returns -- @1.1
  features/loans.feature:36  Fines for late returns -- @1.2
  features/loans.feature:37  Fines for late returns -- @1.3

0 features passed, 0 failed, 1 error, 0 skipped
0 scenarios passed, 0 failed, 9 error, 0 skipped
"""
STYLELINT = """\

styles/shop.css
   1:7   ✖  Expected no more than 1 declaration   declaration-block-single-line-max-declarations
   2:15  ✖  Unexpected unknown property "colr"     property-no-unknown
   3:28  ✖  Unexpected invalid hex color "#ggg"    color-no-invalid-hex
   9:1   ⚠  Expected empty line before at-rule     at-rule-empty-line-before

4 problems (3 errors, 1 warning)
"""


def _kinds(text: str, command: str | None = None) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for kind, line in critical_lines(text, "tool_result", command):
        out.setdefault(kind, set()).add(line)
    return out


def test_every_item_of_a_closing_list_of_failures_is_a_failing_test() -> None:
    failing = _kinds(BEHAVE_TAIL, "behave")["test_failure"]
    assert failing == {line.strip() for line in BEHAVE_TAIL.splitlines()[1:5]}
    # the list ends at the blank line: the totals are a summary, no failing test
    assert not any("features passed" in line for line in failing)


def test_a_full_commit_id_opening_a_sentence_is_a_commit() -> None:
    text = f"Bisecting: 0 revisions left to test after this\n{SHA} is the first bad commit\n"
    assert _kinds(text, "git bisect run ./t.sh")["commit"] == {f"{SHA} is the first bad commit"}
    assert "commit" not in _kinds(f"{SHA[:39]} is short\n")  # 39 digits: no full id
    # plumbing that puts a sha in front of every row: no sentence, no fact each
    for row in (
        f"{SHA} (Alice Example 2026-02-16 11:00:00 +0100 12)     return x",  # git blame -l
        f"{SHA} refs/heads/main",  # git show-ref
        f"{SHA} blob 1234",  # git cat-file --batch-check
    ):
        assert "commit" not in _kinds("\n".join([row] * 20) + "\n"), row


def test_an_error_code_in_const_case_is_an_error_line() -> None:
    assert is_error_line(">24 SERVER_ERROR object too large for cache")
    assert is_error_line("CLIENT_ERROR bad data chunk")
    assert not is_error_line("MAX_ERRORS = 3")
    assert not is_error_line("the HTTP_ERROR_CODE table")
    # a name that says none happened, or what to do on one (a review found these)
    assert not is_error_line("proxy conn=7 GOAWAY received code=NO_ERROR last_stream=9")
    assert not is_error_line("return EXIT_FAILURE;")
    assert not is_error_line("set ON_ERROR stop")


def test_a_linter_row_marked_by_a_cross_is_an_error_line_of_its_own_place() -> None:
    rows = [line for line in STYLELINT.splitlines() if ":" in line and "problems" not in line]
    assert all(is_error_line(row.strip()) for row in rows)
    # two rows of one message at two places are two facts (as eslint's ``error`` rows)
    assert line_shape("1:7   ✖  Expected x") != line_shape("4:14  ✖  Expected x")


def _session(output: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command})
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return {
        "id": "generic",
        "messages": [
            {"role": "user", "content": "Check the styles."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": output},
            {"role": "assistant", "content": "I have the output above."},
            {"role": "user", "content": "Thanks. Now write the release notes."},
        ],
    }


def test_aggressive_mode_keeps_the_crossed_rows_of_an_older_lint_run() -> None:
    # held-out set 10: all 16 stylelint findings of an answered run went into aging's stash
    data = _session(STYLELINT * 3, "npx stylelint styles")
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(data)
    shown = outcome.record["messages"][2]["content"]
    for row in STYLELINT.splitlines():
        if "✖" in row:
            assert row in shown.splitlines(), row
    assert expanded_record(outcome) == data


JASMINE = """\
Failures:
1) Cart adds quantities for the same sku
  Message:
    Expected $[0].qty = 3 to equal 5.
  Stack:
        at UserContext.<anonymous> (file:///app/spec/cart.spec.mjs:12:21)

2) format pads cents
  Message:
    Expected '10,5 EUR' to be '10,05 EUR'.

7 specs, 2 failures
"""
MESON = """\
1/4 cqueue:test_queue  OK              0.01s
2/4 cqueue:test_pool   FAIL            0.02s   exit status 1
4/4 cqueue:test_stress TIMEOUT        10.06s   killed by signal 15 SIGTERM

Ok:                1
Fail:              2
Timeout:           1
"""


def test_a_matcher_sentence_under_a_failing_test_is_part_of_the_failure() -> None:
    failing = _kinds(JASMINE, "npx jasmine")["test_failure"]
    assert "Expected $[0].qty = 3 to equal 5." in failing
    assert "Expected '10,5 EUR' to be '10,05 EUR'." in failing
    # no failing test above it: a sentence, no fact
    assert "test_failure" not in _kinds("Expected 3 to equal 3, and it did.\n")


def test_a_counted_result_that_failed_and_its_totals_are_facts() -> None:
    kinds = _kinds(MESON, "meson test -C build")
    assert kinds["test_failure"] == {line for line in MESON.splitlines() if "/4 " in line} - {
        MESON.splitlines()[0]
    }
    assert {"Fail:              2", "Timeout:           1"} <= kinds["test_summary"]


def test_a_linker_error_is_an_error_line() -> None:
    assert is_error_line("/usr/bin/ld: main.c:(.text+0xa2): undefined reference to `pool_join'")
    assert is_error_line("ld.lld: error: undefined symbol: pool_start")
    assert is_error_line("/usr/bin/ld: b.o: multiple definition of `main'; a.o: first defined here")


def test_the_message_under_a_bare_error_headline_is_a_fact() -> None:
    jshell = (
        "jshell> |  Error:\n"
        "|  incompatible types: java.lang.String cannot be converted to int\n"
        '|  int x = "abc";\n'
    )
    kinds = _kinds(jshell, "jshell -q")
    assert kinds["error_detail"] == {
        "|  incompatible types: java.lang.String cannot be converted to int"
    }
    # a heading that only starts with the word is no bare headline
    assert "error_detail" not in _kinds("Error codes:\n  E1 bad input\n")


ANT_JUNIT = """\
test:
    [junit] Running com.acme.ship.DispatcherTest
    [junit] Tests run: 4, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.014 sec
    [junit] \x20
    [junit] Testcase: dispatchClean took 0.006 sec
    [junit] \tCaused an ERROR
    [junit] printer zebra-2 did not release spool
    [junit] java.lang.IllegalStateException: printer zebra-2 did not release spool
    [junit] \tat com.acme.ship.Dispatcher.dispatch(Unknown Source)
    [junit] \x20
    [junit] Testcase: weightClassOfTen took 0 sec
    [junit] Testcase: weightClassRoundsUp took 0 sec
    [junit] \tFAILED
    [junit] expected:<3> but was:<2>
    [junit] junit.framework.AssertionFailedError: expected:<3> but was:<2>
    [junit] \x20
    [junit] Testcase: badWeight took 0 sec
    [junit] Test com.acme.ship.DispatcherTest FAILED

BUILD FAILED
"""


def test_a_verdict_alone_on_its_line_names_the_test_above_it() -> None:
    failures = _kinds(ANT_JUNIT, "ant test")["test_failure"]
    assert "[junit] Testcase: dispatchClean took 0.006 sec" in failures
    assert "[junit] Testcase: weightClassRoundsUp took 0 sec" in failures
    assert not any("weightClassOfTen" in f or "badWeight" in f for f in failures)
    record = {"id": "a", "kind": "tool_output", "command": "ant test", "content": ANT_JUNIT}
    outcome = Pipeline(Settings(mode="standard")).run_raw(record)
    assert "Testcase: dispatchClean took" in outcome.record["content"]
    assert "Testcase: weightClassRoundsUp took" in outcome.record["content"]
    assert expanded_record(outcome) == record


GO_BENCH = """\
goos: linux
goarch: amd64
pkg: example.com/meterd/meter
BenchmarkParseLine-2   \t14886397\t        93.32 ns/op\t      48 B/op\t       1 allocs/op
BenchmarkParseLine-2   \t14755849\t        77.02 ns/op\t      48 B/op\t       1 allocs/op
BenchmarkKey-2         \t30866554\t        40.62 ns/op\t      16 B/op\t       1 allocs/op
PASS
ok  \texample.com/meterd/meter\t9.417s
"""


def test_a_benchmarks_result_rows_are_its_summary() -> None:
    rows = {line.strip() for line in GO_BENCH.splitlines() if line.startswith("Benchmark")}
    assert rows <= _kinds(GO_BENCH, "go test -bench . -count=2")["test_summary"]
    for row in (
        "test bench_parse ... bench:       1,234 ns/iter (+/- 56)",  # Rust's libtest
        "parse_line              time:   [93.112 ns 93.508 ns 93.990 ns]",  # criterion
        "200000 loops, best of 5: 1.39 usec per loop",  # python -m timeit
    ):
        assert _kinds(row + "\n")["test_summary"] == {row}
    # an older benchmark run in a long session: aggressive keeps every row (the results)
    record = bash_session(
        [("go test -bench . -count=2 ./meter", GO_BENCH)]
        + [(f"echo step {j}", f"step {j}\n" * 30) for j in range(8)],
        ask="Make ParseLine faster.",
        final="Is it faster now?",
    )
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    for row in rows:
        assert row in outcome.record["messages"][2]["content"].splitlines()
    assert expanded_record(outcome) == record


def test_prove_totals_and_the_line_under_a_bare_failed_are_facts() -> None:
    prove = (
        "Files=2, Tests=10,  0 wallclock secs ( 0.02 usr +  0.07 cusr =  0.10 CPU)\nResult: FAIL\n"
    )
    assert _kinds(prove, "prove -v")["test_summary"] == set(prove.splitlines())
    coverage = "File 'stats.c'\nLines executed:77.78% of 9\n\n  lines......: 87.5% (7 of 8 lines)\n"
    assert _kinds(coverage, "gcov -b stats.c")["test_summary"] == {
        "Lines executed:77.78% of 9",
        "lines......: 87.5% (7 of 8 lines)",
    }
    promtool = 'Checking rules.yml\n  FAILED:\nrules.yml: not a valid duration string: "10x"\n'
    assert 'rules.yml: not a valid duration string: "10x"' in _kinds(promtool)["error_detail"]


GTEST = """\
[ RUN      ] Median.Even
/home/dev/cppq/tests/test_stats.cpp:12: Failure
Expected equality of these values:
  median({4, 1, 3, 2})
    Which is: 3
  2.5
even-sized sample must average the middle pair
[  FAILED  ] Median.Even (0 ms)
[ RUN      ] Median.Odd
[       OK ] Median.Odd (0 ms)
"""
CATCH2 = """\
test_queue.cpp:23: FAILED:
  REQUIRE( q.pop().id == "high" )
with expansion:
  "low" == "high"

-------------------------------------------------------------------------------
"""
JUNIT_CONSOLE = """\
Failures (1):
  JUnit Jupiter:PricingTest:weekDiscount()
    MethodSource [className = 'com.acme.cal.PricingTest', methodName = 'weekDiscount']
    => org.opentest4j.AssertionFailedError: expected: <59670> but was: <57870>
       org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
       com.acme.cal.PricingTest.weekDiscount(PricingTest.java:20)
"""
UV = """\
error: No solution found when resolving dependencies
  cause: Because pandas==2.2.3 depends on numpy>=1.23.2 and you require pandas==2.2.3, we can conclude that you require numpy>=1.23.2.
         And because you require numpy<1.22, we can conclude that your requirements are unsatisfiable.
"""


def test_a_cpp_test_failures_values_are_the_failure() -> None:
    failing = _kinds(GTEST, "./build/stats_test")["test_failure"]
    for row in ("Which is: 3", "2.5", "median({4, 1, 3, 2})"):
        assert row in failing
    assert "Expected equality of these values:" not in failing  # a label, under every one
    assert "even-sized sample must average the middle pair" in failing
    assert not any("Median.Odd" in row for row in failing)
    failing = _kinds(CATCH2, "./test_queue")["test_failure"]
    assert {'REQUIRE( q.pop().id == "high" )', '"low" == "high"'} <= failing
    assert not any(row.startswith("---") for row in failing)


def test_a_console_launchers_failing_test_and_an_errors_cause_are_facts() -> None:
    assert "JUnit Jupiter:PricingTest:weekDiscount()" in _kinds(JUNIT_CONSOLE)["test_failure"]
    details = _kinds(UV, "uv pip compile requirements.in")["error_detail"]
    assert len(details) == 2 and all(
        "Because pandas" in row or "unsatisfiable" in row for row in details
    )
    # a cause line in a report that holds no error is just a line
    assert "error_detail" not in _kinds("config:\n  reason: maintenance window\n")
    for text, command in ((GTEST, "./stats_test"), (UV, "uv pip compile r.in")):
        record = {"id": "g", "kind": "tool_output", "command": command, "content": text}
        outcome = Pipeline(Settings(mode="standard")).run_raw(record)
        assert expanded_record(outcome) == record
        shown = outcome.record["content"]
        assert "Which is: 3" in shown or "unsatisfiable" in shown


def test_the_new_shapes_stay_inside_their_blocks() -> None:
    # review of this round: each of these made ordinary lines critical
    yaml = "warning: image tag 'latest' is deprecated\nkind: Pod\nstatus:\n  reason: |\n" + "".join(
        f"      step {i}: copy layer {i}\n" for i in range(30)
    )
    assert "error_detail" not in _kinds(yaml, "./deploy.sh")  # a cause only right under an error
    glog = GTEST.replace(
        "even-sized sample must average the middle pair\n",
        "I0501 12:00:00.000000  42 server.cc:100] closing connection 0\n",
    )
    assert not any("closing connection" in row for row in _kinds(glog)["test_failure"])
    notes = "notes.txt:3: Failure\nthe plan failed, we retry\nmonday\n"
    assert "test_failure" not in _kinds(notes, "cat notes.txt")
    prose = "Error: build failed\nThe difference between a cache and a buffer is lifetime.\n"
    assert not any("cache" in row for rows in _kinds(prose).values() for row in rows)
    verdict = "Build summary\n\nFAILED\n"
    assert "Build summary" not in _kinds(verdict).get("test_failure", set())
    jobs = "The jobs that Failed:\nnone of them, all good\n"
    assert "error_detail" not in _kinds(jobs)
    # Catch2 with -s prints its passing assertions too: only the failing one is a failure
    passing = "".join(
        f"test_queue.cpp:{30 + i}: PASSED:\n  REQUIRE( q.size() == {i} )\nwith expansion:\n"
        f"  {i} == {i}\n\n"
        for i in range(5)
    )
    failing = _kinds(CATCH2 + "\n" + passing, "./tests -s")["test_failure"]
    assert not any("q.size()" in row or "with expansion" in row for row in failing)
