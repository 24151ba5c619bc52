"""Pipelines as configuration: named engine chains ("combos") and who uses which.

A combos file (TOML, under version control; ``CTXPRESS_COMBOS_FILE``,
``ctxpress compress --combos``) names chains of engines with their options and
says which input topic or tenant uses which::

    [combos.tools-light]
    description = "tool outputs: lossless plus the command-aware filter"
    engines = ["dedup", "jsontable", "jsonminify", "toolfilter"]

    [combos.chat-tight]
    engines = ["dedup", "relevance", "budget"]
    options.relevance = { keep_turns = 4 }
    options.budget = { budget_tokens = 4000 }

    [select]
    tenant_header = "tenant"          # the Kafka header that names the tenant
    tenant_field = "metadata.tenant"  # or a record field (dotted path)
    topics = { tool-outputs = "tools-light" }
    tenants = { acme = "chat-tight", beta = "auto" }

Engines run in the catalog's order (the order of the modes: dedup before the
JSON engines, filters before the crushers, ...), so ``expand`` decodes every
combo's markers; options are the engine's constructor arguments of scalar type.
Everything is checked when the file loads (unknown combos, engines, options,
types, order), and the error names the valid choices.

Per record, the first of these that is present decides (its name is the
``source`` in the record's ``compression.route``):

1. header ``ctxpress.combo``, then header ``ctxpress.mode`` (``header``);
2. record field ``combo``, then field ``mode`` (``record field``);
3. the tenant (header or field of ``[select]``) in ``select.tenants`` (``tenant``);
4. the input topic in ``select.topics`` (``topic``; in the batch CLI the topic
   ``ctxpress produce`` would send the record to: ``tool-outputs`` for tool
   outputs, else ``transcripts``);
5. ``CTXPRESS_COMBO`` (``--combo``), else ``CTXPRESS_MODE`` (``default``).

A ``select`` value names a combo or a mode, ``auto`` included; with ``auto`` the
record's token count picks the mode (:mod:`workers.pipeline.autotrigger`; the
source is then ``threshold`` and ``requested_by`` says who asked for auto).

A record that plainly gets a mode from its header, its field or the default
has no ``route`` in its ``compression`` object: its output is what it was
before combos existed.  Otherwise ``compression.route`` holds the decision and
``compression.combo`` the chain; its ``mode`` is the smallest built-in mode
that holds every engine of the combo (the promise it keeps).
"""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workers.core.catalog import ENGINES, LOSSLESS, MODES, STANDARD
from workers.core.settings import Settings, SettingsError
from workers.core.tokens import TokenCounter, TokenizerFailed
from workers.engines import Engine, engine_class
from workers.markers import marker_of
from workers.messages import InvalidRecord, Record, parse_record
from workers.pipeline.autotrigger import AUTO, Thresholds
from workers.pipeline.runner import Outcome, Pipeline, RecordError

__all__ = [
    "COMBO_HEADER",
    "MODE_HEADER",
    "Combo",
    "ComboTable",
    "RoutedPipeline",
    "load_combos",
    "parse_combos",
    "route_fields",
    "run_routed",
]

COMBO_HEADER = "ctxpress.combo"
MODE_HEADER = "ctxpress.mode"  # the same name as workers.service.records.MODE_HEADER
_KEY = "combo:"  # prefix of a combo's chain in the pipeline's chain table
_SCALARS = {"str": str, "int": int, "float": float, "bool": bool}
#: the canonical engine order: every mode's chain is a subsequence of it
_ORDER = {name: i for i, name in enumerate(ENGINES)}


@dataclass(frozen=True, slots=True)
class Combo:
    name: str
    engines: tuple[str, ...]
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    description: str = ""

    @property
    def mode(self) -> str:
        """The smallest built-in mode whose chain holds every engine of the combo."""
        names = set(self.engines)
        if not names:
            return "off"
        # (align ends lossless mode only, but a combo may end any chain with it; whitespace
        # is in no built-in chain since its trailing-blank normalisation is not stashed: a
        # combo may run it, and keeps standard's promise up to those blanks)
        for mode, chain in (
            ("lossless", LOSSLESS),
            ("standard", (*STANDARD, "align", "whitespace")),
        ):
            if names <= set(chain):
                return mode
        return "aggressive"

    def build(self) -> list[Engine]:
        """Engine instances, options applied (checked at load)."""
        engines = [engine_class(name)(**self.options.get(name, {})) for name in self.engines]
        for engine in engines:
            if engine.lossless:
                marker_of(engine.name)  # expand must be able to reverse it
        return engines


