"""Facts by shape from held-out sets 17-19 (tools no rule names): HAProxy's ``[ALERT]`` lines,
rspec's bare exception class above its message, Perl Test::More's ``got:``/``expected:``
behind TAP's ``#``, rustfmt's ``Diff in file:line:`` hunk headers (coloured by ``tput``,
whose ``ESC ( B`` the escape pattern had left in the line) and biome's boxed headlines.
Aggressive mode had aged a 6-line ``haproxy -c`` down to its two generic lines; standard
had hidden ``uninitialized constant Invoicer::TaxRate`` behind ``… 5 lines omitted``."""

from __future__ import annotations

from tests.support.fact_kinds import facts_by_kind as _facts
from tests.support.sessions import bash_session
from workers.core.ansi import strip_ansi
from workers.core.settings import Settings
from workers.fidelity.facts import critical_lines
from workers.pipeline.runner import Pipeline

HAPROXY = """\
[NOTICE]   (11809) : haproxy version is 2.6.12-1+deb12u4
[NOTICE]   (11809) : path to executable is /usr/sbin/haproxy
[ALERT]    (11809) : config : [/etc/haproxy/bad.cfg:16] : 'server be_api/a1' : 'rise' has to be > 0..
[ALERT]    (11809) : config : [/etc/haproxy/bad.cfg:17] : 'server be_api/a2' : unknown keyword 'chek'; did you mean 'check' maybe ?
[ALERT]    (11809) : config : Fatal errors found in configuration.
exit=1
"""

RSPEC = """\
  2) Invoicer::TaxTable uses a zero rate class
     Failure/Error: expect(Invoicer::TaxRate.zero).to eq(0)

     NameError:
       uninitialized constant Invoicer::TaxRate

           expect(Invoicer::TaxRate.zero).to eq(0)
                          ^^^^^^^^^
       Did you mean?  Invoicer::TaxTable
     # ./spec/tax_table_spec.rb:10:in `block (2 levels) in <top (required)>'
"""

TAP = """\
t/01-parse.t .... ok

#   Failed test 'p90 numeric'
#   at t/02-summary.t line 18.
#          got: '9'
#     expected: '100'

#   Failed test 'p100 of 4 values'
#   at t/02-summary.t line 22.
#          got: 9
#     expected: 12
# Looks like you failed 2 tests of 37.
"""

RESET = "\x1b(B\x1b[m"
RUSTFMT = (
    "Diff in /srv/ledger/src/parse.rs:16:\n"
    "     let mut it = line.split('|');\n"
    f'\x1b[31m-    let date = it.next().ok_or(ParseError::MissingField("date"))?.to_string();\n'
    f"{RESET}\x1b[32m+    let date = it\n"
    f'{RESET}\x1b[32m+        .ok_or(ParseError::MissingField("date"))?\n'
    f'{RESET}     let amt = it.next().ok_or(ParseError::MissingField("amount"))?;\n'
    "Diff in /srv/ledger/src/reconcile.rs:3:\n"
    f"\x1b[31m-use crate::money::{{Money}};\n"
    f"{RESET}\x1b[32m+use crate::money::Money;\n"
    f"{RESET}"
)

BIOME = """\
admin/src/currency.ts:2:10 lint/style/useTemplate  FIXABLE  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  i Template literals are preferred over string concatenation.

__tests__/discount.test.js format ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Formatter would have printed the following content:

Checked 41 files in 12ms. No fixes applied.
Found 2 errors.
"""


def test_haproxys_alert_lines_are_error_lines_and_its_notices_are_not() -> None:
    errors = _facts(HAPROXY)["error_line"]
    assert any("[/etc/haproxy/bad.cfg:17]" in line and "'chek'" in line for line in errors)
    assert any("'rise' has to be > 0" in line for line in errors)
    assert not any("[NOTICE]" in line for line in errors)
    # the word inside a sentence is no level tag
    assert critical_lines("raise an [ALERT]x when the disk fills\n", "tool_result") == frozenset()


def test_aggressive_mode_keeps_an_old_haproxy_check_s_alerts() -> None:
    calls = [("haproxy -c -f /etc/haproxy/bad.cfg 2>&1; echo exit=$?", HAPROXY)]
    calls += [(f"cat notes/n{i}.txt", f"note {i}: " + "lorem ipsum dolor " * 300) for i in range(6)]
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(bash_session(calls))
    text = outcome.record["messages"][2]["content"]
    assert "unknown keyword 'chek'; did you mean 'check' maybe ?" in text
    assert "[/etc/haproxy/bad.cfg:16]" in text


