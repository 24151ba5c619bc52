"""Chat record shapes (OpenAI, Anthropic, single tool output) <-> one internal model."""

from workers.messages.codec import (
    RESERVED_KEY,
    InvalidRecord,
    apply_texts,
    id_problem,
    parse_record,
    record_id,
)
from workers.messages.model import Record, Unit

__all__ = [
    "RESERVED_KEY",
    "InvalidRecord",
    "Record",
    "Unit",
    "apply_texts",
    "id_problem",
    "parse_record",
    "record_id",
]
