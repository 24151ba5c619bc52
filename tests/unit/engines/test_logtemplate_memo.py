"""logtemplate's runs are memoised per (text, command): the same folds, memo or not."""

from __future__ import annotations

import re

from tests.unit.engines.test_logtemplate import generated_logs
from workers.core.memo import clear_all
from workers.core.redact import known_secrets
from workers.core.tokens import TokenCounter
from workers.engines import logtemplate


def _folds(tokens: TokenCounter) -> dict[str, tuple[str, dict[str, str], int, int] | None]:
    out: dict[str, tuple[str, dict[str, str], int, int] | None] = {}
    for name, (command, text) in generated_logs().items():
        result = logtemplate.fold_log(text, tokens, command)
        out[name] = (
            None
            if result is None
            else (result.text, result.stash, result.runs, result.lines_folded)
        )
    return out


def test_a_memoised_fold_is_the_fold_computed_afresh() -> None:
    tokens = TokenCounter()
    clear_all()
    fresh = _folds(tokens)
    assert sum(v is not None for v in fresh.values()) >= 4  # the logs do fold
    assert len(logtemplate._runs_of) == len(fresh)
    assert _folds(tokens) == fresh  # from the memo
    clear_all()
    assert len(logtemplate._runs_of) == 0
    assert _folds(tokens) == fresh


def test_stash_keys_follow_the_records_secrets_not_the_memo() -> None:
    # the runs come from the memo; the stash key still redacts this record's secrets
    command, text = next(iter(generated_logs().values()))
    tokens = TokenCounter()
    clear_all()
    plain = logtemplate.fold_log(text, tokens, command)
    assert plain is not None
    stashed = next(iter(plain.stash.values()))
    word = next(m.group() for m in re.finditer(r"\b[A-Za-z0-9]{6,}\b", stashed))
    with known_secrets([(word, "kv_secret")]):
        keyed = logtemplate.fold_log(text, tokens, command)
    assert keyed is not None
    assert keyed.text != plain.text  # another key in the marker
    assert set(keyed.stash) != set(plain.stash)
    assert sorted(keyed.stash.values()) == sorted(plain.stash.values())