def test_an_exception_class_alone_on_its_line_has_its_message_below() -> None:
    assert "uninitialized constant Invoicer::TaxRate" in _facts(RSPEC)["error_detail"]
    # a heading that is no exception class says nothing about the next line
    plain = "Summary:\n  3 files changed\n"
    assert "error_detail" not in _facts(plain)


def test_test_more_got_and_expected_lines_belong_to_the_failed_test() -> None:
    failures = _facts(TAP)["test_failure"]
    assert {"#          got: '9'", "#     expected: '100'", "#     expected: 12"} <= failures
    # a comment that says got: outside a failing test is no assertion
    assert "test_failure" not in _facts("t/01.t .. ok\n#          got: 9\nAll tests successful.\n")


def test_rustfmt_hunk_headers_are_diff_headers_and_their_bodies_no_errors() -> None:
    found = _facts(RUSTFMT)
    assert found["diff_header"] == {
        "Diff in /srv/ledger/src/parse.rs:16:",
        "Diff in /srv/ledger/src/reconcile.rs:3:",
    }
    assert set(found) == {"diff_header"}  # ``ParseError`` in a changed line is code


def test_a_character_set_designation_is_an_escape_sequence() -> None:
    assert strip_ansi(f"{RESET}\x1b[32m+    let date = it") == "+    let date = it"
    assert strip_ansi("x\x1b)0y") == "xy"
    assert strip_ansi("(B plain") == "(B plain"


def test_biome_headlines_are_findings() -> None:
    findings = _facts(BIOME)["finding"]
    assert any(line.startswith("__tests__/discount.test.js format ━") for line in findings)
    assert any(line.startswith("admin/src/currency.ts:2:10 lint/style") for line in findings)
    # a heading underlined with a rule on its own line is no finding
    assert "finding" not in _facts("Results\n━━━━━━━━━━━━━━━━\nall good\n")


UVICORN = """\
ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/srv/venv/lib/python3.11/site-packages/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi
    result = await app(  # type: ignore[func-returns-value]
  File "/srv/invsvc/app/main.py", line 35, in order_summary
    "avg_unit_cents": round(average_unit_price(order), 2),
  File "/srv/invsvc/app/pricing.py", line 13, in average_unit_price
    return order_total(order) / units
ZeroDivisionError: division by zero
"""


def test_a_traceback_keeps_where_it_enters_user_code_and_where_it_raised() -> None:
    frames = _facts(UVICORN)["stack_frame"]
    assert 'File "/srv/invsvc/app/main.py", line 35, in order_summary' in frames
    assert 'File "/srv/invsvc/app/pricing.py", line 13, in average_unit_price' in frames
    assert not any("site-packages" in frame for frame in frames)


def test_how_a_run_ended_is_its_summary() -> None:
    for line in (
        "[  PASSED  ] 0 tests.",
        "[  FAILED  ] 27 tests, listed below:",
        "[==========] 56 tests from 9 test suites ran. (12 ms total)",
        "change: [-37.217% -29.409% -20.716%] (p = 0.00 < 0.05)",
        "Performance has regressed.",
        "exit=1",
        "Exit code: 2",
        "exit status 1",
        "worker 12 exited with code 137",
    ):
        assert _facts(f"x\n{line}\n").get("test_summary") == {line}, line
    for line in ("exit", "exit=12345", "the process exited with code review", "EXIT_OK 1"):
        assert "test_summary" not in _facts(f"x\n{line}\n"), line


def test_what_postgres_and_ts_loader_say_under_an_error_is_its_detail() -> None:
    psql = (
        "psql:sql/report.sql:11: ERROR:  column o.totl_cents does not exist\n"
        "LINE 1: SELECT c.email, o.totl_cents FROM customers c JOIN orders o ...\n"
        "                        ^\n"
        'HINT:  Perhaps you meant to reference the column "o.total_cents".\n'
    )
    assert _facts(psql)["error_detail"] == {
        'HINT:  Perhaps you meant to reference the column "o.total_cents".'
    }
    tsl = (
        "[tsl] ERROR in /w/packages/ui/src/cart.ts(19,32)\n"
        "      TS2322: Type 'string' is not assignable to type 'number'.\n"
    )
    assert _facts(tsl)["error_detail"] == {
        "TS2322: Type 'string' is not assignable to type 'number'."
    }
    # without an error above, neither is a fact
    assert _facts("HINT:  use the index\nTS2322: x\n") == {}


def test_padded_frame_openings_and_labelled_origins_are_places() -> None:
    vite = (
        "[UNRESOLVED_IMPORT] Could not resolve './components/banner.js' in src/main.js\n"
        "   ╭─[ src/main.js:2:24 ]\n"
    )
    assert _facts(vite)["finding"] == {"╭─[ src/main.js:2:24 ]"}
    ansible = "[ERROR]: YAML parsing failed\nOrigin: /srv/play.yml:8:7\n"
    assert _facts(ansible)["finding"] == {"Origin: /srv/play.yml:8:7"}


