"""Facts by shape from held-out sets 13 and 14 (tools no rule names).  Set 13: ava's failure blocks
(``Difference (- actual, + expected):``, the bare ``test/cart.test.js:12`` above the source,
an error object's ``message:``), tparse's ``PANIC`` box, load tests' throughput rows
(redis-benchmark, ab, wrk), a JUnit XML report's failing ``<testcase>`` and a DNS answer's
failing status.  Standard mode kept the ava run's diff lines behind ``… 12 lines omitted``
(the output came under ``pnpm test``: pnpm's own filter, head and tail)."""

from __future__ import annotations

from tests.support.fact_kinds import facts_by_kind as _facts
from tests.support.sessions import bash_session
from workers.core.settings import Settings
from workers.fidelity.facts import critical_lines, is_error_line
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record

AVA_FRAMES = "".join(
    f"      at Runner.run{i} (file:///app/node_modules/.pnpm/ava@6.2.0/node_modules/ava/lib/"
    f"runner.js:{281 + i}:33)\n"
    for i in range(8)
)
AVA = f"""\

> cartjs@1.2.0 test /app
> ava


  ✘ [fail]: shipping › quote rounds up to a started kg
  ✔ shipping › quote for EU
  ✔ cart › subtotal sums lines
  ✔ cart › unknown coupon throws
  ✘ [fail]: cart › adding the same sku twice accumulates qty
  ✘ [fail]: cart › fractional qty is rejected
  ─

  shipping › quote rounds up to a started kg

  test/shipping.test.js:24

   23:   const c = new Cart().add('A-1', 5, 100);
   24:   t.is(await quote(c, 'UK', fetchRate), 610 * 2);
   25: }});

  Difference (- actual, + expected):

  - 763
  + 1220

  › file://test/shipping.test.js:24:5



  cart › adding the same sku twice accumulates qty

  test/cart.test.js:12

   11:   t.is(c.lines.length, 1);
   12:   t.is(c.lines[0].qty, 5);
   13: }});

  Difference (- actual, + expected):

  - 3
  + 5

  › file://test/cart.test.js:12:5



  cart › fractional qty is rejected

  Function threw unexpected exception:

  TypeError {{
    message: 'qty must be an integer, got 1.5',
  }}

  TypeError: qty must be an integer, got 1.5
      at Cart.add (file:///app/src/cart.js:8:39)
{AVA_FRAMES}
  ─

  3 tests failed
 ELIFECYCLE  Test failed. See above for more details.
"""
FAILURE_LINES = (
    "- 763",
    "+ 1220",
    "- 3",
    "+ 5",
    "test/shipping.test.js:24",
    "test/cart.test.js:12",
    "message: 'qty must be an integer, got 1.5',",
)
JUNIT_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1">
\t<testsuite name="example.com/gobill/tax" tests="3" failures="1" errors="0" time="0.003">
\t\t<testcase name="TestRate" classname="example.com/gobill/tax" time="0.000"></testcase>
\t\t<testcase name="TestVAT" classname="example.com/gobill/tax" time="0.000">
\t\t\t<failure message="Failed"><![CDATA[    tax_test.go:18: VAT("DE", 1999) = 379, want 380]]></failure>
\t\t</testcase>
\t\t<testcase name="TestReverse" classname="example.com/gobill/tax" time="0.000"></testcase>
\t</testsuite>
</testsuites>
"""


def test_an_ava_failures_diff_its_place_and_its_errors_message_are_facts() -> None:
    facts = set().union(*_facts(AVA).values())
    for line in FAILURE_LINES:
        assert line in facts, line
    # the source lines and a passing test are none
    assert "12:   t.is(c.lines[0].qty, 5);" not in facts
    assert "✔ shipping › quote for EU" not in facts


def test_a_bare_place_or_a_message_outside_a_failure_is_no_fact() -> None:
    listing = "  src/cart.js:12\n  config {\n    message: 'hello',\n  }\n"
    assert critical_lines(listing, "tool_result") == frozenset()
    # under an error, an address is no place in a file
    assert _facts("Error: connect ECONNREFUSED\n  127.0.0.1:5432\n").get("location") is None


def test_standard_mode_keeps_an_ava_failure_under_a_package_managers_command() -> None:
    for command in ("pnpm test 2>&1", "npm test", "yarn test"):
        data = bash_session([(command, AVA)], ask="Why do the cart tests fail?")
        outcome = Pipeline(Settings(mode="standard")).run_raw(data)
        shown = outcome.record["messages"][2]["content"].splitlines()
        stripped = {line.strip() for line in shown}
        for line in FAILURE_LINES:
            assert line in stripped, (command, line)
        assert expanded_record(outcome) == data


def test_a_panic_in_capitals_is_an_error_line() -> None:
    assert is_error_line("┃   PANIC  package: example.com/gobill/tax • TestRateAll   ┃")
    assert is_error_line("│ PANIC  │  0.00s  │ example.com/gobill/tax │")
    assert not is_error_line("│ PASS  │  0.00s  │ example.com/gobill/tax │")


def test_a_load_tests_throughput_rows_are_its_summary() -> None:
    text = (
        " \rSET: rps=0.0 (overall: 37000.0) avg_msec=0.049 (overall: 0.049)\r"
        "SET: 52631.58 requests per second, p50=0.063 msec\n"
        " \rGET: 51948.05 requests per second, p50=0.071 msec\n"
        "LRANGE_100 (first 100 elements): 54054.05 requests per second, p50=0.063 msec\n"
        "Requests per second:    1480.27 [#/sec] (mean)\n"
        "Requests/sec:   2304.12\n"
        "Transfer/sec:      1.21MB\n"
    )
    summaries = _facts(text).get("test_summary", set())
    assert summaries == {
        "SET: 52631.58 requests per second, p50=0.063 msec",
        "GET: 51948.05 requests per second, p50=0.071 msec",
        "LRANGE_100 (first 100 elements): 54054.05 requests per second, p50=0.063 msec",
        "Requests per second:    1480.27 [#/sec] (mean)",
        "Requests/sec:   2304.12",
    }


def test_the_testcase_a_junit_failure_opens_under_is_the_failing_test() -> None:
    failing = _facts(JUNIT_XML).get("test_failure", set())
    assert failing == {'<testcase name="TestVAT" classname="example.com/gobill/tax" time="0.000">'}


def test_a_dns_answers_failing_status_is_an_error_line() -> None:
    assert is_error_line(";; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: 2136")
    assert is_error_line("dnsmasq[25380]: 4 127.0.0.1/56726 config nope.internal is NXDOMAIN")
    assert is_error_line(";; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: 7")
    assert not is_error_line(";; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 24730")


# held-out set 14: squid, morgan, tracing and JSON logs' 5xx requests, Spring Boot's failure
# analysis, clang's ThreadSanitizer and MemorySanitizer reports
SQUID = """\
1796631852.442      0 127.0.0.1 TCP_MISS/200 284 GET http://127.0.0.1:47141/api/ok/3 - HIER_DIRECT/127.0.0.1 -
1796631852.461      0 127.0.0.1 TCP_MISS/503 3466 GET http://127.0.0.1:47149/billing/charge/5 - HIER_DIRECT/127.0.0.1 text/html
"""
SPRING = """\
***************************
APPLICATION FAILED TO START
***************************

