"""Edge validation: input values against their topic's JSON Schema (2020-12)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from workers.service.topics import SCHEMAS_DIR, TopicNames, load_topics

__all__ = ["EdgeValidator"]


class EdgeValidator:
    """JSON Schema (2020-12) validation of input values; validators compiled once."""

    def __init__(self, names: TopicNames, schemas_dir: Path = SCHEMAS_DIR) -> None:
        specs = load_topics(schemas_dir.parent / "topics")
        self._by_topic: dict[str, tuple[str, Draft202012Validator]] = {}
        cache: dict[str, Draft202012Validator] = {}
        for short in ("transcripts", "tool-outputs"):
            schema_file = specs[short].value_schema
            if schema_file not in cache:
                schema = json.loads((schemas_dir / schema_file).read_text(encoding="utf-8"))
                Draft202012Validator.check_schema(schema)
                cache[schema_file] = Draft202012Validator(schema)
            self._by_topic[names.by_short(short)] = (schema_file, cache[schema_file])
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
        schema_file, validator = entry
        error = best_match(validator.iter_errors(value))
        if error is None:
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        return f"value does not match schemas/{schema_file} at ${where}: {message}"
