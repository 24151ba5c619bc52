"""Facts by shape from held-out sets 22 and 23 (a Rust workspace and a Go module; a TypeScript
monorepo and its ops): the source lines rustc and gcc quote under a finding are code, not
error lines (``44 |  other => Err(MoneyError::Parse(...))`` had made every clippy finding
that quotes an ``Err`` unfoldable); clippy names a finding's lint only in its help link, which
now stays under the first finding of each lint and names the repeats; a Rust backtrace frame
is its function and its place; ``curl -v``'s response status line is what the request came to.
"""

from __future__ import annotations

from tests.support.fact_kinds import facts_by_kind as _facts
from tests.support.sessions import bash_session
from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline

LINK = "https://rust-lang.github.io/rust-clippy/rust-1.95.0/index.html"


def _clippy_finding(line: int, code: str, name: str) -> str:
    return (
        "warning: variables can be used directly in the `format!` string\n"
        f"  --> crates/money/src/lib.rs:{line}:44\n"
        "   |\n"
        f"{line} |             {code}\n"
        "   |                                            ^^^^^^^^^^^^^^^^^^^^^^\n"
        "   |\n"
        f"   = help: for further information visit {LINK}#uninlined_format_args\n"
        "help: change this to\n"
        "   |\n"
        f"{line} -             {code}\n"
        f"{line} +             {code.replace('{}', '{' + name + '}')}\n"
        "   |\n"
        "\n"
    )


CLIPPY = (
    "    Checking money v0.3.1 (/srv/stockroom/crates/money)\n"
    + _clippy_finding(44, 'other => Err(MoneyError::Parse(format!("unknown {}", other))),', "other")
    + _clippy_finding(66, 'MoneyError::Parse(m) => write!(f, "parse error: {}", m),', "m")
    + _clippy_finding(93, 'return Err(MoneyError::Parse(format!("bad {}", s)));', "s")
    + _clippy_finding(107, '.map_err(|e| MoneyError::Parse(format!("{}", e)))?;', "e")
    + "warning: `money` (lib) generated 4 warnings\n"
)

GCC = """\
w.c: In function 'parse':
w.c:12:9: warning: unused variable 'err' [-Wunused-variable]
   12 |     int err = parse_error(buf);
      |         ^~~
w.c:20:5: error: 'ParseError' undeclared (first use in this function)
   20 |     ParseError e = FAILED;
      |     ^~~~~~~~~~
"""

RUST_BACKTRACE = """\
thread 'tests::page_last_partial' (22209) panicked at crates/ledger/src/lib.rs:132:22:
range end index 6 out of range for slice of length 5
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa/library/core/src/panicking.rs:80:14
   2: <alloc::vec::Vec<T,A> as core::ops::index::Index<I>>::index
             at /rustc/59807616e1fa/library/alloc/src/vec/mod.rs:3804:9
   3: ledger::Ledger::page
             at ./src/lib.rs:132:22
   4: ledger::tests::page_last_partial
             at ./src/lib.rs:281:22
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
"""

CURL = """\
*   Trying 127.0.0.1:36100...
* Connected to 127.0.0.1 (127.0.0.1) port 36100
> GET /invoices?limit=1000 HTTP/1.1
> Host: 127.0.0.1:36100
> User-Agent: curl/7.88.1
> Accept: */*
>
< HTTP/1.1 400 Bad Request
< Content-Type: application/json
< Date: Mon, 07 Dec 2026 14:20:11 GMT
< Connection: keep-alive
< Content-Length: 58
<
{"error":"limit must be between 1 and 100","got":1000}
"""


def test_the_source_a_compiler_quotes_is_code_not_error_lines() -> None:
    found = _facts(CLIPPY)
    quoted = {line for lines in found.values() for line in lines if line[:3].strip().isdigit()}
    assert quoted == set()
    gcc = _facts(GCC)
    assert "w.c:20:5: error: 'ParseError' undeclared (first use in this function)" in (
        gcc["finding"] | gcc.get("error_line", set())
    )
    assert not any(
        "parse_error(buf)" in line or "FAILED;" in line for lines in gcc.values() for line in lines
    )
    # outside a finding a numbered line is read as any line (psql's rows: ``  3 | failed``)
    assert "3 | failed" in _facts(" id | status\n----+--------\n  3 | failed\n").get(
        "error_line", set()
    )


