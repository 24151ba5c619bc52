"""Topic definitions as data: ``topics/*.json`` -> :class:`TopicSpec`, and topic creation.

One file per topic, named after the topic's short name::

    {"name": "offload", "partitions": 4, "replication_factor": 1, "retention_ms": -1,
     "cleanup_policy": "compact", "key": "content hash ...", "value_schema": "offload.schema.json"}

The full Kafka name is the prefix (setting ``CTXPRESS_TOPIC_PREFIX``, default ``ctxpress.``)
followed by the short name. ``value_schema`` names a JSON Schema file under ``schemas/``.
Faust's one internal topic, the ``savings`` table's changelog, is defined here too
(``topics/savings-changelog.json``, name ``<prefix>savings-changelog``): the broker does not
create topics, so ``ctxpress topics create`` does, and the worker refuses to start without it
(:func:`missing_topics`).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workers.core.errors import CtxpressError
from workers.core.settings import Settings, SettingsError

__all__ = [
    "CLEANUP_POLICIES",
    "REPO_ROOT",
    "SCHEMAS_DIR",
    "SHORT_NAMES",
    "TOPICS_DIR",
    "MissingTopicsError",
    "TopicLimitError",
    "TopicNames",
    "TopicSpec",
    "TopicSpecError",
    "create_topics",
    "limit_problems",
    "load_topics",
    "missing_topics",
    "require_topics",
    "topic_limits",
]

# The package is installed editable from the repository: topics/ and schemas/ sit next to workers/.
REPO_ROOT = Path(__file__).resolve().parents[2]
TOPICS_DIR = REPO_ROOT / "topics"
SCHEMAS_DIR = REPO_ROOT / "schemas"

CLEANUP_POLICIES = frozenset({"delete", "compact", "compact,delete", "delete,compact"})
_LEGAL_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_MAX_TOPIC_NAME = 249
_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "partitions": int,
    "replication_factor": int,
    "retention_ms": int,
    "cleanup_policy": str,
    "key": str,
    "value_schema": str,
}
_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "description": str,
    "direction": str,
    "configs": dict,
}
_DIRECTIONS = frozenset({"in", "out", "internal"})


class TopicSpecError(CtxpressError, ValueError):
    """A topic file is missing, unreadable or invalid; the message names the file."""


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """One topic as defined in ``topics/<name>.json``."""

    name: str
    partitions: int
    replication_factor: int
    retention_ms: int
    cleanup_policy: str
    key: str
    value_schema: str
    description: str = ""
    direction: str = ""
    configs: tuple[tuple[str, str], ...] = ()
    source: str = ""

    def full_name(self, prefix: str) -> str:
        """The Kafka topic name: ``prefix + name``."""
        return f"{prefix}{self.name}"

    def kafka_configs(self, max_message_bytes: int | None = None) -> dict[str, str]:
        """Topic-level Kafka configs: cleanup.policy, retention.ms, max.message.bytes (the
        ``CTXPRESS_MAX_MESSAGE_BYTES`` setting, given by the caller) and any extra ``configs``."""
        out = {"cleanup.policy": self.cleanup_policy, "retention.ms": str(self.retention_ms)}
        if max_message_bytes is not None:
            out["max.message.bytes"] = str(max_message_bytes)
        out.update(self.configs)
        return out


def _fail(path: Path, problem: str) -> TopicSpecError:
    return TopicSpecError(f"{path}: {problem}")


def _parse(path: Path, data: Any, schemas_dir: Path | None) -> TopicSpec:
    if not isinstance(data, dict):
        raise _fail(path, f"must contain a JSON object, got {type(data).__name__}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise _fail(path, f"missing field(s) {', '.join(missing)}")
    unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        allowed = ", ".join([*_REQUIRED, *_OPTIONAL])
        raise _fail(path, f"unknown field(s) {', '.join(unknown)}; allowed: {allowed}")
    for field_name, expected in {**_REQUIRED, **_OPTIONAL}.items():
        if field_name not in data:
            continue
        value = data[field_name]
        if isinstance(value, bool) or not isinstance(value, expected):
            want = expected.__name__ if isinstance(expected, type) else str(expected)
            raise _fail(path, f"{field_name} must be of type {want}, got {value!r}")

    name: str = data["name"]
    if name != path.stem:
        raise _fail(path, f"name {name!r} must match the file name {path.stem!r}")
    if not _LEGAL_NAME.match(name):
        raise _fail(path, f"name {name!r} may only contain letters, digits, '.', '_' and '-'")
    if data["partitions"] < 1:
        raise _fail(path, f"partitions must be at least 1, got {data['partitions']}")
    if data["replication_factor"] < 1:
        raise _fail(
            path, f"replication_factor must be at least 1, got {data['replication_factor']}"
        )
    if data["retention_ms"] < -1:
        raise _fail(
            path, f"retention_ms must be -1 (forever) or a number of ms, got {data['retention_ms']}"
        )
    policy = data["cleanup_policy"].replace(" ", "")
    if policy not in CLEANUP_POLICIES:
        raise _fail(
            path,
            f"cleanup_policy must be one of {', '.join(sorted(CLEANUP_POLICIES))}, "
            f"got {data['cleanup_policy']!r}",
        )
    if not data["key"].strip():
        raise _fail(path, "key must describe the record key, got an empty string")
    schema = data["value_schema"]
    if "/" in schema or "\\" in schema or not schema.endswith(".json"):
        raise _fail(path, f"value_schema must be a .json file name under schemas/, got {schema!r}")
    if schemas_dir is not None and not (schemas_dir / schema).is_file():
        raise _fail(path, f"value_schema {schema!r} does not exist in {schemas_dir}")
    direction = data.get("direction", "")
    if direction and direction not in _DIRECTIONS:
        raise _fail(path, f"direction must be one of in, out, internal, got {direction!r}")
    extra: dict[str, Any] = data.get("configs", {})
    for k, v in extra.items():
        if not isinstance(v, str | int) or isinstance(v, bool):
            raise _fail(path, f"configs[{k!r}] must be a string or an integer, got {v!r}")
        if k in ("cleanup.policy", "retention.ms"):
            raise _fail(
                path, f"configs must not set {k}: use the cleanup_policy/retention_ms fields"
            )
    return TopicSpec(
        name=name,
        partitions=data["partitions"],
        replication_factor=data["replication_factor"],
        retention_ms=data["retention_ms"],
        cleanup_policy=policy,
        key=data["key"],
        value_schema=schema,
        description=data.get("description", ""),
        direction=direction,
        configs=tuple(sorted((k, str(v)) for k, v in extra.items())),
        source=str(path),
    )


def load_topics(dir: Path | str | None = None) -> dict[str, TopicSpec]:
    """Load and validate every ``*.json`` in ``dir`` (default: the repository's ``topics/``).

    Returns short name -> spec, sorted by name. ``value_schema`` files are checked against the
    ``schemas/`` folder next to ``dir`` when that folder exists.
    Raises :class:`TopicSpecError` naming the offending file.
    """
    topics_dir = Path(dir) if dir is not None else TOPICS_DIR
    if not topics_dir.is_dir():
        raise TopicSpecError(
            f"{topics_dir}: topic definitions folder not found (expected the repository's topics/)"
        )
    schemas_dir = topics_dir.parent / "schemas"
    specs: dict[str, TopicSpec] = {}
    for path in sorted(topics_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise _fail(path, f"cannot read: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise _fail(
                path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from exc
        spec = _parse(path, data, schemas_dir if schemas_dir.is_dir() else None)
        specs[spec.name] = spec
    if not specs:
        raise TopicSpecError(f"{topics_dir}: no topic definitions (*.json) found")
    return specs


def _specs(specs: Mapping[str, TopicSpec] | Iterable[TopicSpec]) -> list[TopicSpec]:
    if isinstance(specs, Mapping):
        return list(specs.values())
    return list(specs)


async def create_topics(
    bootstrap: str,
    specs: Mapping[str, TopicSpec] | Iterable[TopicSpec],
    prefix: str,
    *,
    replication_factor: int | None = None,
    client_options: Mapping[str, Any] | None = None,
    timeout_ms: int = 30000,
    wait_ready: bool = True,
    max_message_bytes: int | None = None,
) -> list[str]:
    """Create the topics that do not exist yet; return the full names created.

    ``max_message_bytes`` (the ``CTXPRESS_MAX_MESSAGE_BYTES`` setting; None: the
    default setting) becomes every topic's ``max.message.bytes``.

    Idempotent: existing topics are left alone (their partitions and configs are not changed),
    including ones another client creates at the same moment. ``replication_factor`` overrides
    the files' value (e.g. 3 on a production cluster); ``client_options`` go to
    ``AIOKafkaAdminClient`` (security_protocol, sasl_*, ssl_context, ...). With ``wait_ready``
    the call returns only when every created topic has a leader for each partition, so a
    producer or consumer can use them at once.
    """
    from aiokafka.admin import NewTopic
    from aiokafka.errors import TopicAlreadyExistsError, for_code

    from workers.service.kafka import clients

    wanted = _specs(specs)
    limit = max_message_bytes if max_message_bytes is not None else Settings().max_message_bytes
    for spec in wanted:
        full = spec.full_name(prefix)
        if len(full) > _MAX_TOPIC_NAME or not _LEGAL_NAME.match(full):
            raise TopicSpecError(
                f"topic name {full!r} (prefix {prefix!r} + {spec.name!r}) is not a legal Kafka "
                f"topic name: at most {_MAX_TOPIC_NAME} letters, digits, '.', '_' or '-'"
            )
    admin = clients.admin(
        clients.connection(bootstrap=bootstrap, options=client_options),
        client_id="ctxpress-topics",
        request_timeout_ms=timeout_ms,
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        new = [
            NewTopic(
                name=spec.full_name(prefix),
                num_partitions=spec.partitions,
                replication_factor=replication_factor or spec.replication_factor,
                topic_configs=spec.kafka_configs(limit),
            )
            for spec in wanted
            if spec.full_name(prefix) not in existing
        ]
        if not new:
            return []
        response = await admin.create_topics(new, timeout_ms=timeout_ms)
        created: list[str] = []
        errors: list[str] = []
        for entry in response.topic_errors:
            topic, code = entry[0], entry[1]
            message = entry[2] if len(entry) > 2 else None
            if code == 0:
                created.append(topic)
                continue
            error_class = for_code(code)
            if error_class is TopicAlreadyExistsError:
                continue  # created by someone else in the meantime: fine
            errors.append(f"{topic}: {error_class.__name__} ({message or 'no message'})")
        if errors:
            raise RuntimeError(f"could not create topics on {bootstrap}: " + "; ".join(errors))
        if wait_ready and created:
            want = {t.name: t.num_partitions for t in new if t.name in created}
            await _wait_until_ready(admin, want, timeout_ms / 1000.0, bootstrap)
        return sorted(created)
    finally:
        await admin.close()


async def _wait_until_ready(admin: Any, want: dict[str, int], timeout_s: float, where: str) -> None:
    """Poll metadata until every topic in ``want`` has all its partitions with a leader.

    CreateTopics returns when the controller has committed the topics; the broker that answers
    metadata requests may need a moment longer (until then it reports 0 partitions or
    LEADER_NOT_AVAILABLE), and a producer or consumer started right away would see that.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    pending = dict(want)
    while True:
        for topic in await admin.describe_topics(list(pending)):
            name = topic["topic"]
            parts = topic["partitions"]
            if (
                name in pending
                and topic["error_code"] == 0
                and len(parts) == pending[name]
                and all(p["error_code"] == 0 and p["leader"] >= 0 for p in parts)
            ):
                del pending[name]
        if not pending:
            return
        if loop.time() >= deadline:
            raise RuntimeError(
                f"topics created on {where} but not ready after {timeout_s:.0f} s: "
                + ", ".join(sorted(pending))
            )
        await asyncio.sleep(0.1)


SHORT_NAMES = ("transcripts", "tool-outputs", "compressed", "stats", "dead-letter", "offload")
#: the savings table's changelog (written and read by Faust, created by ``topics create``)
CHANGELOG_SHORT = "savings-changelog"


class MissingTopicsError(CtxpressError, RuntimeError):
    """Topics the worker needs do not exist; the message says what command creates them."""


async def missing_topics(
    bootstrap: str,
    wanted: Iterable[str],
    *,
    client_options: Mapping[str, Any] | None = None,
    timeout_ms: int = 15000,
) -> list[str]:
    """The names in ``wanted`` the cluster does not have (one metadata request)."""
    async with _check_admin(bootstrap, client_options, timeout_ms) as admin:
        existing = set(await admin.list_topics())
    return [name for name in wanted if name not in existing]


@asynccontextmanager
async def _check_admin(
    bootstrap: str, client_options: Mapping[str, Any] | None, timeout_ms: int
) -> AsyncIterator[Any]:
    """A started admin client for the start-up checks, closed afterwards."""
    from workers.service.kafka import clients

    admin = clients.admin(
        clients.connection(bootstrap=bootstrap, options=client_options),
        client_id="ctxpress-topics-check",
        request_timeout_ms=timeout_ms,
    )
    await admin.start()
    try:
        yield admin
    finally:
        await admin.close()


class TopicLimitError(CtxpressError, RuntimeError):
    """An output topic takes smaller records than the worker may write; says what to change."""


async def topic_limits(
    bootstrap: str,
    topics: Iterable[str],
    *,
    client_options: Mapping[str, Any] | None = None,
    timeout_ms: int = 15000,
) -> dict[str, int]:
    """topic -> its effective ``max.message.bytes`` (the broker's default when not set)."""
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

    wanted = [
        ConfigResource(ConfigResourceType.TOPIC, name, {"max.message.bytes": None})
        for name in topics
    ]
    async with _check_admin(bootstrap, client_options, timeout_ms) as admin:
        responses = await admin.describe_configs(wanted)
    limits: dict[str, int] = {}
    for response in responses:
        for error_code, _message, _type, name, entries in response.resources:
            for entry in entries if error_code == 0 else ():
                if entry[0] == "max.message.bytes":
                    limits[name] = int(entry[1])
    return limits


def limit_problems(settings: Settings, names: TopicNames, limits: Mapping[str, int]) -> list[str]:
    """The topics whose ``max.message.bytes`` is below what the worker may write to them."""
    want = settings.max_message_bytes
    outputs = (names.compressed, names.stats, names.dead_letter, names.offload)
    return [
        f"{topic} (max.message.bytes={limits[topic]:,})"
        for topic in outputs
        if topic in limits and limits[topic] < want
    ]


async def require_topics(settings: Settings, names: TopicNames) -> None:
    """Raise :class:`MissingTopicsError` naming the command to run when a topic is missing,
    :class:`TopicLimitError` when an output topic takes smaller records than
    ``CTXPRESS_MAX_MESSAGE_BYTES`` (the worker would stop at the first big record)."""
    from workers.service.kafka.options import bootstrap_list, client_options

    bootstrap = ",".join(bootstrap_list(settings))
    options = client_options(settings)
    absent = await missing_topics(bootstrap, names.all(), client_options=options)
    if not absent:
        limits = await topic_limits(bootstrap, names.all(), client_options=options)
        small = limit_problems(settings, names, limits)
        if small:
            want = settings.max_message_bytes
            raise TopicLimitError(
                f"CTXPRESS_MAX_MESSAGE_BYTES={want:,} but {', '.join(small)} take(s) smaller "
                "records, so the first big output would stop the worker. Raise the topics' "
                f"limit (kafka-configs.sh --bootstrap-server {bootstrap} --alter --entity-type "
                f"topics --entity-name TOPIC --add-config max.message.bytes={want}) or lower "
                "CTXPRESS_MAX_MESSAGE_BYTES (or CTXPRESS_MAX_RECORD_BYTES) to fit them"
            )
    if absent:
        prefix = (
            "" if settings.topic_prefix == "ctxpress." else f" --prefix {settings.topic_prefix}"
        )
        raise MissingTopicsError(
            f"{len(absent)} topic(s) missing on {bootstrap}: {', '.join(absent)}. The broker does "
            f"not create topics; create them first with: ctxpress topics create{prefix} "
            f"--bootstrap {bootstrap}"
        )


@dataclass(frozen=True, slots=True)
class TopicNames:
    """Full Kafka topic names of the six topics (prefix + short name)."""

    transcripts: str
    tool_outputs: str
    compressed: str
    stats: str
    dead_letter: str
    offload: str
    savings_changelog: str = ""

    @classmethod
    def from_prefix(cls, prefix: str) -> TopicNames:
        t, o, c, s, d, f = (f"{prefix}{name}" for name in SHORT_NAMES)
        return cls(t, o, c, s, d, f, savings_changelog=f"{prefix}{CHANGELOG_SHORT}")

    def all(self) -> tuple[str, ...]:
        """Every topic the worker reads or writes, its table's changelog included."""
        six = tuple(getattr(self, short.replace("-", "_")) for short in SHORT_NAMES)
        return (*six, self.savings_changelog) if self.savings_changelog else six

    @classmethod
    def from_settings(cls, settings: Settings) -> TopicNames:
        return cls.from_prefix(settings.topic_prefix)

    @property
    def inputs(self) -> tuple[str, str]:
        return (self.transcripts, self.tool_outputs)

    def by_short(self, short: str) -> str:
        """Full name for a short name (``dead-letter`` -> ``<prefix>dead-letter``)."""
        try:
            return getattr(self, short.replace("-", "_"))  # type: ignore[no-any-return]
        except AttributeError:
            raise SettingsError(
                f"unknown topic {short!r}; valid topics: {', '.join(SHORT_NAMES)}"
            ) from None