APACHE_ERROR_LOG = "".join(
    f"[Mon Dec 07 11:54:50.{170000 + i:06d} 2026] [proxy:error] [pid 8314:tid {8316 + i % 4}] "
    "(111)Connection refused: AH00957: http: attempt to connect to 127.0.0.1:35101 "
    "(127.0.0.1:35101) failed\n"
    f"[Mon Dec 07 11:54:50.{170100 + i:06d} 2026] [proxy_http:error] [pid 8314:tid "
    f"{8316 + i % 4}] [client 127.0.0.1:{41426 + 4 * i}] AH01114: HTTP: failed to make "
    "connection to backend: 127.0.0.1\n"
    for i in range(150)
)


def test_an_apache_error_log_folds_to_its_two_errors() -> None:
    """Set 21: 600 lines of two Apache proxy errors that differ in a timestamp, a thread and
    a client's ephemeral port had stayed whole (0 % saved): each was its own error."""
    from workers.fidelity.facts import line_shape

    shapes = {line_shape(line) for _, line in critical_lines(APACHE_ERROR_LOG, "tool_result")}
    assert len(shapes) == 2
    # the backend's host:port still identifies the error; a client's port does not
    assert any("127.0.0.1:35101" in shape for shape in shapes)
    calls = [("cat logs/error_log", APACHE_ERROR_LOG)]
    outcome = Pipeline(Settings(mode="standard")).run_raw(bash_session(calls))
    text = outcome.record["messages"][2]["content"]
    assert outcome.stats["saved_pct"] > 90
    assert "AH00957: http: attempt to connect to 127.0.0.1:35101 (127.0.0.1:35101) failed" in text
    assert "AH01114: HTTP: failed to make connection to backend: 127.0.0.1" in text


def test_the_reviews_false_positives_stay_out() -> None:
    """A review of these rules (helper, 1d5f922) found routine lines made facts: a server
    log's statement parameters under an old ERROR, an INFO line that mentions ``[ALERT]``,
    a script's ``exit 1`` and a status echo's ``Exit code: 0``, an HTTP ``Origin:`` header;
    and two backends' addresses after ``from`` folded to one shape."""
    from workers.fidelity.facts import line_shape

    pg = (
        'UTC [1] ERROR:  duplicate key value violates unique constraint "users_email_key"\n'
        "UTC [1] DETAIL:  Key (email)=(bob@example.com) already exists.\n"
        + "".join(
            f"UTC [1] LOG:  duration: 3.1 ms  execute <unnamed>: SELECT {i}\n"
            f"UTC [1] DETAIL:  parameters: $1 = '{72202 + i}'\n"
            for i in range(5)
        )
    )
    assert _facts(pg)["error_detail"] == {
        "UTC [1] DETAIL:  Key (email)=(bob@example.com) already exists."
    }
    notifier = "2024-05-01T10:02:36.719Z INFO  notifier: sent [ALERT] latency_p99 to #ops\n"
    assert _facts(notifier) == {}
    script = '#!/bin/sh\nif [ -z "$X" ]; then\n    exit 1\nfi\necho done\nexit=0\nExit code: 0\n'
    assert "test_summary" not in _facts(script)
    assert _facts("[ERROR]: x\nOrigin: app.example.com:8443\n").get("finding") is None
    first = "ERROR replication: failed to fetch WAL segment from 10.0.0.2:5432: refused"
    assert line_shape(first) != line_shape(first.replace("10.0.0.2", "10.0.0.3"))


def test_a_virtualenvs_console_script_is_no_user_frame() -> None:
    """Set 18: alembic's traceback starts in ``venv/bin/alembic``; where it enters the
    project is ``migrations/env.py``."""
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/venv/bin/alembic", line 8, in <module>\n'
        "    sys.exit(main())\n"
        '  File "/srv/venv/lib/python3.11/site-packages/alembic/config.py", line 1039, in main\n'
        '  File "/srv/shop/migrations/env.py", line 26, in <module>\n'
        "    run_migrations_online()\n"
        '  File "/srv/shop/migrations/versions/0003_currency.py", line 12, in upgrade\n'
        '    op.create_index("ix_email_lower", "customers", ["email"], unique=True)\n'
        "psycopg2.errors.UniqueViolation: could not create unique index\n"
    )
    frames = _facts(trace)["stack_frame"]
    assert 'File "/srv/shop/migrations/env.py", line 26, in <module>' in frames
    assert not any("venv/bin" in frame for frame in frames)
