"""Ruby and PHP reads are source code too (held-out set 11: an agent read ``lib/cart.rb`` and
``src/Invoice.php`` through an editor tool that numbers lines like ``cat -n``, then edited
``Cart#add`` and ``Invoice::fromCsv``): their functions are parsed with tree-sitter's Ruby and
PHP grammars, so aggressive mode keeps whole the function a later edit touches and condenses
the rest, as it does for Python, Go or Java.  The sources under ``tests/data/polyglot-reads``
were written for this test (``ruby -c`` and ``php -l`` accept them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines._code import language_of, symbols
from workers.engines.aging import AgingEngine
from workers.engines.base import EngineContext
from workers.messages import parse_record
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

DATA = Path(__file__).resolve().parents[2] / "data" / "polyglot-reads"
RUBY = (DATA / "cart.rb").read_text(encoding="utf-8")
PHP = (DATA / "Invoice.php").read_text(encoding="utf-8")


def _numbered(text: str, first: int = 1) -> str:
    return "".join(f"{n:6}\t{line}\n" for n, line in enumerate(text.splitlines(), first))


def _rows(text: str, name: str) -> tuple[int, int]:
    """1-based first and last line of the function ``name`` (its ``end``/``}`` included)."""
    lines = text.splitlines()
    start = next(
        k
        for k, line in enumerate(lines)
        if (f" {name}(" in line and "def " in line) or f"function {name}(" in line
    )
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(
        k
        for k in range(start + 1, len(lines))
        if lines[k].strip() in ("end", "}") and len(lines[k]) - len(lines[k].lstrip()) == indent
    )
    return start + 1, end + 1


def test_ruby_and_php_functions_are_parsed() -> None:
    assert language_of("lib/cart.rb", RUBY) == "ruby"
    assert language_of("src/Invoice.php", PHP) == "php"
    ruby = {(s.name, s.kind, s.parents) for s in symbols(RUBY, "ruby") or []}
    assert ("Cart", "container", ("Shop",)) in ruby
    assert ("add", "function", ("Shop", "Cart")) in ruby
    assert ("empty", "function", ("Shop", "Cart")) in ruby  # ``def self.empty``
    php = {(s.name, s.kind, s.parents) for s in symbols(PHP, "php") or []}
    assert ("Invoice", "container", ()) in php
    assert ("fromCsv", "function", ("Invoice",)) in php
    assert ("roundCents", "function", ("Rounds",)) in php  # a trait's method
    assert ("invoice_total", "function", ()) in php
    add = next(s for s in symbols(RUBY, "ruby") or [] if s.name == "add")
    first, last = _rows(RUBY, "add")
    # the body: the lines between ``def`` and ``end`` (0-based rows)
    assert add.body == (first, last - 2)


def _session(path: str, source: str, edited: str, name: str) -> dict[str, Any]:
    first, _ = _rows(source, name)
    shown = source.splitlines()[first - 1 : first + 5]
    shown[2] += "  # edited"  # the edit's change, in the function's third line
    snippet = _numbered("\n".join(shown), first)
    calls = []
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Fix {path}: tests fail."}]
    for k, (tool, args, result) in enumerate(
        [
            ("read_file", {"path": path}, _numbered(source)),
            (
                "edit_file",
                {"path": path, "instructions": edited},
                f"The file {path} has been updated. Here's the result of running `cat -n` on "
                f"a snippet of the edited file:\n{snippet}",
            ),
            *[("bash", {"command": f"echo step {j}"}, f"step {j}\n") for j in range(6)],
        ]
    ):
        call = {
            "id": f"c{k}",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(args)},
        }
        calls.append(call)
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": result})
    messages.append({"role": "user", "content": "Do the tests pass now?"})
    return {"id": "poly", "messages": messages}


@pytest.mark.parametrize(
    ("path", "source", "name", "other"),
    [
        ("lib/cart.rb", RUBY, "add", "lines << format('TOTAL"),
        ("src/Invoice.php", PHP, "fromCsv", "return sprintf('%d lines"),
    ],
    ids=["ruby", "php"],
)
def test_an_older_read_keeps_the_function_a_later_edit_touches(
    path: str, source: str, name: str, other: str
) -> None:
    record = _session(path, source, f"fix {name}", name)
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    assert expanded_record(outcome) == record
    shown = outcome.record["messages"][2]["content"]
    first, last = _rows(source, name)
    for row in _numbered(source).splitlines()[first - 1 : last]:
        assert row in shown.splitlines()
    assert other not in shown  # a function nothing names is condensed


BROKEN_CPP = """\
#include "stats.hpp"

namespace qstats {

double mean(const std::vector<double>& xs) {
    return std::accumulate(xs.begin(), xs.end(), 0.0) / xs.size();
}

Summary summarize(const std::vector<double>& xs) {
    Summary s;
    s.count = xs.size()
    return s;
}

double median(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    return xs[xs.size() / 2];
}

}  // namespace qstats
"""


def test_a_container_with_one_broken_member_still_has_its_other_members() -> None:
    # held-out set 12: the agent read stats.cpp while it did not compile (a missing ``;`` in
    # summarize); the namespace held a parse error, so none of its functions was found and
    # aggressive mode could not keep whole the functions later edits touched
    found = {s.name: s for s in symbols(BROKEN_CPP, "cpp") or []}
    assert {"qstats", "mean", "median"} <= set(found)
    assert found["median"].parents == ("qstats",)
    assert "summarize" not in found  # the function with the error is left out


def test_a_later_frame_an_engine_stashed_still_names_the_function() -> None:
    # held-out set 7: mvn's later failure pointed into Money.convert through a frame the tool
    # filter had stashed; aging read the later output as shortened and kept no function whole
    crash = (
        "F\n\nFailures:\n\n  1) Shop::Cart#add raises\n     Failure/Error: cart.add('X', 1)\n"
        "     # ./lib/cart.rb:19:in `add'\n     # ./spec/cart_spec.rb:9:in `block'\n"
    )
    shown = "F\n… 6 lines omitted <<cx:0123456789abcdef>>\n"
    record = _session("lib/cart.rb", RUBY, "unused", "add")
    messages = record["messages"]
    messages[4]["content"] = shown  # the edit's result, as an earlier engine left it
    units = parse_record(record).units
    inputs = tuple(crash if u.text == shown else u.text for u in units)
    ctx = EngineContext(tokens=TokenCounter(), latest_user_text="Is it fixed?", input_texts=inputs)
    out = AgingEngine().apply(units, ctx)
    read = next(t for t, u in zip(out.texts, units, strict=True) if u.text.startswith("     1\t#"))
    first, last = _rows(RUBY, "add")
    for row in _numbered(RUBY).splitlines()[first - 1 : last]:
        assert row in read.splitlines()
