"""Facts of minitest, phpcs and ``curl -i`` that the gate did not know (held-out sets 32, 34).

- minitest names a failing test under ``  1) Failure:`` as ``TestCart#test_total [file:24]:``;
  aggressive mode aged old ``rake test`` runs down to ``1) Failure:`` and the diff.
- phpcs's full report heads each file's rows with ``FILE: src/Fees.php`` and ends with
  ``PHPCBF CAN FIX THE 39 MARKED SNIFF VIOLATIONS AUTOMATICALLY``: standard kept the rows and
  dropped whose they were.
- ``curl -i``'s ``HTTP/1.1 404 Not Found`` went with a budget's cut of the 200s around it.
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

MINITEST = """Run options: --seed 12609

# Running:

.FFE

Finished in 0.021133s, 615.1529 runs/s, 520.5140 assertions/s.

  1) Failure:
TestCart#test_discount_save10 [/srv/inventory/test/test_cart.rb:18]:
Expected: 2490
  Actual: 0

  2) Failure:
Inventory::TestMoney#test_to_s_negative [/srv/inventory/test/test_money.rb:13]:
Expected: "-2.50 EUR"
  Actual: "-2.5 EUR"

4 runs, 3 assertions, 2 failures, 1 errors, 0 skips
"""


def _kinds(text: str, command: str) -> dict[str, str]:
    return {line: kind for kind, line in critical_lines(text, "tool_result", command)}


def test_minitest_failing_tests_are_failures() -> None:
    found = _kinds(MINITEST, "rake test")
    assert found["TestCart#test_discount_save10 [/srv/inventory/test/test_cart.rb:18]:"] == (
        "test_failure"
    )
    assert (
        found["Inventory::TestMoney#test_to_s_negative [/srv/inventory/test/test_money.rb:13]:"]
        == "test_failure"
    )


def _phpcs(files: int, rows: int) -> str:
    out = ["E.....WW.E.EE 13 / 13 (100%)", "", ""]
    for f in range(files):
        rule = "-" * 70
        out += ["", f"FILE: /srv/ledger/src/Module{f}.php", rule]
        out += [f"FOUND {rows} ERRORS AFFECTING {rows} LINES", rule]
        out += [
            f' {10 + k} | ERROR   | [x] Expected at least 1 space before "="; 0 found'
            for k in range(rows)
        ]
        out += [rule]
    out += ["PHPCBF CAN FIX THE 39 MARKED SNIFF VIOLATIONS AUTOMATICALLY", rule, ""]
    out += ["Time: 70ms; Memory: 6MB", ""]
    return "\n".join(out)


def test_phpcs_file_headers_and_totals_are_facts() -> None:
    found = _kinds(_phpcs(3, 5), "phpcs --standard=PSR12 src")
    assert found["FILE: /srv/ledger/src/Module2.php"] == "finding"
    assert found["FOUND 5 ERRORS AFFECTING 5 LINES"] == "test_summary"
    assert found["PHPCBF CAN FIX THE 39 MARKED SNIFF VIOLATIONS AUTOMATICALLY"] == "test_summary"


def test_a_phpcs_report_keeps_each_files_header() -> None:
    text = _phpcs(6, 30)
    out, _ = compress_soundly(tool_output(text, "phpcs --standard=PSR12 src"), "standard")
    for f in range(6):
        assert f"FILE: /srv/ledger/src/Module{f}.php" in out.splitlines()


def test_curl_i_failed_status_is_a_fact() -> None:
    text = "".join(f"200 0.000{k}07s {k}\n" for k in range(12)) + (
        "HTTP/1.1 404 Not Found\nContent-Type: application/json\n\nonly 32 transfers recorded\n"
    )
    assert _kinds(text, "curl -si http://127.0.0.1/recent")["HTTP/1.1 404 Not Found"] == (
        "http_status"
    )


DJANGO_CHECK = """System check identified some issues:

WARNINGS:
?: (security.W004) You have not set a value for the SECURE_HSTS_SECONDS setting.
catalog.Book: (models.W042) Auto-created primary key used when not defining a primary key type.
\tHINT: Configure the DEFAULT_AUTO_FIELD setting.

System check identified 2 issues (0 silenced).
"""


def test_django_system_check_messages_are_findings() -> None:
    # held-out set 35: aggressive aged an older ``check --deploy`` down to its first lines
    found = _kinds(DJANGO_CHECK, "python manage.py check --deploy")
    assert found[
        "?: (security.W004) You have not set a value for the SECURE_HSTS_SECONDS setting."
    ] == ("finding")
    assert found["System check identified 2 issues (0 silenced)."] == "test_summary"
    assert any(line.startswith("catalog.Book: (models.W042)") for line in found)
