"""The pipeline: one record in, one :class:`Outcome` out.  Pure and synchronous.

For each engine of the record's mode:

1. the engine returns one new text per unit (frozen units, and units whose
   input already contains marker-like literals, are kept as they were);
2. a changed unit that got more tokens is reverted (never-worse, per message);
3. the fidelity gate judges every other changed unit; a failing one is
   reverted for this engine only and becomes a :class:`Rejection`.  Before
   the engine's own check, text that newly reads as a marker the engine may
   not write is rejected (kind ``marker``), and a lossy change to a unit
   that a dedup back-reference points at (or that holds one to itself) must
   expand back exactly from what the store keeps (kind ``backref``);
4. an engine that raises is reverted as a whole and becomes a rejection with
   stage ``engine``.

Finally, if the whole record got more tokens, the input is returned
unchanged.  The same record and settings give the same output on any worker.
The ``compression`` object carries the record's marker manifest
(:class:`workers.markers.Manifest`: the stash keys and back-references its
engines wrote, and nothing else), which is all ``expand`` resolves; the JSON
tables' and json-min documents' layouts are moved there too, out of the visible headers, and
so are the escape sequences the ``ansi`` engine took out (a lossless engine hands such an
out-of-band layout over in ``details["_layouts"]``; the gate checks it with the engine's
``decode_with``).
Per-record failures are data (``Outcome.rejections``), never exceptions;
:class:`RecordError` is raised only for input that cannot be processed at all
(it goes to the dead letter as the record's one result).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from workers.core.catalog import MODES
from workers.core.errors import CtxpressError
from workers.core.offload import MemoryStore, stored_text
from workers.core.redact import (
    KnownSecrets,
    known_secrets,
    redact,
    redact_count,
    redact_known,
)
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter, TokenizerFailed
from workers.engines import Engine, EngineContext, UnknownEngine, resolve
from workers.fidelity.lossy import OFFLOAD_REF, Violation, check_lossy, referenced_stash
from workers.markers import (
    MANIFEST_KEY,
    Manifest,
    ansi,
    dup,
    has_marker,
    json_min,
    json_table,
    marker_of,
    structured_view,
    superseded,
    unwritten_markers,
)
from workers.markers import stash as stash_marker
from workers.messages import RESERVED_KEY, InvalidRecord, Record, Unit, apply_texts, parse_record
from workers.pipeline.expand import expanded_units

if TYPE_CHECKING:
    from workers.engines._filters import FilterSet

__all__ = ["EngineStats", "Outcome", "Pipeline", "RecordError", "Rejection"]

STATS_VERSION = 1


class RecordError(CtxpressError):
    """The record cannot be processed (bad shape, unknown mode, too large)."""

    def __init__(self, reason: str, record_id: str | None = None, stage: str = "validate") -> None:
        super().__init__(reason)
        self.reason = reason
        self.record_id = record_id
        self.stage = stage


@dataclass(slots=True)
class Rejection:
    """A message the gate (or a failing engine) reverted: dead-letter data."""

    record_id: str | None
    engine: str
    stage: str  # "gate" | "engine"
    message_index: int | None
    uid: str | None
    violations: list[Violation] = field(default_factory=list)
    before: str = ""
    after: str = ""
    error_class: str = ""
    error_message: str = ""
    # the record's secrets: its dead letter's before and after never show them either
    known: KnownSecrets | None = None

    def as_dict(self) -> dict[str, Any]:
        with known_secrets(self.known or ()):
            return self._as_dict()

    def _as_dict(self) -> dict[str, Any]:
        reason = (
            f"fidelity gate rejected {self.engine} on message {self.message_index}: "
            + ", ".join(sorted({v.kind for v in self.violations}))
            if self.stage == "gate"
            else f"engine {self.engine} raised {self.error_class}: {self.error_message}"
        )
        return {
            "record_id": self.record_id,
            "reason": reason,
            "stage": self.stage,
            "engine": self.engine,
            "message_index": self.message_index,
            "unit": self.uid,
            "violations": [v.as_dict() for v in self.violations],
            "before": redact_known(redact(self.before)),
            "after": redact_known(redact(self.after)),
            "error_class": self.error_class or "FidelityViolation",
            "error_message": self.error_message or reason,
        }


@dataclass(slots=True)
class EngineStats:
    engine: str
    status: str  # applied | unchanged | inflation | fidelity | error | disabled
    tokens_before: int
    tokens_after: int
    ms: float
    messages_changed: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "status": self.status,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "ms": round(self.ms, 3),
            "messages_changed": self.messages_changed,
            "details": self.details,
        }


@dataclass(slots=True)
class Outcome:
    """The compressed record (with its ``compression`` object), rejections, stash."""

    record: dict[str, Any]
    stats: dict[str, Any]
    engine_stats: list[EngineStats]
    rejections: list[Rejection]
    stash: dict[str, str]
    record_id: str | None
    mode: str


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


class Pipeline:
    """Runs records through the engines of their mode.  Build once, reuse."""

    def __init__(
        self,
        settings: Settings | None = None,
        tokens: TokenCounter | None = None,
        engines: Mapping[str, Sequence[Engine]] | None = None,
    ) -> None:
        """``engines`` overrides the chain of some modes (tests, custom chains)."""
        self.settings = settings or Settings()
        self.tokens = tokens or TokenCounter(
            self.settings.encoding, backend=self.settings.token_backend
        )
        self._engines: dict[str, list[Engine]] = {k: list(v) for k, v in (engines or {}).items()}
        # Fail at start-up for the default mode, with the list of valid names,
        # and for user filter files that do not load (bad regex, bad shape).
        self.engines_for(self.settings.mode)
        self._filters: FilterSet | None = None  # None: toolfilter uses the built-in set
        if self.settings.filters_dir or self.settings.trust_project_filters:
            from workers.engines._filters import load_filter_set

            self._filters = load_filter_set(
                self.settings.filters_dir, trust_project=self.settings.trust_project_filters
            )

    def engines_for(self, mode: str) -> list[Engine]:
        engines = self._engines.get(mode)
        if engines is None:
            names = MODES.get(mode)
            if names is None:
                raise UnknownEngine(
                    f"unknown mode {mode!r}; valid modes: {', '.join(MODES)}, auto (one of them "
                    "by the record's token count)"
                )
            engines = resolve(names)
            for engine in engines:
                if engine.lossless:
                    marker_of(engine.name)  # expand must be able to reverse it
            self._engines[mode] = engines
        return engines

    # -- entry points ------------------------------------------------------

    def run_raw(self, data: Any, mode: str | None = None) -> Outcome:
        """Validate a decoded JSON value and run it; raises :class:`RecordError`.

        ``mode`` overrides the record's own ``mode`` field (the worker's mode header).
        """
        try:
            record = parse_record(data)
        except InvalidRecord as exc:
            raise RecordError(exc.reason, exc.record_id) from exc
        if mode is not None:
            record.mode = mode
        return self.run(record)

    def run(self, record: Record) -> Outcome:
        try:
            # what the record's texts show as secrets stays out of its stashes, also where
            # a stashed span lost what made it recognisable (a JSON-table row's key names)
            known = KnownSecrets(tuple(u.text for u in record.units))
            with known_secrets(known):
                outcome = self._run(record)
                for rejection in outcome.rejections:
                    rejection.known = known
                for key, text in outcome.stash.items():
                    if (held := redact_known(stored_text(text))) != stored_text(text):
                        outcome.stash[key] = held  # what stash_key hashed
                return outcome
        except TokenizerFailed as exc:
            raise RecordError(str(exc), record.record_id, stage="tokenize") from exc

    def _redact_output(self, texts: list[str], tokens: int) -> tuple[list[str], int, int]:
        """``texts`` with their secrets redacted, how many, and the token total after."""
        out: list[str] = []
        found = 0
        for text in texts:
            redacted, n = redact_count(text)
            if n:
                found += n
                tokens += self.tokens.count(redacted) - self.tokens.count(text)
            out.append(redacted)
        return out, found, tokens

    def _take_layouts(
        self,
        units: Sequence[Unit],
        texts: list[str],
        counts: list[int],
        by_unit: dict[str, dict[str, str]],
        marker: _LayoutMarker,
    ) -> None:
        """Move the layouts of ``marker``'s headers (:mod:`~workers.markers.json_table`,
        :mod:`~workers.markers.json_min`) out of ``texts`` into ``by_unit`` (unit ->
        digest -> attributes, for the manifest), in place; ``counts`` follow."""
        for i, (unit, text) in enumerate(zip(units, texts, strict=True)):
            if text != unit.text and marker.OPEN in text:
                plain, layouts = marker.take_layouts(text)
                if layouts:
                    by_unit[unit.uid] = layouts
                    texts[i] = plain
                    counts[i] = self.tokens.count(plain)

    def _run(self, record: Record) -> Outcome:
        started = time.perf_counter()
        mode = record.mode or self.settings.mode
        try:
            engines = self.engines_for(mode)
        except UnknownEngine as exc:
            raise RecordError(str(exc), record.record_id, stage="validate") from exc
        units = record.units
        texts = [u.text for u in units]
        counts = [self.tokens.count(t) for t in texts]
        tokens_before = sum(counts)
        # text that already reads like one of our markers (a log quoting a stash marker, an
        # export of compressed chats) is compressed too, but kept only where expand gives
        # it back exactly (:meth:`_unforged`): expand never mistakes input for a marker
        marked = [not u.frozen and has_marker(u.text) for u in units]
        locked = [u.frozen for u in units]
        ctx = EngineContext(
            tokens=self.tokens,
            latest_user_text=record.latest_user_text(),
            budget_tokens=record.budget_tokens,
            allow_lossy_structure=(
                record.allow_lossy_structure
                if record.allow_lossy_structure is not None
                else self.settings.allow_lossy_structure
            ),
            filters=self._filters,
            input_texts=tuple(texts),
            lossless_chain=all(engine.lossless for engine in engines),
        )
        stash: dict[str, str] = {}
        written = _Written()
        tables: dict[str, dict[str, str]] = {}  # unit -> its JSON tables' layouts
        minified: dict[str, dict[str, str]] = {}  # unit -> its json-min documents' layouts
        all_stats: list[EngineStats] = []
        rejections: list[Rejection] = []
        disabled: frozenset[str] = record.extra.get("disable_engines", frozenset())
        for engine in engines:
            if engine.name in disabled:
                total = sum(counts)
                all_stats.append(EngineStats(engine.name, "disabled", total, total, 0.0))
                continue
            stats, texts, counts = self._run_engine(
                engine, record, units, texts, counts, locked, ctx, stash, rejections, written
            )
            if engine.name == "jsontable" and stats.status == "applied":
                # the layouts go out of band now: what later engines and the stats count
                # is the visible text
                self._take_layouts(units, texts, counts, tables, json_table)
                stats.tokens_after = sum(counts)
            elif engine.name == "jsonminify" and stats.status == "applied":
                self._take_layouts(units, texts, counts, minified, json_min)
                stats.tokens_after = sum(counts)
            all_stats.append(stats)
        if any(marked) and self._unforged(
            record, units, texts, counts, marked, stash, written, tables, minified
        ):
            # what the given-back units' markers pointed at goes too (the offload store
            # would keep it for nothing)
            kept: set[str] = set()
            for unit, text in zip(units, texts, strict=True):
                if text != unit.text:
                    _reachable(text, stash, kept)
            stash = {k: v for k, v in stash.items() if k in kept}
        tokens_after = sum(counts)
        if tokens_after > tokens_before:  # never-worse, whole record
            texts = [u.text for u in units]
            tokens_after = tokens_before
            stash = {}
        secrets = 0
        shown = texts
        if self.settings.redact_output:  # no credential in the output either
            texts, secrets, tokens_after = self._redact_output(texts, tokens_after)
        changes = {u.path: t for u, t in zip(units, texts, strict=True) if t != u.text}
        manifest = _manifest(units, texts, stash, written)
        if self.settings.redact_output and manifest.ansi:
            # nor in the escape sequences kept out of band (an OSC hyperlink's URL)
            manifest, found = _redact_ansi(manifest, units, shown, texts)
            secrets += found
        if self.settings.redact_output and manifest.align:
            # a placeholder is not as long as the secret it replaced: the widths' counts
            # would land elsewhere
            manifest = _unredacted_align(manifest, units, shown, texts)
        tables = {u.uid: tables[u.uid] for u in units if u.path in changes and u.uid in tables}
        if tables:
            manifest = replace(manifest, table=tables)
        minified = {
            u.uid: minified[u.uid] for u in units if u.path in changes and u.uid in minified
        }
        if minified:
            manifest = replace(manifest, minified=minified)
        out = apply_texts(record.data, changes) if changes else dict(record.data)
        chars_before = sum(len(u.text) for u in units)
        chars_after = sum(len(t) for t in texts)
        stats_obj: dict[str, Any] = {
            "version": STATS_VERSION,
            "mode": mode,
            "encoding": self.tokens.encoding_name,
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
            "saved_pct": round(100.0 * (tokens_before - tokens_after) / tokens_before, 2)
            if tokens_before
            else 0.0,
            "chars_before": chars_before,
            "chars_after": chars_after,
            "duration_ms": round(_ms(started), 3),
            "engines_applied": [s.engine for s in all_stats if s.status == "applied"],
            "engines": [s.as_dict() for s in all_stats],
            # the units an engine changed: expand decodes them; a unit whose only change is
            # a redacted secret holds no marker of ours (a forged one in it stays text)
            "changed": [u.uid for u, t in zip(units, shown, strict=True) if t != u.text],
            **({MANIFEST_KEY: manifest.as_json()} if manifest else {}),
            "rejections": len(rejections),
        }
        if self.settings.redact_output:
            stats_obj["secrets_redacted"] = secrets
        out[RESERVED_KEY] = stats_obj
        return Outcome(
            record=out,
            stats=stats_obj,
            engine_stats=all_stats,
            rejections=rejections,
            stash=stash,
            record_id=record.record_id,
            mode=mode,
        )

    def _unforged(
        self,
        record: Record,
        units: Sequence[Unit],
        texts: list[str],
        counts: list[int],
        marked: Sequence[bool],
        stash: Mapping[str, str],
        written: _Written,
        tables: Mapping[str, Mapping[str, str]],
        minified: Mapping[str, Mapping[str, str]],
    ) -> int:
        """Give back, in place, the input text of every changed unit whose input held
        marker-like text and that expand (with the record's manifest and its stash as the
        store keeps it) would not give back exactly: a forged ``<<cx:KEY>>`` whose key the
        record wrote, a forged ``[[prefix:v1 ...]]`` block, anything a decoder would read.
        Repeats until every such unit expands exactly (a unit given back can change what
        another one's back-references restore).  Returns how many units were given back."""
        store = MemoryStore()
        store.put_many({k: redact_known(stored_text(v)) for k, v in stash.items()})
        given_back = 0
        for _ in range(len(units)):
            suspects = [i for i, m in enumerate(marked) if m and texts[i] != units[i].text]
            if not suspects:
                return given_back
            changed = [u for u, t in zip(units, texts, strict=True) if t != u.text]
            manifest = replace(
                _manifest(units, texts, stash, written),
                table={u.uid: tables[u.uid] for u in changed if u.uid in tables},
                minified={u.uid: minified[u.uid] for u in changed if u.uid in minified},
            )
            data = apply_texts(
                record.data, {u.path: t for u, t in zip(units, texts, strict=True) if t != u.text}
            )
            data[RESERVED_KEY] = {
                "changed": [u.uid for u in changed],
                **({MANIFEST_KEY: manifest.as_json()} if manifest else {}),
            }
            try:
                restored = expanded_units(data, store)
            except CtxpressError:
                restored = {}
            wrong = [i for i in suspects if restored.get(units[i].uid) != units[i].text]
            if not wrong:
                return given_back
            for i in wrong:
                texts[i] = units[i].text
                counts[i] = self.tokens.count(units[i].text)
            given_back += len(wrong)
        return given_back

    # -- one engine ----------------------------------------------------------

    def _run_engine(
        self,
        engine: Engine,
        record: Record,
        original_units: Sequence[Unit],
        texts: list[str],
        counts: list[int],
        locked: list[bool],
        ctx: EngineContext,
        stash: dict[str, str],
        rejections: list[Rejection],
        written: _Written | None = None,
    ) -> tuple[EngineStats, list[str], list[int]]:
        started = time.perf_counter()
        before_total = sum(counts)
        current = [
            u if u.text == t else _with_text(u, t)
            for u, t in zip(original_units, texts, strict=True)
        ]
        try:
            output = engine.apply(current, ctx)
            if len(output.texts) != len(current):
                raise RuntimeError(
                    f"engine returned {len(output.texts)} texts for {len(current)} units"
                )
        except Exception as exc:  # an engine bug must not lose the record
            rejections.append(
                Rejection(
                    record_id=record.record_id,
                    engine=engine.name,
                    stage="engine",
                    message_index=None,
                    uid=None,
                    error_class=type(exc).__name__,
                    error_message=str(exc)[:500],
                )
            )
            return (
                EngineStats(
                    engine.name,
                    "error",
                    before_total,
                    before_total,
                    _ms(started),
                    details={"error": f"{type(exc).__name__}: {str(exc)[:200]}"},
                ),
                texts,
                counts,
            )
        new_texts = list(texts)
        new_counts = list(counts)
        # what the decode check of a lossless engine resolves back-references
        # against, and the stash a lossy engine's markers may point into
        originals: Mapping[str, str] = {u.uid: u.text for u in current} if engine.lossless else {}
        stashes = {**stash, **output.stash} if output.stash else stash
        changed = inflated = rejected = 0
        backref_texts = output.details.pop("_backrefs", {}) if output.details else {}
        # unit index -> the out-of-band layout a lossless engine wrote for it (ansi)
        layouts = output.details.pop("_layouts", {}) if output.details else {}
        # units a dedup back-reference points at: a lossy engine may change them only
        # in a way expand undoes exactly, or the reference would copy the wrong text
        pointed = _pointed_at(current, locked, stash) if not engine.lossless else None
        for i, unit in enumerate(current):
            after = output.texts[i]
            if after == unit.text or locked[i]:
                continue
            after_count = self.tokens.count(after)
            if after_count > counts[i] or (
                after_count == counts[i] and len(after) >= len(unit.text)
            ):
                inflated += 1
                continue
            forged = unwritten_markers(unit.text, after, engine.name, engine.lossless, output.stash)
            if forged:
                violations = [
                    Violation("marker", f"{token} (not written by {engine.name})")
                    for token in forged[:MAX_MARKER_VIOLATIONS]
                ]
            elif (
                pointed is not None
                and _is_pointed(unit, pointed)
                and not _undone(unit.text, after, output.stash)
            ):
                violations = [Violation("backref", "a dedup back-reference points at this text")]
            elif engine.lossless:
                violations = _check_decode(engine, unit.text, after, originals, layouts.get(i))
            else:
                refs = [new_texts[j] for j in backref_texts.get(i, ())]
                violations = check_lossy(
                    unit.text,
                    after,
                    unit.kind,
                    stashes,
                    refs,
                    unit.command,
                    whitespace_edits=engine.whitespace_edits,
                )
            if violations:
                rejected += 1
                rejections.append(
                    Rejection(
                        record_id=record.record_id,
                        engine=engine.name,
                        stage="gate",
                        message_index=unit.index,
                        uid=unit.uid,
                        violations=violations,
                        before=unit.text,
                        after=after,
                    )
                )
                continue
            new_texts[i] = after
            new_counts[i] = after_count
            changed += 1
            if written is not None:
                written.add(i, engine.name, unit.text, after)
                if i in layouts:
                    written.layouts.setdefault(engine.name, {})[i] = layouts[i]
        if changed and output.stash:
            # Keep the stash entries that an accepted text (or another entry) points at.
            referenced = set(OFFLOAD_REF.findall("\n".join(new_texts)))
            for value in output.stash.values():
                referenced.update(OFFLOAD_REF.findall(value))
            for key, value in output.stash.items():
                if key in referenced:
                    stash[key] = value
        status = (
            "applied"
            if changed
            else "fidelity"
            if rejected
            else "inflation"
            if inflated
            else "unchanged"
        )
        details = dict(output.details)
        if rejected:
            details["messages_rejected"] = rejected
        if inflated:
            details["messages_inflated"] = inflated
        return (
            EngineStats(
                engine.name, status, before_total, sum(new_counts), _ms(started), changed, details
            ),
            new_texts,
            new_counts,
        )


def _with_text(unit: Unit, text: str) -> Unit:
    return replace(unit, text=text)


MAX_MARKER_VIOLATIONS = 5


class _LayoutMarker(Protocol):
    """A marker module whose headers' layouts go out of band (json_table, json_min)."""

    OPEN: str

    def take_layouts(self, text: str) -> tuple[str, dict[str, str]]: ...


class _Written:
    """Per unit, the back-references its accepted engines wrote (dedup, read-lifecycle)."""

    __slots__ = ("dup", "layouts", "newer")

    def __init__(self) -> None:
        self.dup: dict[int, set[str]] = {}
        self.newer: dict[int, set[int]] = {}
        # engine (ansi, align) -> unit index -> the out-of-band entry it wrote
        self.layouts: dict[str, dict[int, str]] = {}

    def add(self, i: int, engine: str, before: str, after: str) -> None:
        if engine == "dedup" and dup.LITERAL in after:
            new = set(dup.refs(after)) - set(dup.refs(before))
            if new:
                self.dup.setdefault(i, set()).update(new)
        elif engine == "read-lifecycle" and superseded.LITERAL in after:
            found = set(_newer_copies(after)) - set(_newer_copies(before))
            if found:
                self.newer.setdefault(i, set()).update(found)


def _newer_copies(text: str) -> list[int]:
    if superseded.LITERAL not in text:
        return []
    return [int(m) for m in superseded.NEWER_COPY_NOTE.findall(text)]


def _manifest(
    units: Sequence[Unit], texts: Sequence[str], stash: Mapping[str, str], written: _Written
) -> Manifest:
    """What the record's pipeline wrote and its output still points at: keys only."""
    keys: set[str] = set()
    dups: dict[str, frozenset[str]] = {}
    newer: dict[str, frozenset[int]] = {}
    for i, (unit, text) in enumerate(zip(units, texts, strict=True)):
        if text == unit.text:
            continue
        reachable = _reachable(text, stash, keys)
        if i in written.dup:
            refs = {r for t in reachable for r in dup.refs(t)} & written.dup[i]
            if refs:
                dups[unit.uid] = frozenset(refs)
        if i in written.newer:
            found = {n for t in reachable for n in _newer_copies(t)} & written.newer[i]
            if found:
                newer[unit.uid] = frozenset(found)
    entries = {
        engine: {units[i].uid: e for i, e in by_unit.items() if texts[i] != units[i].text}
        for engine, by_unit in written.layouts.items()
    }
    return Manifest(
        frozenset(keys),
        dups,
        newer,
        ansi=entries.get("ansi", {}),
        align=entries.get("align", {}),
    )


def _redact_ansi(
    manifest: Manifest, units: Sequence[Unit], shown: list[str], texts: list[str]
) -> tuple[Manifest, int]:
    """``manifest`` with the secrets of its ``ansi`` entries redacted, and how many.

    A unit whose visible text lost a secret loses its entry: the entry counts the
    characters the placeholder replaced, so its colours would land elsewhere.  So does
    an entry that no longer parses once redacted.
    """
    runs: dict[str, str] = {}
    found = 0
    redacted_units = {u.uid for u, a, b in zip(units, shown, texts, strict=True) if a != b}
    for uid, value in manifest.ansi.items():
        held, n = redact_count(value)
        found += n
        if uid not in redacted_units and (not n or ansi.parse(held) is not None):
            runs[uid] = held
    return replace(manifest, ansi=runs), found


def _unredacted_align(
    manifest: Manifest, units: Sequence[Unit], shown: list[str], texts: list[str]
) -> Manifest:
    """``manifest`` without the ``align`` entries of units whose visible text lost a secret."""
    redacted_units = {u.uid for u, a, b in zip(units, shown, texts, strict=True) if a != b}
    kept = {uid: e for uid, e in manifest.align.items() if uid not in redacted_units}
    return replace(manifest, align=kept)


def _reachable(text: str, stash: Mapping[str, str], keys: set[str]) -> list[str]:
    """``text`` and every stashed text it points at, directly or through other stashes;
    the keys met are added to ``keys``."""
    if stash_marker.LITERAL not in text:
        return [text]
    return [text, *referenced_stash(text, stash, keys)]


def _pointed_at(
    units: Sequence[Unit], locked: Sequence[bool], stash: Mapping[str, str]
) -> set[str]:
    """Uids that dedup back-references of (unlocked) units point at, also from inside the
    stashes a unit's text points at; ``self`` counts as the unit itself."""
    hidden = [k for k, v in stash.items() if dup.LITERAL in v]
    found: set[str] = set()
    for unit, lock in zip(units, locked, strict=True):
        if lock:
            continue
        texts = _reachable(unit.text, stash, set()) if hidden else [unit.text]
        for text in texts:
            for ref in dup.refs(text):
                src = ref.split(":", 1)[0]
                found.add(unit.uid if src == "self" else src)
    return found


def _is_pointed(unit: Unit, pointed: set[str]) -> bool:
    return unit.uid in pointed


def _undone(before: str, after: str, own: Mapping[str, str]) -> bool:
    """Whether expanding ``after``'s own stash markers, from what the store keeps, gives ``before``."""
    if not own or stash_marker.LITERAL not in after:
        return False
    store = MemoryStore()
    store.put_many({k: stored_text(v) for k, v in own.items()})
    try:
        restored = stash_marker.expand_offload(after, store, [], keys=own)
    except ValueError:
        return False
    if (
        restored != before
        and structured_view.LITERAL in restored
        and structured_view.LITERAL not in before
    ):
        # this engine wrote the view (an earlier engine's view in ``before`` stays as it is)
        restored = structured_view.decode(restored)
    if restored == before:
        return True
    # the same text stashed twice has one key: an earlier engine's marker in ``before``
    # may carry a key of this engine's stash, and expands above too
    if not any(f"{stash_marker.LITERAL}{key}>>" in before for key in own):
        return False
    try:
        base = stash_marker.expand_offload(before, store, [], keys=own)
    except ValueError:
        return False
    return restored == base


def _check_decode(
    engine: Engine,
    before: str,
    after: str,
    originals: Mapping[str, str],
    layout: str | None = None,
) -> list[Violation]:
    decode = getattr(engine, "decode", None)
    decode_with = getattr(engine, "decode_with", None)
    if decode is None or (layout is not None and decode_with is None):
        return [Violation("lossless", "engine has no decoder")]
    try:
        if layout is None:
            restored = decode(after, originals)
        else:
            assert decode_with is not None
            restored = decode_with(after, layout)
    except Exception as exc:
        return [Violation("lossless", f"decoder raised {type(exc).__name__}: {exc}")]
    if restored != before:
        at = next(
            (k for k, (a, b) in enumerate(zip(restored, before, strict=False)) if a != b),
            min(len(restored), len(before)),
        )
        return [
            Violation("lossless", f"decoded text differs at char {at}: {before[at : at + 60]!r}")
        ]
    return []
