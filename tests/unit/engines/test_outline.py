"""outline: source reads keep what the model works on, the other bodies go to the stash."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from workers.cli import main
from workers.core.catalog import AGGRESSIVE, STANDARD
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines import resolve
from workers.engines._code import language_of, symbols
from workers.engines.base import EngineContext
from workers.engines.outline import MIN_LINES, OutlineEngine
from workers.messages.model import Unit
from workers.pipeline.runner import Pipeline
from workers.testing import expanded, expanded_record

TOKENS = TokenCounter()
MARKER = re.compile(r"… body of (\w+) \((?:lines \d+-\d+|\d+ lines)\) <<cx:[0-9a-f]{16}>>")
OTHERS = ("order_subtotal", "shipping_cost", "loyalty_points", "gift_wrap_fee", "round_cents")

# -- realistic source files, one per language ------------------------------------


def _py_fn(name: str) -> str:
    return f'''def {name}(order: Order, rate: Decimal = Decimal("0.10")) -> Decimal:
    """Compute the {name.replace("_", " ")} of an order."""
    total = Decimal("0")
    for line in order.lines:
        price = line.price * line.quantity
        if line.sku in order.promotions:
            price -= price * rate
        total += price
    log.debug("{name}: %s for %s", total, order.number)
    return total.quantize(Decimal("0.01"))

'''


PY = (
    '"""Prices, discounts and taxes of orders."""\n\n'
    "from __future__ import annotations\n\n"
    "import logging\n"
    "from decimal import ROUND_DOWN, Decimal\n\n"
    "from shop.models import Order\n\n"
    'VAT_RATE = Decimal("0.21")\n'
    "BULK_THRESHOLD = 10\n"
    "log = logging.getLogger(__name__)\n\n\n"
    + "\n".join(_py_fn(n) for n in ("apply_discount", "compute_tax", *OTHERS))
    + "\nclass PriceBook:\n"
    '    """Prices per SKU."""\n\n'
    "    def __init__(self, prices: dict[str, Decimal]) -> None:\n"
    "        self.prices = dict(prices)\n\n"
    "    def price(self, sku: str) -> Decimal:\n"
    "        if sku not in self.prices:\n"
    '            raise KeyError(f"unknown SKU {sku}")\n'
    "        value = self.prices[sku]\n"
    "        if value < 0:\n"
    '            raise ValueError(f"negative price for {sku}: {value}")\n'
    "        scaled = value * 100\n"
    "        cents = scaled.quantize(Decimal('1'), rounding=ROUND_DOWN)\n"
    "        return cents / 100\n"
)


def _go_fn(name: str) -> str:
    return f"""// {name} computes a figure of an order.
func {name}(o *Order, rate float64) float64 {{
	total := 0.0
	for _, line := range o.Lines {{
		price := line.Price * float64(line.Quantity)
		if o.HasPromotion(line.SKU) {{
			price -= price * rate
		}}
		total += price
	}}
	return math.Round(total*100) / 100
}}
"""


GO = (
    'package pricing\n\nimport (\n\t"math"\n)\n\nconst VAT_RATE = 0.21\n\n'
    "type Order struct {\n\tLines []Line\n}\n\n"
    + "\n".join(_go_fn(n) for n in ("applyDiscount", "computeTax", *OTHERS))
)


def _rs_fn(name: str) -> str:
    return f"""/// Computes a figure of an order.
pub fn {name}(order: &Order, rate: f64) -> f64 {{
    let mut total = 0.0;
    for line in &order.lines {{
        let mut price = line.price * line.quantity as f64;
        if order.promotions.contains(&line.sku) {{
            price -= price * rate;
        }}
        total += price;
    }}
    (total * 100.0).round() / 100.0
}}
"""


RS = (
    "use std::collections::HashSet;\n\npub const VAT_RATE: f64 = 0.21;\n\n"
    "pub struct Order {\n    pub lines: Vec<Line>,\n    pub promotions: HashSet<String>,\n}\n\n"
    + "\n".join(_rs_fn(n) for n in ("apply_discount", "compute_tax", *OTHERS))
)


def _ts_fn(name: str) -> str:
    return f"""/** Computes a figure of an order. */