@dataclass(frozen=True, slots=True)
class ComboTable:
    combos: Mapping[str, Combo] = field(default_factory=dict)
    topics: Mapping[str, str] = field(default_factory=dict)  # topic -> combo or mode
    tenants: Mapping[str, str] = field(default_factory=dict)  # tenant -> combo or mode
    tenant_header: str = ""
    tenant_field: str = ""
    source: str = ""  # the file it came from

    def valid(self) -> str:
        return ", ".join(self.combos) or "(none: no combos file loaded)"

    def check_choice(self, name: str, where: str) -> None:
        if name not in self.combos and name not in MODES and name != AUTO:
            raise SettingsError(
                f"{where}: unknown combo or mode {name!r}; valid combos: {self.valid()}; "
                f"valid modes: {', '.join(MODES)}, {AUTO}"
            )


# -- loading -------------------------------------------------------------------


def engine_options(name: str) -> dict[str, type]:
    """The options an engine takes: its constructor's arguments of scalar type."""
    init = engine_class(name).__init__
    if init is object.__init__:
        return {}
    options: dict[str, type] = {}
    for param in list(inspect.signature(init).parameters.values())[1:]:
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            continue
        annotation = param.annotation
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        atoms = [a.strip() for a in str(text).split("|")]
        types = [a for a in atoms if a != "None"]
        if len(types) == 1 and types[0] in _SCALARS:
            options[param.name] = _SCALARS[types[0]]
    return options


def _check_option(where: str, engine: str, key: str, value: Any, kind: type) -> None:
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise SettingsError(
            f"{where}: option {key!r} of engine {engine!r} must be a {kind.__name__}, got {value!r}"
        )
    if key == "language":
        from workers.engines._prose import LANG_DIR, language_pack

        try:
            language_pack(value)
        except (ValueError, OSError):
            langs = ", ".join(sorted(p.stem for p in LANG_DIR.glob("*.json")))
            raise SettingsError(
                f"{where}: engine {engine!r} has no language pack {value!r}; valid: {langs}"
            ) from None


