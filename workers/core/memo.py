"""One bounded memo for pure functions of texts, and one way to empty them all.

``functools.lru_cache`` bounds entries, not bytes: sixteen 16 MB records would
pin half a gigabyte.  :class:`TextMemo` keeps at most ``entries`` results and
at most ``chars`` characters of keys plus values (``size`` says how many a
key or value counts for), oldest out first; a result larger than the budget is
computed and not kept.  Every memo registers itself: :func:`clear_all` empties
every content cache at once (benchmarks do, before each timed pass, so that
a pass pays for every text like a worker meeting new traffic).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Memo", "TextMemo", "clear_all", "memo", "register", "text_memo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Clearable(Protocol):
    def cache_clear(self) -> None: ...


_REGISTRY: weakref.WeakSet[Any] = weakref.WeakSet()


def _chars(value: Any) -> int:
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, tuple | frozenset | list):
        return sum(_chars(v) for v in value) + 1
    return 1


class Memo(Generic[K, V]):
    """A bounded memo of ``fn`` (entries and characters), registered for :func:`clear_all`."""

    def __init__(
        self,
        fn: Callable[[K], V],
        entries: int,
        chars: int,
        size: Callable[[Any], int] = _chars,
    ) -> None:
        self.fn = fn
        self.entries = entries
        self.chars = chars
        self._size_of = size
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._size = 0
        self.__doc__ = fn.__doc__
        self.__name__ = getattr(fn, "__name__", "memo")
        _REGISTRY.add(self)

    def __call__(self, key: K) -> V:
        hit = self._data.get(key)
        if hit is not None:
            self._data.move_to_end(key)
            return hit[0]
        value = self.fn(key)
        size = self._size_of(key) + (self._size_of(value) if value is not key else 0)
        if size <= self.chars:
            self._data[key] = (value, size)
            self._size += size
            while len(self._data) > self.entries or self._size > self.chars:
                _, (_, old) = self._data.popitem(last=False)
                self._size -= old
        return value

    def __len__(self) -> int:
        return len(self._data)

    def cache_clear(self) -> None:
        self._data.clear()
        self._size = 0


class TextMemo(Memo[str, str]):
    """A :class:`Memo` of a ``str -> str`` function."""


def memo(entries: int = 1024, chars: int = 4_000_000) -> Callable[[Callable[[K], V]], Memo[K, V]]:
    """Decorator form of :class:`Memo`."""

    def wrap(fn: Callable[[K], V]) -> Memo[K, V]:
        return Memo(fn, entries, chars)

    return wrap


def text_memo(
    entries: int = 8, chars: int = 4_000_000
) -> Callable[[Callable[[str], str]], TextMemo]:
    """Decorator form of :class:`TextMemo`."""

    def wrap(fn: Callable[[str], str]) -> TextMemo:
        return TextMemo(fn, entries, chars)

    return wrap


C = TypeVar("C", bound=_Clearable)


def register(cache: C) -> C:
    """Add a cache with a ``cache_clear()`` (a ``functools.lru_cache`` on a hot path, where
    its C speed matters) to what :func:`clear_all` empties; returns it, so it decorates."""
    _REGISTRY.add(cache)
    return cache


def clear_all() -> int:
    """Empty every registered memo; returns how many there are."""
    memos = list(_REGISTRY)
    for m in memos:
        m.cache_clear()
    return len(memos)
