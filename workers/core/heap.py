"""How much freed memory the C allocator keeps: large blocks straight back to the system.

glibc's malloc serves a block under its mmap threshold from the heap and keeps it when it
is freed; the threshold starts at 128 KiB and rises (up to 32 MiB) each time a larger
block is freed.  A worker handling 50 KB records allocates and frees blocks of that size
for every record, on two threads (two heaps): measured with ``ctxpress bench-kafka --sizes
51200``, its resident memory climbed by about 200 KB per record processed, from 185 to
267 MB over 400 records, and fell only at exit.  With blocks of 32 KiB and more mapped on
their own (``mallopt(M_MMAP_THRESHOLD, 32768)``, which also stops the rise) the same run
peaked at 208 MB.  Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["M_MMAP_THRESHOLD", "map_large_blocks"]

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>


def map_large_blocks(threshold: int) -> bool:
    """Serve (and return) blocks of ``threshold`` bytes or more with mmap; True when set.

    ``threshold`` 0 leaves the allocator as it is."""
    if threshold <= 0 or not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))