def test_clippy_repeats_fold_and_the_lint_stays_named() -> None:
    calls = [("cargo clippy -- -W clippy::pedantic", CLIPPY)]
    outcome = Pipeline(Settings(mode="standard")).run_raw(bash_session(calls))
    text = outcome.record["messages"][2]["content"]
    # the first finding with its lint's link; the others, one note naming the lint and places
    assert text.count(f"{LINK}#uninlined_format_args") == 1
    assert (
        "warning uninlined_format_args 3 more times at --> crates/money/src/lib.rs:66:44 "
        "--> crates/money/src/lib.rs:93:44 --> crates/money/src/lib.rs:107:44"
    ) in text
    assert "parse error: {}" not in text  # the quoted source went to the stash
    assert outcome.stats["saved_pct"] > 50


def test_a_rust_frame_in_user_code_is_its_function_and_its_place() -> None:
    frames = _facts(RUST_BACKTRACE)["stack_frame"]
    assert {"3: ledger::Ledger::page", "at ./src/lib.rs:132:22"} <= frames
    assert not any("panic_fmt" in frame or "rustc" in frame for frame in frames)


def test_curls_response_status_is_a_fact() -> None:
    assert _facts(CURL)["http_status"] == {"< HTTP/1.1 400 Bad Request"}
    calls = [("curl -sv 'http://127.0.0.1:36100/invoices?limit=1000'", CURL)] + [
        ("npm test", "ok\n" * 3)
    ] * 4
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(bash_session(calls))
    assert "< HTTP/1.1 400 Bad Request" in outcome.record["messages"][2]["content"]


OUTDATED = """\
Package       Current    Wanted   Latest  Location                  Depended by
@eslint/js     9.39.5    9.39.5   10.0.1  node_modules/@eslint/js   mono
@types/node  20.19.43  20.19.43  26.6.11  node_modules/@types/node  mono
eslint         9.39.5    9.39.5  10.16.0  node_modules/eslint       mono
jest           29.7.0    29.7.0   30.5.2  node_modules/jest         mono
typescript      5.5.4     5.5.4    7.0.2  node_modules/typescript   mono
vitest          2.1.9     2.1.9   4.1.12  node_modules/vitest       mono
"""


def test_aggressive_leaves_a_short_answered_output_whole() -> None:
    """Set 23: a 7-line ``npm outdated`` answered by the agent's last words had lost two rows
    to aging's head and tail (39 tokens for a gap in the table the user asked about)."""
    record = bash_session([("npm outdated", OUTDATED)], final=None)
    record["messages"].append({"role": "assistant", "content": "Six packages are behind."})
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert outcome.record["messages"][2]["content"] == OUTDATED
    # a long one is still condensed around its head, tail and facts
    long_table = OUTDATED + "".join(
        f"pkg{i:02d}          1.0.{i}     1.0.{i}    2.0.0  node_modules/pkg{i:02d}        mono\n"
        for i in range(30)
    )
    record = bash_session([("npm outdated", long_table)])
    record["messages"].append({"role": "assistant", "content": "Many packages are behind."})
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert "lines omitted" in outcome.record["messages"][2]["content"]


DIFF = """\
diff --git a/src/orderly/pricing.py b/src/orderly/pricing.py
index 9969e5f..3842d9f 100644
--- a/src/orderly/pricing.py
+++ b/src/orderly/pricing.py
@@ -29,8 +29,7 @@ def apply_discount(subtotal_cents, coupon):
     if coupon is None:
         return subtotal_cents
     rate = COUPONS.get(coupon.code)
-    if rate is None:
-        raise KeyError(coupon.code)
+    if rate is None: return subtotal_cents
     discounted = subtotal_cents * (100 - rate) // 100
     return max(discounted, 0)

@@ -39,7 +38,7 @@ def apply_discount(subtotal_cents, coupon):
 def tax(cents, region):
     table = TAX[region]
-    return round(cents * table.rate)
+    return int(round(cents * table.rate))
     # rates are percentages
     # of the net amount
""".replace("0)\n\n@@", "0)\n \n@@")  # (git writes a blank context line as one space)


