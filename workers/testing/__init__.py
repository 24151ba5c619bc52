"""Test helpers shipped with the package: transcript builders, fake engines, engine checks.

Tests (ours and users') build records, units and misbehaving engines from
here, and run the shared engine checks (a lossless round trip of one text,
every change over a corpus expands back and passes the gate) instead of
copying them across test files.  The checks raise ``AssertionError``.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from workers.core.catalog import LOSSLESS
from workers.engines._text import expanded
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.messages.model import Unit

if TYPE_CHECKING:
    from workers.pipeline.runner import Outcome

__all__ = [
    "LOSSLESS_CHAIN",
    "DecodingEngine",
    "FunctionEngine",
    "RaisingEngine",
    "anthropic_record",
    "check_corpus_changes",
    "corpus_units",
    "expanded",
    "expanded_record",
    "lossless_chain",
    "lossless_round_trip",
    "make_unit",
    "openai_record",
    "tool_output_record",
    "with_texts",
]

# The lossless engines of the standard pipeline, in pipeline order.
LOSSLESS_CHAIN = LOSSLESS


def openai_record(
    rid: str,
    *turns: tuple[str, str],
    command: str | None = None,
    system: str | None = "You are helpful.",
) -> dict[str, Any]:
    """An OpenAI chat record; a ``("tool", text)`` turn gets a matching assistant tool call."""
    messages: list[dict[str, Any]] = []
    if system is not None:
        messages.append({"role": "system", "content": system})
    for n, (role, text) in enumerate(turns):
        if role == "tool":
            call_id = f"call_{n}"
            args = json.dumps({"command": command or "echo"})
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "bash", "arguments": args},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
        else:
            messages.append({"role": role, "content": text})
    return {"id": rid, "messages": messages}


def anthropic_record(
    rid: str, system: str, *turns: tuple[str, str], command: str = "echo"
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for n, (role, text) in enumerate(turns):
        if role == "tool":
            tool_id = f"toolu_{n}"
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": "bash",
                            "input": {"command": command},
                        }
                    ],
                }
            )
            messages.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": text}],
                }
            )
        else:
            messages.append({"role": role, "content": [{"type": "text", "text": text}]})
    return {"id": rid, "format": "anthropic", "system": system, "messages": messages}


def tool_output_record(rid: str, content: str, command: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"id": rid, "kind": "tool_output", "content": content}
    if command is not None:
        record["command"] = command
    return record


def make_unit(
    index: int, text: str, *, kind: str = "tool_result", role: str | None = None, **fields: Any
) -> Unit:
    """A unit ``m{index}`` at ``messages[index].content``.

    The role follows the kind (``tool`` for a tool result, else ``assistant``)
    unless given; ``fields`` are the other :class:`Unit` fields (``frozen``,
    ``command``, ``tool_name``...).
    """
    if role is None:
        role = "tool" if kind == "tool_result" else "assistant"
    return Unit(
        uid=f"m{index}",
        index=index,
        role=role,
        kind=kind,
        text=text,
        path=("messages", index, "content"),
        **fields,
    )


def expanded_record(outcome: Outcome) -> dict[str, Any]:
    """The record of a pipeline outcome expanded back with its own stash (strict)."""
    from workers.core.offload import MemoryStore
    from workers.pipeline.expand import expand_record

    store = MemoryStore()
    store.put_many(outcome.stash)
    return expand_record(outcome.record, store)


def with_texts(units: Sequence[Unit], texts: Sequence[str]) -> list[Unit]:
    """The units with new texts, as the pipeline hands them to the next engine."""
    return [replace(u, text=t) for u, t in zip(units, texts, strict=True)]


def corpus_units(lines: Iterable[bytes]) -> Iterator[list[Unit]]:
    """The units of every record of a JSONL corpus (one record a line)."""
    from workers.messages import parse_record

    for line in lines:
        yield list(parse_record(orjson.loads(line)).units)


def lossless_chain(
    units: Sequence[Unit], ctx: EngineContext, names: Sequence[str] = LOSSLESS_CHAIN
) -> list[Unit]:
    """Units as the lossless engines leave them (an engine that raises is skipped)."""
    from workers.engines import resolve

    out_units = list(units)
    for engine in resolve(tuple(names)):
        try:
            out = engine.apply(out_units, ctx)
        except Exception:
            continue
        out_units = with_texts(out_units, out.texts)
    return out_units


class DecodingEngine(Protocol):
    """A lossless engine: its markers decode without the stash."""

    @property
    def name(self) -> str: ...

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput: ...

    def decode(self, text: str, originals: Mapping[str, str]) -> str: ...


def lossless_round_trip(
    engine: DecodingEngine, text: str, ctx: EngineContext, kind: str = "tool_result"
) -> str:
    """``engine``'s text for one unit holding ``text``, checked to decode back to ``text``."""
    out = engine.apply([make_unit(1, text, kind=kind)], ctx).texts[0]
    assert engine.decode(out, {}) == text, f"{engine.name}: decode does not give the text back"
    return out


def check_corpus_changes(
    engine: Engine,
    corpus_lines: Iterable[bytes],
    ctx: EngineContext,
    *,
    chained: bool = False,
    decode: Callable[[str], str] | None = None,
    same: Callable[[str, str], bool] = operator.eq,
) -> int:
    """Run ``engine`` over every record of a corpus; return how many units it changed.

    With ``chained`` each record is also run as the lossless engines leave it.
    Every changed unit must not be frozen, must expand back from the stash
    (then ``decode``) to a text ``same`` as the original, and must pass the
    lossy gate (with the texts its ``_backrefs`` point at).
    """
    from workers.fidelity.lossy import check_lossy

    changed = 0
    for units in corpus_units(corpus_lines):
        for variant in (units, lossless_chain(units, ctx)) if chained else (units,):
            out = engine.apply(variant, ctx)
            assert len(out.texts) == len(variant), f"{engine.name}: one text per unit"
            backrefs = out.details.get("_backrefs", {})
            for i, (u, new) in enumerate(zip(variant, out.texts, strict=True)):
                if new == u.text:
                    continue
                changed += 1
                assert u.frozen is False, f"{engine.name} changed frozen unit {u.uid}"
                back = expanded(new, out.stash)
                if decode is not None:
                    back = decode(back)
                assert same(u.text, back), f"{engine.name}: unit {u.uid} does not expand back"
                refs = [out.texts[j] for j in backrefs.get(i, [])]
                problems = check_lossy(u.text, new, u.kind, out.stash, refs, u.command)
                assert problems == [], f"{engine.name}: unit {u.uid}: {problems}"
    return changed


class FunctionEngine(Engine):
    """An engine made of a text -> text function (for gate and pipeline tests)."""

    lossless = False

    def __init__(self, name: str, fn: Callable[[str], str], lossless: bool = False) -> None:
        self.name = name  # type: ignore[misc]
        self.lossless = lossless  # type: ignore[misc]
        self.fn = fn

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        return EngineOutput(texts=[self.fn(u.text) for u in units])


class RaisingEngine(Engine):
    name = "raising"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        raise RuntimeError("boom")