export function {name}(order: Order, rate = 0.1): number {{
  let total = 0;
  for (const line of order.lines) {{
    let price = line.price * line.quantity;
    if (order.promotions.has(line.sku)) {{
      price -= price * rate;
    }}
    total += price;
  }}
  return Math.round(total * 100) / 100;
}}
"""


TS = 'import { Order } from "./models";\n\nexport const VAT_RATE = 0.21;\n\n' + "\n".join(
    _ts_fn(n) for n in ("applyDiscount", "computeTax", *OTHERS)
)


def _java_fn(name: str) -> str:
    return f"""    /** Computes a figure of an order. */
    public static double {name}(Order order, double rate) {{
        double total = 0.0;
        for (Line line : order.lines()) {{
            double price = line.price() * line.quantity();
            if (order.hasPromotion(line.sku())) {{
                price -= price * rate;
            }}
            total += price;
        }}
        return Math.round(total * 100.0) / 100.0;
    }}
"""


JAVA = (
    "package shop;\n\nimport java.util.List;\n\npublic final class Pricing {\n"
    "    public static final double VAT_RATE = 0.21;\n\n"
    + "\n".join(_java_fn(n) for n in ("applyDiscount", "computeTax", *OTHERS))
    + "}\n"
)


def _c_fn(name: str) -> str:
    return f"""/* Computes a figure of an order. */
double {name}(const struct order *o, double rate)
{{
    double total = 0.0;
    for (size_t i = 0; i < o->n_lines; i++) {{
        double price = o->lines[i].price * o->lines[i].quantity;
        if (has_promotion(o, o->lines[i].sku)) {{
            price -= price * rate;
        }}
        total += price;
    }}
    return round(total * 100.0) / 100.0;
}}
"""


C = "#include <math.h>\n#include <stddef.h>\n\n#define VAT_RATE 0.21\n\n" + "\n".join(
    _c_fn(n) for n in ("apply_discount", "compute_tax", *OTHERS)
)

SOURCES = {
    "src/shop/pricing.py": PY,
    "pricing/pricing.go": GO,
    "src/pricing.rs": RS,
    "src/pricing.ts": TS,
    "src/main/java/shop/Pricing.java": JAVA,
    "src/pricing.c": C,
}
TARGET = {
    p: ("applyDiscount" if p.endswith((".go", ".ts", ".java")) else "apply_discount")
    for p in SOURCES
}
TRACED = {
    p: ("computeTax" if p.endswith((".go", ".ts", ".java")) else "compute_tax") for p in SOURCES
}


def _line_of(source: str, needle: str) -> int:
    return next(n for n, line in enumerate(source.split("\n"), 1) if needle in line)


def _trace(path: str, source: str) -> str:
    """A later crash report in the language's own shape, pointing into TRACED."""
    name = TRACED[path]
    at = _line_of(source, f"{name}(") + 4
    base = path.rsplit("/", 1)[-1]
    if path.endswith(".py"):
        return (
            "Traceback (most recent call last):\n"
            '  File "tests/test_pricing.py", line 12, in test_tax\n'
            "    assert compute_tax(order) == Decimal('2.10')\n"
            f'  File "{path}", line {at}, in {name}\n'
            "    price = line.price * line.quantity\n"
            "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'\n"
        )
    if path.endswith(".go"):
        return (
            "panic: runtime error: invalid memory address or nil pointer dereference\n\n"
            f"goroutine 7 [running]:\nshop/pricing.{name}(0x0, 0x3fb999999999999a)\n"
            f"\t/work/{path}:{at} +0x1d\n"
        )
    if path.endswith(".rs"):
        return f"thread 'main' panicked at {path}:{at}:13:\nattempt to multiply with overflow\n"
    if path.endswith(".ts"):
        return (
            "TypeError: Cannot read properties of undefined (reading 'price')\n"
            f"    at {name} ({path}:{at}:19)\n    at Object.<anonymous> (test/pricing.test.ts:9:5)\n"
        )
    if path.endswith(".java"):
        return (
            'Exception in thread "main" java.lang.NullPointerException\n'
            f"\tat shop.Pricing.{name}({base}:{at})\n\tat shop.Main.main(Main.java:14)\n"
        )
    return (
        "==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000018\n"
        f"    #0 0x55d1c4 in {name} {path}:{at}\n    #1 0x55d2a0 in main src/main.c:30\n"
    )


