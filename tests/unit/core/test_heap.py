"""The worker maps large blocks on their own, so memory freed after a record goes back."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workers.core.heap import map_large_blocks
from workers.core.settings import Settings, SettingsError

_PROGRAM = """
import gc, sys
from workers.core.heap import map_large_blocks
set_ = map_large_blocks(int(sys.argv[1]))
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
big, small = [], []
for i in range(3000):  # 50 KB buffers, as a worker's records, between long-lived objects
    big.append(b"x" * (50_000 + i % 7))
    small.append(str(i) * 20)
big.clear()
gc.collect()
print(int(set_), rss())
"""


def _after_free(threshold: int) -> tuple[bool, int]:
    out = subprocess.run(
        [sys.executable, "-c", _PROGRAM, str(threshold)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    return out[0] == "1", int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_record_buffers_go_back_to_the_system() -> None:
    kept_default, rss_default = _after_free(0)
    mapped, rss_mapped = _after_free(32768)
    assert not kept_default and mapped
    # 150 MB of 50 KB buffers freed: glibc's heap keeps most of them (122 MB
    # resident after the free), mapped blocks are returned (13 MB left, the interpreter itself)
    assert rss_mapped * 3 < rss_default, (rss_mapped, rss_default)


def test_zero_leaves_the_allocator_alone_and_the_setting_is_checked() -> None:
    assert map_large_blocks(0) is False
    assert Settings().malloc_mmap_threshold == 32768
    with pytest.raises(SettingsError, match="CTXPRESS_MALLOC_MMAP_THRESHOLD"):
        Settings.from_env({"CTXPRESS_MALLOC_MMAP_THRESHOLD": "-1"})