Description:

Parameter 0 of constructor in com.acme.orders.PricingService required a bean of type 'com.acme.orders.FxClient' that could not be found.


Action:

Consider defining a bean of type 'com.acme.orders.FxClient' in your configuration.
"""
TSAN = """\
==================
WARNING: ThreadSanitizer: data race (pid=11813)
  Read of size 8 at 0x55daee2cf258 by thread T2:
    #0 worker /src/race.c:10:9 (race+0xd01c5) (BuildId: e111c5df34deaef6d1e12821a9d9cc965facf8c1)
    #1 start /src/race.c:30:3 (race+0xd01c9) (BuildId: e111c5df34deaef6d1e12821a9d9cc965facf8c1)

  Previous write of size 8 at 0x55daee2cf258 by thread T1:
    #0 worker /src/race.c:11:13 (race+0xd01e1) (BuildId: e111c5df34deaef6d1e12821a9d9cc965facf8c1)

  Location is global 'hits' of size 8 at 0x55daee2cf258 (race+0x1476258)

SUMMARY: ThreadSanitizer: data race /src/race.c:10:9 in worker
==================
"""
MSAN = """\
==19692==WARNING: MemorySanitizer: use-of-uninitialized-value
    #0 0x558f90f11516 in main /src/uninit.c:18:9
    #1 0x7ff57d096249 in __libc_start_call_main csu/../sysdeps/nptl/libc_start_call_main.h:58:16

  Uninitialized value was created by an allocation of 'c' in the stack frame of function 'main'
    #0 0x558f90f11290 in main /src/uninit.c:14

