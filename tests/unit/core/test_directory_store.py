"""The offload directory: nothing below its root is followed, private modes, bounded entries,
and ``expand --offload`` of a missing folder creates nothing (issue 11)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest

from workers.cli import main
from workers.core.offload import DirectoryStore, OffloadStoreError
from workers.markers import MANIFEST_KEY
from workers.markers.stash import offload_marker

KEY = "1111111111111111"


def _record(key: str) -> bytes:
    return orjson.dumps(
        {
            "id": "r",
            "messages": [{"role": "user", "content": offload_marker("1 line omitted", key)}],
            "compression": {"mode": "standard", "changed": ["m0"], MANIFEST_KEY: {"stash": [key]}},
        }
    )


def test_a_stash_file_that_is_a_link_is_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    store_dir = tmp_path / "st"
    (store_dir / "11").mkdir(parents=True)
    (store_dir / "11" / KEY).symlink_to(secret)
    with pytest.raises(OffloadStoreError, match="link"):
        DirectoryStore(store_dir).get(KEY)
    compressed = tmp_path / "in.jsonl"
    compressed.write_bytes(_record(KEY) + b"\n")
    out = tmp_path / "out.jsonl"
    assert main(["expand", "--offload", str(store_dir), "-i", str(compressed), "-o", str(out)]) == 1
    assert "root:x" not in out.read_text()
    err = capsys.readouterr().err
    assert "root:x" not in err and "link" in err


def test_a_shard_folder_that_is_a_link_is_neither_read_nor_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / KEY).write_text("outside the store")
    store_dir = tmp_path / "st"
    store_dir.mkdir()
    (store_dir / "11").symlink_to(outside, target_is_directory=True)
    store = DirectoryStore(store_dir)
    with pytest.raises(OffloadStoreError, match="not a folder of the store"):
        store.get(KEY)
    with pytest.raises(OffloadStoreError, match="not a folder of the store"):
        store.put("1122334455667788", "written through the link")
    assert sorted(p.name for p in outside.iterdir()) == [KEY]


def test_folders_are_0700_and_files_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = DirectoryStore(tmp_path / "st")
        store.put(KEY, "text")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "st").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "st" / "11").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "st" / "11" / KEY).stat().st_mode) == 0o600
    old = os.umask(0o777)
    try:
        store.put("2222222222222222", "text")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "st" / "22").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "st" / "22" / "2222222222222222").stat().st_mode) == 0o600
    assert DirectoryStore(tmp_path / "st").get("2222222222222222") == "text"
    assert not [p for p in (tmp_path / "st").rglob(".tmp-*")]


def test_an_entry_is_capped_on_write_and_on_read(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "st", max_entry_bytes=100)
    with pytest.raises(OffloadStoreError, match="cap"):
        store.put(KEY, "x" * 101)
    store.put(KEY, "é" * 50)  # 100 bytes of UTF-8
    assert store.get(KEY) == "é" * 50
    big = tmp_path / "st" / "33" / "3333333333333333"
    big.parent.mkdir()
    big.write_text("y" * 101)
    with pytest.raises(OffloadStoreError, match="cap"):
        store.get("3333333333333333")


def test_a_missing_entry_or_a_bad_key_is_none(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "st")
    assert store.get(KEY) is None
    assert store.get("../../etc/passwd") is None
    with pytest.raises(ValueError, match="invalid offload key"):
        store.put("../x", "t")


def test_a_read_only_store_creates_no_folder(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "nope", create=False)
    assert store.get(KEY) is None
    assert not (tmp_path / "nope").exists()


def test_expand_of_a_missing_offload_folder_is_a_one_line_error_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compressed = tmp_path / "in.jsonl"
    compressed.write_bytes(_record(KEY) + b"\n")
    typo = tmp_path / "typo" / "dir"
    assert main(["expand", "--offload", str(typo), "-i", str(compressed), "-o", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not exist" in err
    assert not (tmp_path / "typo").exists()


def test_a_60_byte_self_referencing_stash_ends_with_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_dir = tmp_path / "st"
    (store_dir / "11").mkdir(parents=True)
    marker = offload_marker("x", KEY)
    (store_dir / "11" / KEY).write_text(f"{marker}{marker}")
    assert len((store_dir / "11" / KEY).read_bytes()) <= 60
    compressed = tmp_path / "in.jsonl"
    compressed.write_bytes(_record(KEY) + b"\n")
    out = tmp_path / "out.jsonl"
    assert main(["expand", "--offload", str(store_dir), "-i", str(compressed), "-o", str(out)]) == 1
    assert "its own marker" in capsys.readouterr().err
