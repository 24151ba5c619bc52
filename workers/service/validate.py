"""Edge validation: input values against their topic's JSON Schema (2020-12).

A valid value is accepted by a compiled validator (``fastjsonschema``: Python code generated
from the schema once, about 8x faster than walking it per record; ``ctxpress bench-kafka``'s
profile had the walk at 7 % of the pipeline thread for 2 KB records).  fastjsonschema knows
drafts up to 07, so it is used only for a schema whose keywords all mean the same there
(:data:`SAME_IN_DRAFT7`, checked at start-up); a value it refuses, or any other schema, goes
to ``jsonschema``'s 2020-12 validator, whose best error is the message.  So the verdict and
the message are ``jsonschema``'s for every value (``tests/property/test_edge_validator.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from workers.service.topics import SCHEMAS_DIR, TopicNames, load_topics

__all__ = ["SAME_IN_DRAFT7", "EdgeValidator", "compiled_accept"]

#: keywords that validate alike in draft 07 (fastjsonschema) and 2020-12 (``items`` only as
#: one schema, not as draft 07's tuple form), and annotations that validate nothing
SAME_IN_DRAFT7 = frozenset(
    {
        "$schema", "$id", "$ref", "$defs", "$comment", "title", "description", "examples",
        "default", "type", "enum", "const", "properties", "required", "additionalProperties",
        "items", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "pattern", "allOf", "anyOf", "oneOf", "not",
        "if", "then", "else",
    }
)  # fmt: skip

_SCHEMA_MAPS = ("properties", "$defs")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else")


def _same_in_draft7(schema: Any) -> bool:
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for keyword, value in schema.items():
        if keyword not in SAME_IN_DRAFT7:
            return False
        if keyword in _SCHEMA_MAPS:
            if not all(_same_in_draft7(sub) for sub in value.values()):
                return False
        elif keyword in ("allOf", "anyOf", "oneOf"):
            if not all(_same_in_draft7(sub) for sub in value):
                return False
        elif keyword == "$ref":
            if not (isinstance(value, str) and value.startswith("#/")):
                return False  # only references inside the schema itself
        elif keyword in _SUBSCHEMAS and not _same_in_draft7(value):
            return False  # a list (draft 07's tuple items) is refused here
    return True


def compiled_accept(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A compiled check that says True only for values valid under ``schema`` (2020-12), or
    None when ``schema`` uses a keyword that draft 07 reads otherwise."""
    if not _same_in_draft7(schema):
        return None
    draft7 = {k: v for k, v in schema.items() if k not in ("$schema", "$id")}
    check = fastjsonschema.compile(draft7)

    def accept(value: Any) -> bool:
        try:
            check(value)
        except Exception:  # refused, or a value it cannot judge: jsonschema decides
            return False
        return True

    return accept


_Entry = tuple[str, Draft202012Validator, Callable[[Any], bool] | None]


class EdgeValidator:
    """JSON Schema (2020-12) validation of input values; validators compiled once."""

    def __init__(self, names: TopicNames, schemas_dir: Path = SCHEMAS_DIR) -> None:
        specs = load_topics(schemas_dir.parent / "topics")
        self._by_topic: dict[str, _Entry] = {}
        cache: dict[str, _Entry] = {}
        for short in ("transcripts", "tool-outputs"):
            schema_file = specs[short].value_schema
            if schema_file not in cache:
                schema = json.loads((schemas_dir / schema_file).read_text(encoding="utf-8"))
                Draft202012Validator.check_schema(schema)
                cache[schema_file] = (
                    schema_file,
                    Draft202012Validator(schema),
                    compiled_accept(schema),
                )
            self._by_topic[names.by_short(short)] = cache[schema_file]
        self._transcript = self._by_topic[names.transcripts]
        self._tool_output = self._by_topic[names.tool_outputs]

    def error(self, topic: str, value: Any) -> str | None:
        """Why ``value`` does not match its topic's schema, or None when it does.

        A topic that is not one of ours (a replay to a custom topic) is judged
        by shape: ``"kind": "tool_output"`` against the tool-output schema.
        """
        entry = self._by_topic.get(topic)
        if entry is None:
            is_tool = isinstance(value, dict) and value.get("kind") == "tool_output"
            entry = self._tool_output if is_tool else self._transcript
        schema_file, validator, accept = entry
        if accept is not None and accept(value):
            return None
        error = best_match(validator.iter_errors(value))
        if error is None:
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        return f"value does not match schemas/{schema_file} at ${where}: {message}"
