"""Lines the latest request names stay visible in the tool filter's output.

Held-out set 5 asked "What is the status and total of ord_105523, and which pylint and
winston versions are installed?" after a query, ``pip list`` and ``npm ls``: the rows that
answer it went into the stash (``… 9 of 24 rows omitted``).  A word of the request that an
output holds on one or two lines names those lines; they stay, as a critical line does.
"""

from __future__ import annotations

import json
from typing import Any

from workers.core.settings import Settings
from workers.engines._text import named_lines, request_terms
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record

PACKAGES = [f"package-{k:02d}" for k in range(60)]


def _pip_list() -> str:
    rows = [f"{name:<20} {k % 7}.{k % 5}.{k}" for k, name in enumerate(PACKAGES)]
    return "Package              Version\n-------------------- -------\n" + "\n".join(rows) + "\n"


def _record(question: str) -> dict[str, Any]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": "pip list"})},
    }
    return {
        "id": "pip",
        "messages": [
            {"role": "user", "content": "Check the environment."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": _pip_list()},
            {"role": "user", "content": question},
        ],
    }


def _standard(question: str) -> str:
    record = _record(question)
    outcome = Pipeline(Settings(mode="standard")).run_raw(record)
    assert expanded_record(outcome) == record
    text: str = outcome.record["messages"][2]["content"]
    return text


def test_the_row_the_request_names_stays() -> None:
    row = next(line for line in _pip_list().splitlines() if line.startswith("package-37 "))
    plain = _standard("Which packages are installed?")
    assert len(plain) < len(_pip_list()) and row not in plain  # folded when nobody asks
    assert row in _standard("Which version of package-37 is installed?")


def test_request_terms_and_named_lines() -> None:
    terms = request_terms("What is the status of ord_105523 and pid 4478?")
    assert {"ord_105523", "4478", "status"} <= terms and "the" not in terms
    text = "a 1\nord_105523 shipped\nb 2\n4478 python3\nord_1055230 other\n"
    assert named_lines(text, terms) == frozenset({1, 3})
    # a word on more than two lines names none of them
    assert named_lines("x status\ny status\nz status\n", frozenset({"status"})) == frozenset()


def test_aging_keeps_the_named_row_of_an_older_output_too() -> None:
    record = _record("Which version of package-37 is installed?")
    record["messages"][3:3] = [
        {"role": "assistant", "content": "Listed the packages."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You are welcome."},
    ]
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert expanded_record(outcome) == record
    text = outcome.record["messages"][2]["content"]
    row = next(line for line in _pip_list().splitlines() if line.startswith("package-37 "))
    assert row in text and "package-12 " not in text


def test_a_dotted_or_dashed_name_names_up_to_six_rows() -> None:
    ps = "\n".join(
        [
            f"root {4400 + k} 0.1 0.0 {20000 + k} ? S 14:47 0:00 python3 worker.py --id w{k}"
            for k in range(9)
        ]
        + [
            f"root {4500 + k} 0.4 0.0 26828 ? S 14:47 0:00 python3 -m http.server {7410 + k}"
            for k in range(3)
        ]
    )
    terms = request_terms("On which ports do the http.server processes listen?")
    assert "http.server" in terms
    assert named_lines(ps, terms) == frozenset({9, 10, 11})
    # an English word on three lines still names none
    assert named_lines("x ports\ny ports\nz ports\n", frozenset({"ports"})) == frozenset()


def test_a_word_names_a_line_by_its_whole_word_occurrences() -> None:
    """``request`` names curl's ``X-Request-Id`` header although the body holds
    ``requester`` 200 times; a word said as a whole word more often names nothing."""
    body = ", ".join(f'{{"id": {k}, "requester": "u{k}"}}' for k in range(200))
    text = (
        "< HTTP/1.1 200 OK\n< X-Request-Id: req-7f3a9c1e\n< Content-Type: application/json\n"
        f"[{body}]\n"
    )
    terms = request_terms("What request id did the server return?")
    assert "request" in terms
    assert named_lines(text, terms) == frozenset({1})
    chatty = "\n".join(f"request {k} done" for k in range(20))
    assert named_lines(chatty, terms) == frozenset()


def test_terms_too_common_alone_name_the_lines_holding_most_of_them() -> None:
    rows = [
        f'http_requests_total{{method="{m}",route="{r}",status="{s}"}} {k}.0'
        for k, (m, r, s) in enumerate(
            (m, r, s)
            for r in ("/v1/refunds", "/v1/postings", "/v1/fx/rates", "/healthz")
            for m in ("GET", "POST", "PUT")
            for s in ("200", "404", "503")
        )
    ]
    text = "\n".join(rows)
    terms = request_terms("How many POST /v1/refunds returned 503?")
    named = named_lines(text, terms)
    assert [rows[i] for i in named] == [
        'http_requests_total{method="POST",route="/v1/refunds",status="503"} 5.0'
    ]  # "503" is on 12 lines, "/v1/refunds" on 9, "post" on 12: one line holds all three
    # words alone (no name among them) name nothing: "post" and "returned" are no ids
    assert named_lines(text, request_terms("which requests were POST and returned?")) == frozenset()