SUMMARY: MemorySanitizer: use-of-uninitialized-value /src/uninit.c:18:9 in main
"""


def test_a_request_answered_with_a_5xx_is_an_error_line_in_every_log_shape() -> None:
    errors = _facts(SQUID).get("error_line", set())
    assert errors == {SQUID.splitlines()[1]}
    for line in (
        "GET /orders/3 500 4.123 ms - 148",
        "2026-12-07T08:30:01Z  INFO rgate: finished request method=POST uri=/pay status=502",
        '{"ts": 1, "path": "/api/orders", "status": 503}',
    ):
        assert _facts(line + "\n").get("error_line") == {line}, line
    for line in (
        "GET /orders/3 200 4.1 ms - 148",
        'http_requests_total{method="GET",route="/healthz",status="503"} 4',
        '{"status": 200, "path": "/api/orders"}',
    ):
        assert critical_lines(line + "\n", "tool_result") == frozenset(), line


def test_what_a_failure_analysis_describes_is_part_of_the_error() -> None:
    details = _facts(SPRING).get("error_detail", set())
    assert details == {SPRING.splitlines()[6]}
    # a ``Description:`` with no error above it says nothing of one
    assert critical_lines("Description:\n\nA small web shop.\n", "tool_result") == frozenset()


def test_each_sanitizer_access_and_origin_keeps_its_first_user_frame() -> None:
    tsan = _facts(TSAN)
    assert tsan["stack_frame"] == {TSAN.splitlines()[3].strip(), TSAN.splitlines()[7].strip()}
    assert tsan["error_detail"] == {
        "Location is global 'hits' of size 8 at 0x55daee2cf258 (race+0x1476258)"
    }
    msan = _facts(MSAN)
    assert msan["stack_frame"] == {
        "#0 0x558f90f11516 in main /src/uninit.c:18:9",
        "#0 0x558f90f11290 in main /src/uninit.c:14",
    }
    assert msan["error_detail"] == {
        "Uninitialized value was created by an allocation of 'c' in the stack frame of "
        "function 'main'"
    }


# held-out set 16: a task runner's prefix on every line (turbo), uvu's failures under it, hey's
# counts per status code
TURBO = """\
turbo 2.3.3

