"""A small, bounded memo for pure ``str -> str`` functions of whole texts.

``functools.lru_cache`` bounds entries, not bytes: sixteen 16 MB records would
pin half a gigabyte.  :class:`TextMemo` keeps at most ``entries`` results and
at most ``chars`` characters of keys plus values, oldest out first; a text
larger than the budget is computed and not kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

__all__ = ["TextMemo", "text_memo"]


class TextMemo:
    def __init__(self, fn: Callable[[str], str], entries: int, chars: int) -> None:
        self.fn = fn
        self.entries = entries
        self.chars = chars
        self._data: OrderedDict[str, str] = OrderedDict()
        self._size = 0
        self.__doc__ = fn.__doc__
        self.__name__ = getattr(fn, "__name__", "memo")

    def __call__(self, text: str) -> str:
        hit = self._data.get(text)
        if hit is not None:
            self._data.move_to_end(text)
            return hit
        value = self.fn(text)
        size = len(text) + (len(value) if value is not text else 0)
        if size <= self.chars:
            self._data[text] = value
            self._size += size
            while len(self._data) > self.entries or self._size > self.chars:
                old_key, old_value = self._data.popitem(last=False)
                self._size -= len(old_key) + (len(old_value) if old_value is not old_key else 0)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def cache_clear(self) -> None:
        self._data.clear()
        self._size = 0


def text_memo(
    entries: int = 8, chars: int = 4_000_000
) -> Callable[[Callable[[str], str]], TextMemo]:
    """Decorator form of :class:`TextMemo`."""

    def wrap(fn: Callable[[str], str]) -> TextMemo:
        return TextMemo(fn, entries, chars)

    return wrap