# -- records ----------------------------------------------------------------------


def session(*steps: tuple[str, ...], rid: str = "s1", mode: str = "standard") -> dict[str, Any]:
    """An OpenAI record: ("user"|"assistant", text) or ("call", command, output) steps."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n, step in enumerate(steps):
        if step[0] == "call":
            call = {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": step[1]})},
            }
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": step[2]})
        else:
            messages.append({"role": step[0], "content": step[1]})
    return {"id": rid, "mode": mode, "messages": messages}


def _read_text(record: dict[str, Any], path: str) -> str:
    """The content of the (first) tool result that answered ``cat PATH``."""
    messages = record["messages"]
    for k, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        if calls and json.loads(calls[0]["function"]["arguments"])["command"] == f"cat {path}":
            text: str = messages[k + 1]["content"]
            return text
    raise AssertionError(path)


def _definition(source: str, name: str) -> str:
    """The lines of ``name``'s definition (signature to end) in ``source``."""
    lines = source.split("\n")
    start = next(k for k, line in enumerate(lines) if re.search(rf"\b{name}\(", line))
    end = next(
        k
        for k in range(start + 1, len(lines))
        if lines[k].startswith(("}", "    }")) or lines[k].strip().startswith("return")
    )
    return "\n".join(lines[start : end + 1])


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(Settings(mode="standard"), tokens=TOKENS)