• Packages in scope: @shop/ledger, @shop/units
• Running test in 2 packages
• Remote caching disabled
@shop/units:test: > @shop/units@0.4.0 test
@shop/units:test: > uvu test .test.mjs
@shop/units:test:
@shop/units:test:   FAIL  "format pads cents"
@shop/units:test:     Expected values to be strictly equal:  (is)
@shop/units:test:
@shop/units:test:         ++12.05·EUR    (Expected)
@shop/units:test:         --12.5·EUR     (Actual)
@shop/units:test:              ^
@shop/units:test:     at assert (file:///app/node_modules/uvu/assert/index.mjs:33:8)
@shop/units:test:     at Object.handler (file:///app/packages/units/test/units.test.mjs:14:10)
@shop/units:test:
@shop/units:test:   FAIL  "parseMoney accepts thousands separators"
@shop/units:test:     UNITS-400 cannot parse money: "1,250.00 GBP"
@shop/units:test:     at parseMoney (file:///app/packages/units/dist/index.js:18:15)
@shop/units:test:
@shop/units:test:   Total:     6
@shop/units:test:   Passed:    4
@shop/ledger:test: > uvu test .test.mjs
@shop/ledger:test:   Total:     5
@shop/ledger:test:   Passed:    5
"""
HEY = """\
Summary:
  Total:\t3.2101 secs
  Requests/sec:\t124.5541

Status code distribution:
  [200]\t120 responses
  [429]\t80 responses
  [502]\t200 responses
"""


def test_a_task_runners_prefix_is_read_past() -> None:
    failures = _facts(TURBO).get("test_failure", set())
    lines = TURBO.splitlines()
    for n in (8, 9, 11, 12, 17, 18):
        assert lines[n].strip() in failures, lines[n]
    assert lines[15].strip() in _facts(TURBO).get("stack_frame", set())
    # a compiler's ``file:line:`` is no task prefix
    mypy = "".join(
        f"app.py:{n}: error: Name 'x{n}' is not defined  [name-defined]\n" for n in range(8)
    )
    assert {line for _, line in critical_lines(mypy, "tool_result")} == set(mypy.splitlines())


def test_a_load_tests_counts_per_status_code_are_its_summary() -> None:
    summaries = _facts(HEY).get("test_summary", set())
    assert summaries == {
        "Requests/sec:\t124.5541",
        "[200]\t120 responses",
        "[429]\t80 responses",
        "[502]\t200 responses",
    }


def test_more_summaries_and_errors_without_an_error_word() -> None:
    # strace -c / ltrace -c totals, redis-benchmark -q's count
    text = (
        "% time     seconds  usecs/call     calls      function\n"
        "------ ----------- ----------- --------- --------------------\n"
        " 61.23    0.002175         217        10 getenv\n"
        "------ ----------- ----------- --------- --------------------\n"
        "100.00    0.003552                    15 total\n"
        "3000 requests completed in 0.04 seconds\n"
    )
    assert _facts(text).get("test_summary") == {
        "100.00    0.003552                    15 total",
        "3000 requests completed in 0.04 seconds",
    }
    for line in (
        "* SSL certificate problem: self-signed certificate",
        "curl: (6) Could not resolve host: pay.shop.internal",
    ):
        assert is_error_line(line), line


def test_a_go_frame_padded_by_a_report_is_the_first_user_frame() -> None:
    # tparse pads the panic's lines to its box: the frame keeps trailing blanks
    text = (
        "panic: tax: unknown country AT [recovered, repanicked]      \n"
        "                                                            \n"
        "goroutine 13 [running]:                                     \n"
        "testing.tRunner.func1.2({0x551fe0, 0x2b5362c226b0})         \n"
        "\t/usr/local/go/src/testing/testing.go:1974 +0x232            \n"
        "example.com/gobill/tax.Rate(...)                            \n"
        "\t/app/gobill/tax/tax.go:21                   \n"
        "example.com/gobill/tax.TestRateAll.func1(0x2b5362ca1208)    \n"
        "\t/app/gobill/tax/tax_test.go:35 +0xd4        \n"
    )
    assert _facts(text).get("stack_frame") == {"/app/gobill/tax/tax.go:21"}


# held-out set 15: nats-server's short level tags, slapd's result codes, benchmark rows of
# pytest-benchmark, Google Benchmark and JMH; a grep of one log groups no lines by timestamp
NATS = (
    "".join(
        f"[17197] 2026/12/07 08:57:{10 + n}.316278 [DBG] 127.0.0.1:4697{n} - cid:{n} - Client connection created\n"
        for n in range(40)
    )
    + (
        '[17197] 2026/12/07 08:57:58.316278 [ERR] 127.0.0.1:46978 - cid:5 - Publish Violation - User "notify", Subject "billing.invoice.paid"\n'
        '[17197] 2026/12/07 08:57:58.316286 [ERR] 127.0.0.1:46978 - cid:5 - Publish Violation - User "notify", Subject "admin.shutdown"\n'
    )
    + "".join(
        f"[17197] 2026/12/07 08:58:{10 + n}.316278 [DBG] 127.0.0.1:4698{n} - cid:{n} - Client connection closed\n"
        for n in range(40)
    )
)


def test_short_level_tags_and_result_codes_are_error_lines() -> None:
    for line in (
        "[17197] 2026/12/07 08:57:18.316278 [ERR] 127.0.0.1:46978 - Publish Violation",
        "[17197] 2026/12/07 08:57:16.547980 [WRN] Plaintext passwords detected",
        "ERRO[0003] failed to pull image",
        "conn=1005 op=0 RESULT tag=97 err=49 qtime=0.000006 etime=0.000098 text=",
        'level=warn msg="retrying" err="dial tcp 127.0.0.1:5432: connect: refused"',
    ):
        assert is_error_line(line), line
    for line in (
        "[17197] 2026/12/07 08:57:16.547930 [INF] Starting nats-server",
        "conn=1001 op=0 RESULT tag=97 err=0 qtime=0.000006",
        "level=info msg=done err=<nil>",
        "value = arr[ERR] + 1",
    ):
        assert not is_error_line(line), line


def test_standard_mode_keeps_the_errors_of_a_grep_through_one_log() -> None:
    data = bash_session([("grep -v -E '\\[TRC\\]' /tmp/nats.log", NATS)], ask="Why was it denied?")
    outcome = Pipeline(Settings(mode="standard")).run_raw(data)
    shown = outcome.record["messages"][2]["content"]
    assert "omitted" in shown  # the debug lines fold ...
    assert "more matches in [17197]" not in shown  # ... but not as matches of a file
    for line in NATS.splitlines():
        if "[ERR]" in line:
            assert line in shown.splitlines(), line
    assert expanded_record(outcome) == data


def test_benchmark_rows_of_more_runners_are_summaries() -> None:
    rows = (
        "test_total_2000_lines       1,527,373.9991 (>1000.0)  2,735,815.0110 (306.13)     602",
        "test_split_evenly_large           465.6998 (1.0)          8,936.7502 (1.0)       81580",
        "BM_RingPush/64             3.06 ns         3.02 ns     23153093 items_per_second=330M/s",
        "BM_MeanPrice/262144      218859 ns       216380 ns          323",
        "InvoiceBench.totalLong           1000  avgt    3    768.828 ±    640.985  ns/op",
        "InvoiceBench.parse                       thrpt    5  1234.5 ± 12.1  ops/ms",
    )
    assert _facts("\n".join(rows) + "\n").get("test_summary") == set(rows)
    assert critical_lines("test_cart.py::test_total PASSED\n", "tool_result") == frozenset()


def test_a_runners_totals_are_facts() -> None:
    # (a selection's rows, ``500\t/stock/XQ2\t0.002``, stay data: du's ``556\t/usr/lib/kbd``)
    assert critical_lines("556\t/usr/lib/kbd\n", "tool_result") == frozenset()
    totals = "Tasks:    3 successful, 3 total\nCached:    4 cached, 6 total\n  Total:     6\n  Passed:    4\n"
    assert _facts(totals).get("test_summary") == {line.strip() for line in totals.splitlines()}


# a review of these rules (stop 37) found the shapes below: false positives first
COREDNS = "".join(
    f'[INFO] 10.244.0.5:4634{n} - 2944{n} "AAAA IN api.default.svc.cluster.local.default.svc.'
    f'cluster.local. udp 73 false 512" NXDOMAIN qr,aa,rd 166 0.00014{n}s\n'
    for n in range(10)
)


def test_review_lines_that_are_no_facts() -> None:
    for text in (
        COREDNS,
        "num.answer.rcode.SERVFAIL=3\nnum.answer.rcode.REFUSED=0\n",
        "  ✔ GET /orders/1 500 when the db is down\n  ✔ status=503 is retried by the client\n",
        "Retry policy: the client retries on status=502, status=503 and status=504.\n",
        '{"name": "upstream down", "response": {"status": 503, "body": ""}}\n',
        'level=info msg=done err="<nil>"\nlevel=info msg=done err=null\n',
        "conn=1 op=0 RESULT tag=97 err=14 text=SASL(0): successful result:\n",
        "WARNING: 2 of 5 seeds unreachable\n  cass-0.cassandra.db.svc:9042\n",
    ):
        facts = _facts(text)
        assert "error_line" not in facts or "WARNING" in text, (text, facts)
        assert "location" not in facts, (text, facts)
    helm = "WARNING: this chart is deprecated\nDescription:\n\nWeb frontend for the shop\n"
    assert "error_detail" not in _facts(helm)


def test_review_shapes_that_are_facts() -> None:
    level_first = (
        "".join(f"INFO     | app.http | GET /items/{n} 200\n" for n in range(8))
        + "ERROR    | app.db | connection reset by peer\n"
        + "CRITICAL | app.main | worker 3 exited unexpectedly (code 137)\n"
    )
    errors = _facts(level_first).get("error_line", set())
    assert "ERROR    | app.db | connection reset by peer" in errors
    assert "CRITICAL | app.main | worker 3 exited unexpectedly (code 137)" in errors
    grep = "".join(
        f"{name}.log:ERROR: upstream timed out after {n}s\n"
        for name in ("api", "worker")
        for n in range(4)
    )
    assert len(_facts(grep).get("error_line", set())) == 8
    uvu = '  FAIL  cart  "totals include tax"\n    Expected values to be strictly equal:  (is)\n\n        ++112    (Expected)\n        --110    (Actual)\n'
    assert {"++112    (Expected)", "--110    (Actual)"} <= _facts(uvu).get("test_failure", set())
    asan = (
        "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020 at pc 0x1 bp 0x2\n"
        "READ of size 4 at 0x602000000010 thread T0\n"
        "    #0 0x55d in main /src/uaf.c:9\n"
        "freed by thread T0 here:\n"
        "    #0 0x7f1 in free (/lib/libasan.so.8+0xd7aa8)\n"
        "    #1 0x55c in release /src/uaf.c:5\n"
    )
    assert "#1 0x55c in release /src/uaf.c:5" in _facts(asan).get("stack_frame", set())
    for line in (
        "Non-2xx responses:      37",
        "51813.47 requests per second",
        "ColdStart.boot                 N/A      N/A    ss   10  1.204 ± 0.031   s/op",
        "ParseBench.parse       1000     json  avgt    5  12.5 ± 0.3  us/op",
    ):
        assert _facts(line + "\n").get("test_summary") == {line}, line


def test_a_grep_keeps_grouping_paths_with_blanks() -> None:
    output = "".join(
        f"docs/User Guide/install.md:{n}: set the timeout to {n}s\n" for n in range(1, 10)
    )
    data = bash_session([("grep -rn timeout docs", output)], ask="Where is the timeout set?")
    shown = Pipeline(Settings(mode="standard")).run_raw(data).record["messages"][2]["content"]
    assert "more matches in docs/User Guide/install.md omitted" in shown