def _strings(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise SettingsError(f'{where} must be a table of names ("key" = "combo or mode")')
    return {str(k): v for k, v in value.items()}


def _combo(where: str, name: str, body: Any) -> Combo:
    if not isinstance(body, dict):
        raise SettingsError(f"{where}: a combo is a table with an 'engines' list")
    unknown = sorted(set(body) - {"engines", "options", "description"})
    if unknown:
        raise SettingsError(
            f"{where}: unknown key {unknown[0]!r}; valid keys: engines, options, description"
        )
    if name in MODES or name == AUTO:
        raise SettingsError(f"{where}: {name!r} is a mode; give the combo another name")
    engines = body.get("engines")
    if not isinstance(engines, list) or not all(isinstance(e, str) for e in engines):
        raise SettingsError(f"{where}.engines must be a list of engine names")
    for engine in engines:
        if engine not in ENGINES:
            raise SettingsError(
                f"{where}.engines: unknown engine {engine!r}; valid engines: {', '.join(ENGINES)}"
            )
    if len(set(engines)) != len(engines):
        raise SettingsError(f"{where}.engines: an engine is listed twice")
    order = sorted(engines, key=_ORDER.__getitem__)
    if engines != order:
        raise SettingsError(
            f"{where}.engines: engines run in the catalog's order (so expand decodes their "
            f"markers); write {order}"
        )
    options = body.get("options", {})
    if not isinstance(options, dict):
        raise SettingsError(f"{where}.options must be a table of engine tables")
    checked: dict[str, dict[str, Any]] = {}
    for engine, opts in options.items():
        if engine not in engines:
            raise SettingsError(
                f"{where}.options: {engine!r} is not an engine of this combo; its engines: "
                f"{', '.join(engines)}"
            )
        if not isinstance(opts, dict):
            raise SettingsError(f"{where}.options.{engine} must be a table of options")
        valid = engine_options(engine)
        for key, value in opts.items():
            if key not in valid:
                raise SettingsError(
                    f"{where}.options.{engine}: unknown option {key!r}; valid options: "
                    f"{', '.join(valid) or '(none: this engine takes no options)'}"
                )
            _check_option(f"{where}.options.{engine}", engine, key, value, valid[key])
        checked[engine] = dict(opts)
    description = body.get("description", "")
    if not isinstance(description, str):
        raise SettingsError(f"{where}.description must be a string")
    return Combo(name, tuple(engines), checked, description)


def parse_combos(data: Mapping[str, Any], source: str = "combos") -> ComboTable:
    """A :class:`ComboTable` from a decoded TOML document; raises :class:`SettingsError`."""
    unknown = sorted(set(data) - {"combos", "select"})
    if unknown:
        raise SettingsError(f"{source}: unknown table {unknown[0]!r}; valid tables: combos, select")
    raw = data.get("combos", {})
    if not isinstance(raw, dict):
        raise SettingsError(f"{source}: 'combos' must be a table of combos")
    combos = {name: _combo(f"{source}: combos.{name}", name, body) for name, body in raw.items()}
    select = data.get("select", {})
    if not isinstance(select, dict):
        raise SettingsError(f"{source}: 'select' must be a table")
    bad = sorted(set(select) - {"topics", "tenants", "tenant_header", "tenant_field"})
    if bad:
        raise SettingsError(
            f"{source}: select: unknown key {bad[0]!r}; valid keys: topics, tenants, "
            "tenant_header, tenant_field"
        )
    topics = _strings(f"{source}: select.topics", select.get("topics", {}))
    tenants = _strings(f"{source}: select.tenants", select.get("tenants", {}))
    header, fld = select.get("tenant_header", ""), select.get("tenant_field", "")
    if not isinstance(header, str) or not isinstance(fld, str):
        raise SettingsError(f"{source}: select.tenant_header and tenant_field must be strings")
    if tenants and not (header or fld):
        raise SettingsError(
            f"{source}: select.tenants needs select.tenant_header or select.tenant_field "
            "(where the tenant is read from)"
        )
    table = ComboTable(combos, topics, tenants, header, fld, source)
    for key, name in topics.items():
        table.check_choice(name, f"{source}: select.topics.{key}")
    for key, name in tenants.items():
        table.check_choice(name, f"{source}: select.tenants.{key}")
    return table


def load_combos(path: str | Path) -> ComboTable:
    """Read and check a combos file; every problem is a :class:`SettingsError` naming it."""
    name = str(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise SettingsError(f"combos file {name!r} does not exist") from None
    except IsADirectoryError:
        raise SettingsError(f"combos file {name!r} is a directory, not a TOML file") from None
    except OSError as exc:
        raise SettingsError(f"combos file {name!r}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"combos file {name!r} is not valid TOML: {exc}") from None
    return parse_combos(data, name)


# -- routing -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Choice:
    name: str  # a combo or a mode (auto included)
    source: str
    extra: Mapping[str, Any] = field(default_factory=dict)


def _last_header(headers: Iterable[tuple[str, bytes]], name: str) -> str | None:
    found = None
    for key, value in headers:
        if key == name:
            found = value.decode("utf-8", "replace").strip()
    return found or None


def _dotted(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


class RoutedPipeline(Pipeline):
    """A :class:`Pipeline` that also runs combos and the ``auto`` mode (see the module doc)."""

    def __init__(
        self,
        settings: Settings | None = None,
        tokens: TokenCounter | None = None,
        engines: Mapping[str, Sequence[Engine]] | None = None,
        combos: ComboTable | None = None,
    ) -> None:
        settings = settings or Settings()
        if combos is None:
            combos = load_combos(settings.combos_file) if settings.combos_file else ComboTable()
        if settings.combo and settings.combo not in combos.combos:
            raise SettingsError(
                f"CTXPRESS_COMBO={settings.combo!r} is not a combo of {combos.source}; "
                f"valid combos: {combos.valid()}"
            )
        self.combos = combos
        self.thresholds = Thresholds.from_settings(settings)
        chains: dict[str, Sequence[Engine]] = {
            _KEY + name: combo.build() for name, combo in combos.combos.items()
        }
        chains.update(engines or {})
        super().__init__(settings, tokens, chains)

    def engines_for(self, mode: str) -> list[Engine]:
        if mode == AUTO:  # no chain of its own: build every mode it may pick, now
            for name in MODES:
                super().engines_for(name)
            return []
        return super().engines_for(mode)

    def run_raw(
        self,
        data: Any,
        mode: str | None = None,
        *,
        headers: Sequence[tuple[str, bytes]] = (),
        topic: str | None = None,
    ) -> Outcome:
        """``mode``: the ``ctxpress.mode`` header's mode; ``headers``: all of them."""
        try:
            record = parse_record(data)
        except InvalidRecord as exc:
            raise RecordError(exc.reason, exc.record_id) from exc
        return self._routed(record, mode, headers, topic)

    def run(self, record: Record) -> Outcome:
        return self._routed(record, None, (), None)

    def _choice(
        self,
        record: Record,
        header_mode: str | None,
        headers: Sequence[tuple[str, bytes]],
        topic: str | None,
    ) -> _Choice:
        combo = _last_header(headers, COMBO_HEADER)
        if combo is not None:
            return _Choice(self._combo_name(combo, "header " + COMBO_HEADER, record), "header")
        if header_mode:
            return _Choice(header_mode, "header")
        field_combo = record.data.get("combo")
        if field_combo is not None:
            if not isinstance(field_combo, str):
                raise RecordError("field 'combo' must be a string", record.record_id)
            return _Choice(self._combo_name(field_combo, "field 'combo'", record), "record field")
        if record.mode:
            return _Choice(record.mode, "record field")
        table = self.combos
        tenant = None
        if table.tenant_header:
            tenant = _last_header(headers, table.tenant_header)
        if tenant is None and table.tenant_field:
            value = _dotted(record.data, table.tenant_field)
            tenant = value if isinstance(value, str) and value else None
        if tenant is not None and tenant in table.tenants:
            return _Choice(table.tenants[tenant], "tenant", {"tenant": tenant})
        if table.topics:
            if topic is None:  # the batch CLI: the topic `ctxpress produce` would send it to
                topic = "tool-outputs" if record.format == "tool_output" else "transcripts"
            prefix = self.settings.topic_prefix
            short = topic.removeprefix(prefix) if prefix else topic
            for name in (topic, short):
                if name in table.topics:
                    return _Choice(table.topics[name], "topic", {"topic": short})
        return _Choice(self.settings.combo or self.settings.mode, "default")

    def _combo_name(self, name: str, where: str, record: Record) -> str:
        if name not in self.combos.combos:
            raise RecordError(
                f"{where}: unknown combo {name!r}; valid combos: {self.combos.valid()}",
                record.record_id,
            )
        return name

    def _routed(
        self,
        record: Record,
        header_mode: str | None,
        headers: Sequence[tuple[str, bytes]],
        topic: str | None,
    ) -> Outcome:
        choice = self._choice(record, header_mode, headers, topic)
        route: dict[str, Any] = {"source": choice.source, **choice.extra}
        combo = self.combos.combos.get(choice.name)
        if combo is not None:
            record.mode = _KEY + combo.name
            outcome = Pipeline.run(self, record)
            outcome.mode = combo.mode
            outcome.stats["mode"] = combo.mode
            outcome.stats["combo"] = combo.name
            outcome.stats["route"] = {**route, "combo": combo.name}
            return outcome
        if choice.name == AUTO:
            try:  # the runner counts the same texts again, from its cache
                tokens = sum(self.tokens.count(u.text) for u in record.units)
            except TokenizerFailed as exc:
                raise RecordError(str(exc), record.record_id, stage="tokenize") from exc
            decision = self.thresholds.decide(tokens)
            record.mode = decision.mode
            outcome = Pipeline.run(self, record)
            outcome.stats["route"] = {
                "source": "threshold",
                "mode": decision.mode,
                "requested_by": choice.source,
                **choice.extra,
                "tokens": tokens,
                "rule": decision.rule,
            }
            return outcome
        record.mode = choice.name
        outcome = Pipeline.run(self, record)
        if choice.source in ("tenant", "topic"):  # configuration chose: say so
            outcome.stats["route"] = {**route, "mode": choice.name}
        return outcome


def run_routed(
    pipeline: Pipeline,
    data: Any,
    header_mode: str | None,
    headers: Sequence[tuple[str, bytes]],
    topic: str | None,
) -> Outcome:
    """The worker's call: routes by headers and topic when the pipeline can."""
    if isinstance(pipeline, RoutedPipeline):
        return pipeline.run_raw(data, header_mode, headers=headers, topic=topic)
    return pipeline.run_raw(data, mode=header_mode)


def route_fields(stats: Mapping[str, Any]) -> dict[str, Any]:
    """What a stats record adds to name the chain and the decision (empty: a plain mode)."""
    out: dict[str, Any] = {}
    if "combo" in stats:
        out["combo"] = stats["combo"]
    if "route" in stats:
        out["route"] = stats["route"]
    return out