def test_aggressive_keeps_an_older_diffs_changed_lines() -> None:
    """Set 24: aging had turned every hunk body of an answered ``git diff`` into ``… 10 lines
    omitted`` (what the agent changed, out of sight); its context lines may still go."""
    calls = [("git diff", DIFF)] + [("pytest -q", f"{n} passed in 0.5s\n") for n in range(6)]
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(bash_session(calls))
    text = outcome.record["messages"][2]["content"]
    changed = [line for line in DIFF.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    assert changed and all(line in text.splitlines() for line in changed)
    assert "@@ -39,7 +38,7 @@ def apply_discount(subtotal_cents, coupon):" in text


def test_a_search_in_a_log_folds_matches_that_differ_only_in_time_and_place() -> None:
    """Set 25: ``rg -n`` over a service log printed 160 ERROR lines of two events that differ
    only in a timestamp and the line number; each had stayed (0 % saved)."""
    panic = (
        'level=ERROR msg="panic in handler" path=/items/SKU-Z '
        'panic="runtime error: invalid memory address or nil pointer dereference"'
    )
    reserve = 'level=ERROR msg="reserve failed" sku=SKU-F qty=500 err="insufficient stock"'
    rows = [
        f"{8 + 3 * n}:time=2026-12-07T14:51:{14 + n // 20:02d}.{n % 997:03d}Z "
        + (reserve if n % 3 == 1 else panic)
        for n in range(120)
    ]
    rows.insert(60, "190:time=2026-12-07T14:51:17.001Z " + panic.replace("SKU-Z", "SKU-Q"))
    text = "\n".join(rows) + "\n"
    calls = [("rg -n 'panic in handler|reserve failed' logs/invsvc.log", text)]
    outcome = Pipeline(Settings(mode="standard")).run_raw(bash_session(calls))
    out = outcome.record["messages"][2]["content"]
    assert rows[0] in out and rows[1] in out and rows[60] in out  # another path: another event
    assert outcome.stats["saved_pct"] > 90
    # a log line that starts with its date or its time keeps them (no line number to drop)
    from workers.engines.toolfilter.plan import _MATCH_POSITION

    for line in ("2026-12-07 14:51:14 ERROR x", "14:51:14 ERROR x", "12:14:51:14 ERROR x"):
        assert _MATCH_POSITION.sub(r"\1", line, count=1) == line
    assert _MATCH_POSITION.sub(r"\1", "app.log:12:2026-12-07 x", count=1) == "app.log:2026-12-07 x"


def _service_log(numbered: bool) -> str:
    rows = []
    for n in range(300):
        ms = f"{n % 1000:03d}"
        port = 32768 + (n * 37) % 20000
        if n % 5 == 2:
            rows.append(
                f"time=2026-12-07T14:51:14.{ms}Z level=ERROR msg=request method=GET "
                f"path=/items/SKU-Z status=500 dur_ms=0 remote=127.0.0.1:{port}"
            )
        else:
            rows.append(
                f"time=2026-12-07T14:51:14.{ms}Z level=INFO msg=request method=GET "
                f"path=/items/SKU-{'ABC'[n % 3]} status=200 dur_ms=0 remote=127.0.0.1:{port}"
            )
    rows[152] = rows[152].replace("SKU-Z status=500", "SKU-Q status=503")
    if numbered:
        rows = [f"{k + 1:6d}\t{row}" for k, row in enumerate(rows)]
    return "\n".join(rows) + "\n"


def test_a_request_logs_client_port_names_nobody() -> None:
    """Set 25: 500s that differ only in the client's ephemeral port (``remote=...:33054``)
    were each a fact of their own, so a service log of them kept them all; a read of the
    log numbered by an editor's view (``     12\\t...``) kept every line too."""
    from workers.fidelity.facts import line_shape

    a = "level=ERROR msg=request path=/items/SKU-Z status=500 remote=127.0.0.1:33054"
    assert line_shape(a) == line_shape(a.replace("33054", "35120"))
    assert line_shape("listening addr=127.0.0.1:36310 error") != line_shape(
        "listening addr=127.0.0.1:36311 error"
    )  # a server's address still identifies
    for numbered in (False, True):
        text = _service_log(numbered)
        calls = [("cat logs/invsvc.log", text)]
        outcome = Pipeline(Settings(mode="standard")).run_raw(bash_session(calls))
        out = outcome.record["messages"][2]["content"]
        assert outcome.stats["saved_pct"] > 85, numbered
        assert "path=/items/SKU-Z status=500" in out and "path=/items/SKU-Q status=503" in out
