from __future__ import annotations

from workers.core.memo import TextMemo


def test_memo_returns_results_and_keeps_entries_and_characters_bounded() -> None:
    calls: list[str] = []

    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    memo = TextMemo(upper, entries=2, chars=100)
    assert memo("ab") == "AB" and memo("ab") == "AB"
    assert calls == ["ab"]
    memo("cd")
    memo("ef")  # evicts "ab" (two entries at most)
    assert len(memo) == 2
    memo("ab")
    assert calls == ["ab", "cd", "ef", "ab"]
    big = "x" * 60  # 120 characters with its result: computed, never kept
    assert memo(big) == big.upper() and memo(big) == big.upper()
    assert calls.count(big) == 2 and len(memo) == 2
    memo("y" * 49)  # 98 characters: both older entries go to stay under 100
    assert len(memo) == 1
    memo.cache_clear()
    assert len(memo) == 0


def test_clear_all_empties_every_memo_and_memo_takes_any_hashable_key() -> None:
    from workers.core.memo import clear_all, memo

    @memo(entries=4, chars=1000)
    def parts(key: tuple[str, int]) -> tuple[str, ...]:
        return tuple(key[0] * key[1])

    words = TextMemo(str.title, entries=4, chars=1000)
    assert parts(("ab", 2)) == ("a", "b", "a", "b") and words("hi there") == "Hi There"
    assert len(parts) == 1 and len(words) == 1
    assert clear_all() >= 2
    assert len(parts) == 0 and len(words) == 0