def _run(pipeline: Pipeline, record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    outcome = pipeline.run_raw(json.loads(json.dumps(record)))
    return outcome.record, outcome.stash


# -- tests ------------------------------------------------------------------------


def test_registered_after_read_lifecycle_in_standard_and_aggressive() -> None:
    for mode in (STANDARD, AGGRESSIVE):
        assert mode.index("outline") == mode.index("read-lifecycle") + 1
    assert [type(e) for e in resolve(("outline",))] == [OutlineEngine]


@pytest.mark.parametrize(
    ("path", "lang"),
    [
        ("a/b.py", "python"),
        ("x.go", "go"),
        ("x.rs", "rust"),
        ("x.ts", "typescript"),
        ("x.tsx", "tsx"),
        ("x.mjs", "javascript"),
        ("X.java", "java"),
        ("x.c", "c"),
        ("x.cpp", "cpp"),
        ("x.txt", None),
        ("Makefile", None),
    ],
)
def test_language_from_suffix(path: str, lang: str | None) -> None:
    assert language_of(path, "") == lang


def test_language_from_content() -> None:
    assert language_of("bin/tool", "#!/usr/bin/env python3\nprint(1)\n") == "python"
    assert language_of("bin/tool", "#!/usr/bin/node\n") == "javascript"
    assert language_of("x.h", "int f(void);\n") == "c"
    assert language_of("x.h", "namespace a { class B {}; }\n") == "cpp"
    # a file named .py that is not Python does not parse as Python: no symbols
    assert symbols("<html>\n<body>}}}{{{ <<< >>>\n" * 40, "python") is None


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_symbols_of_every_language(path: str) -> None:
    source = SOURCES[path]
    lang = language_of(path, source)
    assert lang is not None
    found = symbols(source, lang)
    assert found is not None
    names = [s.name for s in found if s.kind == "function"]
    assert names[:2] == [TARGET[path], TRACED[path]]
    assert set(OTHERS) <= set(names) or {_camel(o) for o in OTHERS} <= set(names)
    assert all(s.body is not None for s in found if s.kind == "function")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_asked_function_stays_whole_others_are_outlined(pipeline: Pipeline, path: str) -> None:
    source = SOURCES[path]
    assert source.count("\n") + 1 >= MIN_LINES
    target = TARGET[path]
    record = session(
        ("user", f"Why does {target} give 8.47 instead of 8.50?"),
        ("call", f"cat {path}", source),
        ("assistant", "Let me look at the rounding."),
    )
    out, stash = _run(pipeline, record)
    text = _read_text(out, path)
    assert _definition(source, target) in text  # whole, as it was
    outlined = set(MARKER.findall(text))
    others = {o for o in (*OTHERS, *(_camel(o) for o in OTHERS)) if f"{o}(" in source}
    assert others | {TRACED[path]} <= outlined
    assert target not in outlined
    for name in others:  # the signature and its line stay visible
        signature = next(line for line in source.split("\n") if f" {name}(" in line)
        assert signature in text
    header = {".c": "#include <math.h>", ".rs": "use std::collections::HashSet;"}
    for kept in ("VAT_RATE", header.get(Path(path).suffix, "import")):
        assert kept in text
    assert expanded(text, stash) == source
    # short bodies (8 lines each): about a third saved; longer real bodies save more
    before, after = TOKENS.count(source), TOKENS.count(text)
    assert after < 0.72 * before, (before, after)


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_later_traceback_keeps_the_function_it_names(pipeline: Pipeline, path: str) -> None:
    source = SOURCES[path]
    record = session(
        ("user", "The checkout totals look off, can you have a look?"),
        ("call", f"cat {path}", source),
        ("assistant", "I will reproduce it first."),
        ("call", "make test", _trace(path, source)),
    )
    out, stash = _run(pipeline, record)
    text = _read_text(out, path)
    assert _definition(source, TRACED[path]) in text
    outlined = set(MARKER.findall(text))
    assert TRACED[path] not in outlined
    assert TARGET[path] in outlined  # named nowhere: outlined
    assert expanded(text, stash) == source


def test_python_docstring_first_line_stays_and_error_words_go_with_the_body(
    pipeline: Pipeline,
) -> None:
    record = session(
        ("user", "Add a test for round_cents."), ("call", "cat src/shop/pricing.py", PY)
    )
    out, stash = _run(pipeline, record)
    text = _read_text(out, "src/shop/pricing.py")
    assert '    """Compute the shipping cost of an order."""' in text
    assert "    … body of shipping_cost (lines " in text
    # code is no report: ``raise ValueError(...)`` in a body is no finding, it goes into the
    # body's stash with the rest (it stayed visible, splitting the body, before)
    raise_line = '            raise ValueError(f"negative price for {sku}: {value}")'
    assert raise_line in PY and raise_line not in text
    assert "        … body of price (lines " in text
    assert "class PriceBook:" in text and "    def price(self, sku: str) -> Decimal:" in text
    assert _definition(PY, "round_cents") in text
    assert expanded(text, stash) == PY


def test_qualified_name_keeps_the_method_not_the_class(pipeline: Pipeline) -> None:
    src = PY + "".join(
        f"\n    def method_{k}(self, sku: str) -> Decimal:\n"
        + "".join(f"        step_{j} = self.prices.get(sku, Decimal({j}))\n" for j in range(6))
        + "        return step_0\n"
        for k in range(3)
    )
    record = session(
        ("user", "PriceBook.method_1 is slow"), ("call", "cat src/shop/pricing.py", src)
    )
    text = _read_text(_run(pipeline, record)[0], "src/shop/pricing.py")
    outlined = set(MARKER.findall(text))
    assert {"method_0", "method_2"} <= outlined and "method_1" not in outlined
    record = session(("user", "Explain PriceBook"), ("call", "cat src/shop/pricing.py", src))
    outlined = set(MARKER.findall(_read_text(_run(pipeline, record)[0], "src/shop/pricing.py")))
    assert not outlined & {"method_0", "method_1", "method_2", "price"}
    assert "shipping_cost" in outlined


def test_numbered_read_tool_output_keeps_its_numbers() -> None:
    numbered = "\n".join(f"{n:>6}→{line}" for n, line in enumerate(PY.split("\n"), 1))
    units = [
        Unit("m1", 1, "user", "text", "what now?", ("messages", 1, "content")),
        Unit(
            "m3",
            3,
            "tool",
            "tool_result",
            numbered,
            ("messages", 3, "content"),
            command="cat src/shop/pricing.py",
            tool_name="Read",
        ),
    ]
    out = OutlineEngine().apply(units, EngineContext(tokens=TOKENS, latest_user_text="what now?"))
    text = out.texts[1]
    start = _line_of(PY, "def shipping_cost(")
    assert f"  … body of shipping_cost (lines {start + 2}-{start + 9}) <<cx:" in text
    assert f"{start:>6}→def shipping_cost(" in text
    assert expanded(text, out.stash) == numbered


def test_what_is_never_touched(pipeline: Pipeline) -> None:
    path = "src/shop/pricing.py"
    short = "\n".join(PY.split("\n")[: MIN_LINES - 10])
    cases = {
        "short file": session(("user", "hi"), ("call", f"cat {path}", short)),
        "file named, no symbol": session(
            ("user", "Show me pricing.py"), ("call", f"cat {path}", PY)
        ),
        "not a read": session(("user", "hi"), ("call", f"python {path}", PY)),
        "not code": session(("user", "hi"), ("call", "cat notes.txt", PY)),
        "has a marker": session(
            ("user", "hi"), ("call", f"cat {path}", PY + "\n# … x <<cx:0123456789abcdef>>")
        ),
        "edited later": session(
            ("user", "fix it"),
            ("call", f"cat {path}", PY),
            ("call", f"sed -i 's/ROUND_DOWN/ROUND_HALF_UP/' {path}", ""),
        ),
    }
    frozen = session(("user", "hi"), ("call", f"cat {path}", PY))
    frozen["cached_prefix_messages"] = 4
    cases["frozen"] = frozen
    for why, record in cases.items():
        out, _ = _run(pipeline, record)
        assert "body of" not in json.dumps(out, ensure_ascii=False), why
    # the same read, asked about nothing in particular, is outlined
    out, _ = _run(pipeline, session(("user", "hi"), ("call", f"cat {path}", PY)))
    assert "… body of" in json.dumps(out, ensure_ascii=False)


def test_older_read_of_an_edited_file_is_outlined_newest_stays(pipeline: Pipeline) -> None:
    path = "src/shop/pricing.py"
    edited = PY.replace("ROUND_DOWN", "ROUND_HALF_UP")
    record = session(
        ("user", "Read the pricing code."),
        ("call", f"cat {path}", PY),
        ("user", "Also the other one."),
        ("call", "cat pricing/pricing.go", GO),
        ("call", f"sed -i 's/ROUND_DOWN/ROUND_HALF_UP/' {path}", ""),
        ("call", f"cat {path}", edited),
    )
    out, _ = _run(pipeline, record)
    texts = [m["content"] for m in out["messages"] if m["role"] == "tool"]
    # the newest read of the edited file is not outlined (dedup points it at the
    # older read's unchanged lines, so that one is left alone too)
    assert "body of" not in texts[-1] and "body of" not in texts[0]
    assert "… body of" in texts[1]  # another file, nobody edits it


def test_cli_round_trip_restores_every_byte(tmp_path: Path) -> None:
    records = []
    for n, path in enumerate(sorted(SOURCES)):
        for mode in ("standard", "aggressive"):
            records.append(
                session(
                    ("user", f"Why does {TARGET[path]} round down?"),
                    ("call", f"cat {path}", SOURCES[path]),
                    ("assistant", "Looking."),
                    ("call", "make test", _trace(path, SOURCES[path])),
                    ("assistant", "Found it."),
                    rid=f"r{n}-{mode}",
                    mode=mode,
                )
            )
    src, out, st, back = (tmp_path / n for n in ("in.jsonl", "out.jsonl", "st", "back.jsonl"))
    src.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    assert main(["compress", "-i", str(src), "-o", str(out), "--offload", str(st), "--quiet"]) == 0
    lines = out.read_bytes().splitlines()
    assert len(lines) == len(records)
    before = after = 0
    for line, record in zip(lines, records, strict=True):
        got = json.loads(line)
        assert "outline" in got["compression"]["engines_applied"], record["id"]
        before += got["compression"]["tokens_before"]
        after += got["compression"]["tokens_after"]
    # (aggressive mode keeps whole the function the later crash report points into, as
    # outline does: 7,130 of 10,080 tokens since 2026-12-07, 0.6 before)
    assert after < 0.75 * before, (before, after)
    assert main(["expand", "--offload", str(st), "-i", str(out), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()


def test_newest_read_of_a_file_being_edited_stays_whole() -> None:
    def units(*middle: Unit) -> list[Unit]:
        return [
            Unit("m1", 1, "user", "text", "go on", ("messages", 1, "content")),
            Unit(
                "m3",
                3,
                "tool",
                "tool_result",
                GO,
                ("messages", 3, "content"),
                command="cat pricing/pricing.go",
                tool_name="bash",
            ),
            *middle,
        ]

    ctx = EngineContext(tokens=TOKENS, latest_user_text="go on")
    write = Unit(
        "m5",
        5,
        "tool",
        "tool_result",
        "",
        ("messages", 5, "content"),
        command="tee pricing/pricing.go",
        tool_name="bash",
    )
    other = Unit(
        "m5",
        5,
        "tool",
        "tool_result",
        "",
        ("messages", 5, "content"),
        command="tee pricing/other.go",
        tool_name="bash",
    )
    assert OutlineEngine().apply(units(write), ctx).texts[1] == GO
    assert "… body of" in OutlineEngine().apply(units(other), ctx).texts[1]


def _module(name: str, functions: tuple[str, ...]) -> str:
    """A Python module with the header every module of the project shares (dedup replaces
    the second copy by a back-reference to the first)."""
    header = (
        "# Copyright 2026 Example Shop GmbH. Licensed under the Apache License, Version 2.0.\n"
        "# You may not use this file except in compliance with the License. You may obtain\n"
        "# a copy of the License at http://www.apache.org/licenses/LICENSE-2.0. Unless\n"
        "# required by applicable law or agreed to in writing, software distributed under\n"
        "# the License is distributed on an AS IS BASIS, WITHOUT WARRANTIES OR CONDITIONS\n"
        "# OF ANY KIND, either express or implied. See the License for the specific\n"
        "# language governing permissions and limitations under the License.\n\n"
        "from __future__ import annotations\n\n"
        "import logging\n"
        "from decimal import ROUND_DOWN, Decimal\n\n"
        "from shop.models import Order\n\n"
        "log = logging.getLogger(__name__)\n\n\n"
    )
    body = "".join(
        f'def {fn}(order: Order) -> Decimal:\n    """The {fn} of an order."""\n'
        f"    {fn}_lines = []\n"
        "    for line in order.lines:\n"
        "        if line.quantity <= 0:\n"
        f'            raise ValueError(f"{fn}: bad quantity {{line.quantity}} for {{line.sku}}")\n'
        "        if line.price < 0:\n"
        f'            raise ValueError(f"{fn}: negative price {{line.price}} for {{line.sku}}")\n'
        f"        {fn}_lines.append(line)\n"
        f'    total = sum((x.price * x.quantity for x in {fn}_lines), Decimal("0"))\n'
        f'    log.debug("{fn} of %s: %s", order.number, total)\n'
        '    return total.quantize(Decimal("0.01"), rounding=ROUND_DOWN)\n\n\n'
        for fn in functions
    )
    return f'"""{name}."""\n\n' + header + body


def test_reads_that_dedup_shortened_are_outlined_and_expand_exactly() -> None:
    """Reads of files sharing a header: dedup replaces the second copy by a back-reference
    first, and outline still outlines both reads (before, a read holding a back-reference
    or pointed at by one was left whole: 2 % saved on three real files).  The shared header of the first read stays visible where the others'
    references point, and expand gives every byte back."""
    a = _module(
        "Totals", ("order_subtotal", "shipping_cost", "loyalty_points", "tax_total", "bulk_fee")
    )
    b = _module(
        "Refunds", ("refund_total", "restocking_fee", "store_credit", "voucher_sum", "late_fee")
    )
    record = session(
        ("user", "Look at the totals and the refunds."),
        ("call", "cat src/shop/totals.py", a),
        ("call", "cat src/shop/refunds.py", b),
        ("assistant", "I read both."),
        ("user", "Now fix the typo in README.md: 'teh' should be 'the'."),
    )
    outcome = Pipeline(Settings(mode="standard"), tokens=TOKENS).run_raw(
        json.loads(json.dumps(record))
    )
    stats = {e.engine: e for e in outcome.engine_stats}
    assert stats["dedup"].status == "applied"
    assert stats["outline"].status == "applied"
    assert stats["outline"].details["reads_outlined"] == 2
    assert outcome.rejections == []
    assert expanded_record(outcome) == record
    first = _read_text(outcome.record, "src/shop/totals.py")
    second = _read_text(outcome.record, "src/shop/refunds.py")
    assert "[[dup:v1 src=" in second  # the header: a reference to the first read
    assert "# Copyright 2026 Example Shop GmbH." in first  # where it points: text, no marker
    assert "from shop.models import Order" in first
    for text in (first, second):
        assert MARKER.search(text) is not None
        assert "def " in text and "-> Decimal:" in text  # the signatures stay
    saved = 1 - outcome.stats["tokens_after"] / outcome.stats["tokens_before"]
    assert saved > 0.2, saved  # 0.239 when written (0.044 with the reads left whole)


def test_a_merge_conflict_in_a_body_stays_visible(pipeline: Pipeline) -> None:
    conflicted = PY.replace(
        "        scaled = value * 100\n",
        "<<<<<<< HEAD\n        scaled = value * 100\n=======\n"
        "        scaled = value * Decimal(100)\n>>>>>>> feature/decimal\n",
        1,
    )
    assert conflicted != PY
    record = session(
        ("user", "Add a test for round_cents."), ("call", "cat src/shop/pricing.py", conflicted)
    )
    out, stash = _run(pipeline, record)
    text = _read_text(out, "src/shop/pricing.py").split("\n")
    assert "    … body of shipping_cost (lines " in "\n".join(text)  # outlined
    assert [line for line in text if line[:7] in ("<<<<<<<", "=======", ">>>>>>>")] == [
        "<<<<<<< HEAD",
        "=======",
        ">>>>>>> feature/decimal",
    ]
    assert expanded("\n".join(text), stash) == conflicted


_HEADER = (
    '"""Prices, discounts and taxes of orders.\n\n'
    + "".join(
        f"Rule {k}: a discount of {k} percent applies above {k * 10} items.\n" for k in range(8)
    )
    + '"""\n'
)
_NOTE = "".join(
    f"# Why rounding {k}: the ledger keeps cents, the shop shows euros.\n" for k in range(8)
)


def test_a_long_module_docstring_and_comment_keep_their_first_line() -> None:
    source = PY.replace('"""Prices, discounts and taxes of orders."""\n', _HEADER, 1).replace(
        'VAT_RATE = Decimal("0.21")\n', _NOTE + 'VAT_RATE = Decimal("0.21")\n', 1
    )
    assert source.count("Rule 7") == 1 and source.count("Why rounding 7") == 1
    record = session(
        ("user", "Add a test for round_cents."), ("call", "cat src/shop/pricing.py", source)
    )
    out, stash = _run(Pipeline(Settings(mode="standard")), record)
    text = _read_text(out, "src/shop/pricing.py")
    lines = text.split("\n")
    assert lines[0] == '"""Prices, discounts and taxes of orders.'
    assert lines[1].startswith("… rest of the module docstring (lines 2-11) <<cx:")
    assert "# Why rounding 0: the ledger keeps cents, the shop shows euros." in lines
    assert any(line.startswith("… rest of the comment (lines ") for line in lines)
    assert "Rule 7" not in text and "Why rounding 7" not in text
    assert _definition(source, "round_cents") in text  # named: whole
    assert expanded(text, stash) == source


def test_a_named_functions_doc_comment_stays_whole() -> None:
    doc = "".join(
        f"// round_cents note {k}: banker's rounding is not used here.\n" for k in range(7)
    )
    source = GO.replace("// round_cents computes", doc + "// round_cents computes", 1)
    assert source != GO
    record = session(("user", "Fix round_cents."), ("call", "cat pricing/pricing.go", source))
    text = _read_text(_run(Pipeline(Settings(mode="standard")), record)[0], "pricing/pricing.go")
    assert all(line in text for line in doc.splitlines())


def test_a_files_own_repeated_blocks_are_left_to_outline() -> None:
    # dedup cut a block repeated in the same file (serde's impls): the rest no longer parsed
    # and outline left the whole read alone; lossless mode still refers to the first copy
    # the repeated block opens a loop that a later block closes: cut out, the rest does not parse
    shared = "\tfor _, line := range o.Lines {\n" + "".join(
        f"\t\ttotal += line.Price * {k}.5 // weight {k}\n" for k in range(4)
    )

    def fn(name: str) -> str:
        return (
            f"// {name} weighs an order.\nfunc {name}(o *Order) float64 {{\n\ttotal := 0.0\n\n"
            f"{shared}\n\t\ttotal -= 1\n\t}}\n\treturn total\n}}\n"
        )

    twice = "\n".join([GO, fn("weighA"), fn("weighB"), fn("weighC"), fn("weighD")])
    assert twice.count("\n\n" + shared + "\n") == 4
    record = session(("user", "Fix weighB."), ("call", "cat pricing/pricing.go", twice))
    standard = _read_text(
        _run(Pipeline(Settings(mode="standard")), record)[0], "pricing/pricing.go"
    )
    # weighB, named, is shown whole: as written, not as a reference to weighA's loop
    assert "[[dup:" not in standard and "… body of weighC" in standard
    assert fn("weighB") in standard
    record = session(
        ("user", "Fix weighB."), ("call", "cat pricing/pricing.go", twice), mode="lossless"
    )
    lossless = _read_text(
        _run(Pipeline(Settings(mode="lossless")), record)[0], "pricing/pricing.go"
    )
    assert "[[dup:v1 src=self" in lossless


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (
            "str_replace_based_edit_tool",
            {
                "command": "str_replace",
                "path": "src/shop/pricing.py",
                "old_str": "a",
                "new_str": "b",
            },
        ),
        ("Edit", {"file_path": "src/shop/pricing.py", "old_string": "a", "new_string": "b"}),
        (
            "bash",
            {"command": "sed -i 's/BULK_THRESHOLD = 10/BULK_THRESHOLD = 12/' src/shop/pricing.py"},
        ),
    ],
)
def test_the_read_of_a_file_being_edited_stays_whole(
    pipeline: Pipeline, tool: str, arguments: dict[str, str]
) -> None:
    # an edit in place after the read: the model edits from that text (the editor's
    # str_replace was not seen as a write, and sed -i made the read stale)
    record = session(
        ("user", "Add a test for round_cents."), ("call", "cat src/shop/pricing.py", PY)
    )
    call = {
        "id": "edit",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }
    record["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "edit", "content": "The file has been edited."},
        {"role": "user", "content": "Now run the tests."},
    ]
    assert _read_text(_run(pipeline, record)[0], "src/shop/pricing.py") == PY
