"""One frozen settings object, read from the environment once.

Every setting is declared in ``SETTINGS`` with its variable, default and a
sentence of help; ``Settings.from_env`` builds the object and
``settings_help()`` renders the table that ``ctxpress worker --help`` prints.
Bad values fail at start-up with a message that names the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from workers.core.errors import CtxpressError

__all__ = ["SETTINGS", "Settings", "SettingsError", "settings_help"]


class SettingsError(CtxpressError, ValueError):
    """A configuration value is missing or malformed."""


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    env: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "mode",
        "CTXPRESS_MODE",
        "lossless",
        "default mode when a record has no 'mode' field: off, lossless, standard, aggressive",
    ),
    Setting(
        "encoding",
        "CTXPRESS_ENCODING",
        "cl100k_base",
        "tiktoken encoding for token counts (cl100k_base or o200k_base)",
    ),
    Setting(
        "token_backend",
        "CTXPRESS_TOKEN_BACKEND",
        "auto",
        "who counts tokens: tiktoken, bpe-openai (the same counts, ~3x faster) or auto (bpe-openai when installed)",
    ),
    Setting(
        "allow_lossy_structure",
        "CTXPRESS_ALLOW_LOSSY_STRUCTURE",
        False,
        "let the structured engine use lossy strategies (drop_nulls, round_numbers, ...) unless a record says otherwise",
    ),
    Setting(
        "max_record_bytes",
        "CTXPRESS_MAX_RECORD_BYTES",
        16 * 1024 * 1024,
        "records larger than this go to the dead letter instead of being compressed",
    ),
    Setting(
        "redact_output",
        "CTXPRESS_REDACT_OUTPUT",
        False,
        "redact secrets in the compressed output too (training and eval feeds); the record's "
        "stats count them (secrets_redacted) and expand cannot restore them",
    ),
    Setting(
        "offload_dir",
        "CTXPRESS_OFFLOAD_DIR",
        "",
        "directory store for stashed originals (batch CLI default; empty = in-memory)",
    ),
    Setting(
        "filters_dir",
        "CTXPRESS_FILTERS_DIR",
        "",
        "directory with user toolfilter files (JSON or TOML), loaded after the built-in ones",
    ),
    Setting(
        "trust_project_filters",
        "CTXPRESS_TRUST_PROJECT_FILTERS",
        False,
        "load filter files from the project's .ctxpress/filters directory",
    ),
    Setting(
        "kafka_bootstrap",
        "CTXPRESS_KAFKA_BOOTSTRAP",
        "127.0.0.1:19092",
        "Kafka bootstrap servers (host:port[,host:port]); unset: 127.0.0.1:$CTXPRESS_KAFKA_PORT, "
        "else the broker 'ctxpress kafka start' left running (.cache/kafka/kafka.bootstrap)",
    ),
    Setting(
        "kafka_security_protocol",
        "CTXPRESS_KAFKA_SECURITY_PROTOCOL",
        "PLAINTEXT",
        "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
    ),
    Setting(
        "kafka_sasl_mechanism",
        "CTXPRESS_KAFKA_SASL_MECHANISM",
        "",
        "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 when SASL is used",
    ),
    Setting("kafka_sasl_username", "CTXPRESS_KAFKA_SASL_USERNAME", "", "SASL user name"),
    Setting(
        "kafka_sasl_password",
        "CTXPRESS_KAFKA_SASL_PASSWORD",
        "",
        "SASL password (keep it in a Secret, not in a ConfigMap)",
    ),
    Setting(
        "kafka_ssl_cafile",
        "CTXPRESS_KAFKA_SSL_CAFILE",
        "",
        "CA bundle for SSL connections to the brokers",
    ),
    Setting(
        "kafka_ssl_certfile", "CTXPRESS_KAFKA_SSL_CERTFILE", "", "client certificate for mutual TLS"
    ),
    Setting("kafka_ssl_keyfile", "CTXPRESS_KAFKA_SSL_KEYFILE", "", "client key for mutual TLS"),
    Setting(
        "topic_prefix",
        "CTXPRESS_TOPIC_PREFIX",
        "ctxpress.",
        "prefix of every topic name (short names come from topics/)",
    ),
    Setting("app_id", "CTXPRESS_APP_ID", "ctxpress-worker", "Faust app id = Kafka consumer group"),
    Setting(
        "processing_guarantee",
        "CTXPRESS_PROCESSING_GUARANTEE",
        "exactly_once",
        "exactly_once (Kafka transactions) or at_least_once",
    ),
    Setting(
        "batch_size",
        "CTXPRESS_BATCH_SIZE",
        256,
        "records taken per agent batch (take_batches); published in chunks of about 2 MB",
    ),
    Setting("batch_timeout", "CTXPRESS_BATCH_TIMEOUT", 0.05, "seconds to wait for a batch to fill"),
    Setting("concurrency", "CTXPRESS_CONCURRENCY", 1, "agent instances per worker process"),
    Setting(
        "pipeline_process",
        "CTXPRESS_PIPELINE_PROCESS",
        False,
        "run the worker's pipeline in a child process instead of a thread: the event loop "
        "(Kafka, Faust, the web server) and the compression then use two cores instead of "
        "sharing one interpreter lock (costs the child's memory: its own tokenizer tables)",
    ),
    Setting(
        "fetch_max_bytes",
        "CTXPRESS_FETCH_MAX_BYTES",
        8 * 1024 * 1024,
        "the worker's consumer asks for at most this many bytes per fetch (Kafka's "
        "fetch.max.bytes, a soft limit: a larger record still comes whole); aiokafka's 50 MB "
        "default held a whole backlog of big records in memory at once",
    ),
    Setting(
        "malloc_mmap_threshold",
        "CTXPRESS_MALLOC_MMAP_THRESHOLD",
        32768,
        "the worker's C allocator maps blocks of this many bytes or more on their own, so "
        "that freeing a record's buffers gives the memory back (glibc; 0: glibc's default, "
        "which kept about 200 KB per 50 KB record: see workers/core/heap.py)",
    ),
    Setting(
        "producer_linger_ms",
        "CTXPRESS_PRODUCER_LINGER_MS",
        5,
        "producer linger in milliseconds (batches sends)",
    ),
    Setting(
        "web_host",
        "CTXPRESS_WEB_HOST",
        "127.0.0.1",
        "address of the worker's web server (/metrics, /expand/{hash})",
    ),
    Setting("web_port", "CTXPRESS_WEB_PORT", 6066, "port of the worker's web server"),
    Setting(
        "web_token",
        "CTXPRESS_WEB_TOKEN",
        "",
        "bearer token required by /expand/{hash} (required when web_host is not loopback)",
    ),
    Setting(
        "data_dir", "CTXPRESS_DATA_DIR", ".cache/worker", "Faust data directory (tables, state)"
    ),
    Setting(
        "producer_max_batch_size",
        "CTXPRESS_PRODUCER_MAX_BATCH_SIZE",
        1024 * 1024,
        "producer batch size in bytes per partition (bigger batches, fewer requests)",
    ),
    Setting(
        "session_timeout",
        "CTXPRESS_SESSION_TIMEOUT",
        10.0,
        "consumer group session timeout in seconds (how fast a dead worker's partitions move)",
    ),
    Setting(
        "rebalance_timeout",
        "CTXPRESS_REBALANCE_TIMEOUT",
        10.0,
        "consumer group rebalance timeout in seconds (joining takes about half of it)",
    ),
    Setting(
        "transaction_timeout_ms",
        "CTXPRESS_TRANSACTION_TIMEOUT_MS",
        60000,
        "exactly_once: the broker aborts a transaction a killed worker left open after this long "
        "(a restarted worker aborts it at once)",
    ),
    Setting(
        "max_message_bytes",
        "CTXPRESS_MAX_MESSAGE_BYTES",
        0,
        "largest Kafka record, one meaning end to end: the max.message.bytes 'topics create' "
        "gives every topic, the local broker's message.max.bytes, the producers' "
        "max_request_size, the consumers' fetch sizes and the check every output passes (an "
        "output over it becomes a dead letter, a dead letter over it is cut to fit); 0: "
        "CTXPRESS_MAX_RECORD_BYTES + 1 MiB (room for the compression object and dead-letter "
        "headers)",
    ),
    Setting(
        "metadata_max_age_ms",
        "CTXPRESS_METADATA_MAX_AGE_MS",
        10000,
        "how often the worker's consumer refreshes topic metadata: partitions added to an "
        "input topic are consumed (after a rebalance) within about this long",
    ),
    Setting(
        "table_recovery_stall_s",
        "CTXPRESS_TABLE_RECOVERY_STALL_S",
        15.0,
        "seconds the savings table's recovery after a rebalance may go without progress before "
        "the worker looks why: a changelog read to its end counts as restored (transaction "
        "markers), else it is sought again, and after as long again restored with what it has "
        "(records never wait on the table for good)",
    ),
    Setting(
        "shutdown_timeout",
        "CTXPRESS_SHUTDOWN_TIMEOUT",
        30.0,
        "seconds a worker may take to stop after SIGTERM or a fatal error before it exits "
        "anyway (keep it below the deployment's grace period)",
    ),
    Setting(
        "pipeline_factory",
        "CTXPRESS_PIPELINE_FACTORY",
        "",
        "module:function(settings) returning the Pipeline the worker runs (custom engine chains); "
        "empty: the built-in modes",
    ),
    Setting(
        "combos_file",
        "CTXPRESS_COMBOS_FILE",
        "",
        "TOML file of named engine chains (combos) and which topic or tenant uses which "
        "(e.g. combos.toml); a record picks one with a 'combo' field or a ctxpress.combo header",
    ),
    Setting(
        "combo",
        "CTXPRESS_COMBO",
        "",
        "combo of CTXPRESS_COMBOS_FILE for records that choose neither a combo nor a mode "
        "(empty: CTXPRESS_MODE)",
    ),
    Setting(
        "auto_off_below",
        "CTXPRESS_AUTO_OFF_BELOW",
        2000,
        "mode auto: records with fewer tokens than this are left as they are (off)",
    ),
    Setting(
        "auto_lossless_below",
        "CTXPRESS_AUTO_LOSSLESS_BELOW",
        16000,
        "mode auto: records with fewer tokens than this (and at least CTXPRESS_AUTO_OFF_BELOW) "
        "are lossless; from here on standard",
    ),
    Setting(
        "context_window",
        "CTXPRESS_CONTEXT_WINDOW",
        128000,
        "mode auto: the model's context window in tokens",
    ),
    Setting(
        "auto_aggressive_share",
        "CTXPRESS_AUTO_AGGRESSIVE_SHARE",
        0.75,
        "mode auto: records of at least this share of CTXPRESS_CONTEXT_WINDOW are aggressive",
    ),
)


def _convert(setting: Setting, raw: str) -> Any:
    default = setting.default
    try:
        if isinstance(default, bool):
            lowered = raw.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError as exc:
        raise SettingsError(
            f"{setting.env}={raw!r} is not a valid {type(default).__name__}: {setting.help}"
        ) from exc
    return raw


#: what a Kafka record may hold beyond the largest input record (CTXPRESS_MAX_MESSAGE_BYTES=0)
MESSAGE_HEADROOM = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Settings:
    mode: str = "lossless"
    encoding: str = "cl100k_base"
    token_backend: str = "auto"
    allow_lossy_structure: bool = False
    max_record_bytes: int = 16 * 1024 * 1024
    redact_output: bool = False
    offload_dir: str = ""
    filters_dir: str = ""
    trust_project_filters: bool = False
    kafka_bootstrap: str = "127.0.0.1:19092"
    kafka_security_protocol: str = "PLAINTEXT"
    kafka_sasl_mechanism: str = ""
    kafka_sasl_username: str = ""
    kafka_sasl_password: str = field(default="", repr=False)  # a secret: never printed
    kafka_ssl_cafile: str = ""
    kafka_ssl_certfile: str = ""
    kafka_ssl_keyfile: str = ""
    topic_prefix: str = "ctxpress."
    app_id: str = "ctxpress-worker"
    processing_guarantee: str = "exactly_once"
    batch_size: int = 256
    batch_timeout: float = 0.05
    concurrency: int = 1
    pipeline_process: bool = False
    fetch_max_bytes: int = 8 * 1024 * 1024
    malloc_mmap_threshold: int = 32768
    producer_linger_ms: int = 5
    web_host: str = "127.0.0.1"
    web_port: int = 6066
    web_token: str = ""
    data_dir: str = ".cache/worker"
    producer_max_batch_size: int = 1024 * 1024
    session_timeout: float = 10.0
    rebalance_timeout: float = 10.0
    transaction_timeout_ms: int = 60000
    max_message_bytes: int = 0
    metadata_max_age_ms: int = 10000
    table_recovery_stall_s: float = 15.0
    shutdown_timeout: float = 30.0
    pipeline_factory: str = ""
    combos_file: str = ""
    combo: str = ""
    auto_off_below: int = 2000
    auto_lossless_below: int = 16000
    context_window: int = 128000
    auto_aggressive_share: float = 0.75

    def __post_init__(self) -> None:
        if self.max_message_bytes == 0:  # derived: see CTXPRESS_MAX_MESSAGE_BYTES
            object.__setattr__(self, "max_message_bytes", self.max_record_bytes + MESSAGE_HEADROOM)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            if setting.env in env:
                values[setting.name] = _convert(setting, env[setting.env])
        if "kafka_bootstrap" not in values:  # the local broker's rule (core/localkafka)
            from workers.core.localkafka import bootstrap_from_env

            values["kafka_bootstrap"] = bootstrap_from_env(env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        from workers.core.catalog import MODES
        from workers.core.tokens import BACKENDS

        if self.mode not in MODES and self.mode != "auto":
            raise SettingsError(
                f"unknown mode {self.mode!r} in CTXPRESS_MODE; valid modes: {', '.join(MODES)}, "
                "auto"
            )
        if not 0 <= self.auto_off_below <= self.auto_lossless_below:
            raise SettingsError(
                "CTXPRESS_AUTO_OFF_BELOW must be between 0 and CTXPRESS_AUTO_LOSSLESS_BELOW, got "
                f"{self.auto_off_below} and {self.auto_lossless_below}"
            )
        if self.context_window < 1 or not 0 < self.auto_aggressive_share <= 1:
            raise SettingsError(
                "CTXPRESS_CONTEXT_WINDOW must be a positive number of tokens and "
                "CTXPRESS_AUTO_AGGRESSIVE_SHARE a share above 0 and at most 1, got "
                f"{self.context_window} and {self.auto_aggressive_share}"
            )
        if self.combo and not self.combos_file:
            raise SettingsError(
                f"CTXPRESS_COMBO={self.combo!r} needs CTXPRESS_COMBOS_FILE (the file that "
                "defines it)"
            )
        if self.token_backend not in BACKENDS:
            raise SettingsError(
                "CTXPRESS_TOKEN_BACKEND must be auto, bpe-openai or tiktoken, "
                f"got {self.token_backend!r}"
            )
        if self.processing_guarantee not in ("exactly_once", "at_least_once"):
            raise SettingsError(
                "CTXPRESS_PROCESSING_GUARANTEE must be exactly_once or at_least_once, "
                f"got {self.processing_guarantee!r}"
            )
        if self.batch_size < 1:
            raise SettingsError("CTXPRESS_BATCH_SIZE must be at least 1")
        if self.fetch_max_bytes < 1:
            raise SettingsError("CTXPRESS_FETCH_MAX_BYTES must be at least 1")
        if self.malloc_mmap_threshold < 0:
            raise SettingsError(
                "CTXPRESS_MALLOC_MMAP_THRESHOLD must be 0 (glibc's default) or a byte count"
            )
        if self.max_message_bytes < 64 * 1024:
            raise SettingsError(
                "CTXPRESS_MAX_MESSAGE_BYTES must be at least 65536 (64 KiB): a dead letter "
                f"needs room for its reason and headers, got {self.max_message_bytes}"
            )
        if self.shutdown_timeout <= 0:
            raise SettingsError("CTXPRESS_SHUTDOWN_TIMEOUT must be a positive number of seconds")
        if self.table_recovery_stall_s <= 0:
            raise SettingsError(
                "CTXPRESS_TABLE_RECOVERY_STALL_S must be a positive number of seconds"
            )

    def topic(self, short_name: str) -> str:
        """Full Kafka topic name for a short name from topics/."""
        return f"{self.topic_prefix}{short_name}"


assert [(f.name, f.default) for f in fields(Settings)] == [(s.name, s.default) for s in SETTINGS], (
    "SETTINGS and Settings disagree"
)


def settings_help() -> str:
    """One line per setting: variable, default, help."""
    width = max(len(s.env) for s in SETTINGS)
    lines = ["settings (environment variables):"]
    for s in SETTINGS:
        default = s.default if s.default != "" else '""'
        lines.append(f"  {s.env:<{width}}  {s.help} (default: {default})")
    return "\n".join(lines)
