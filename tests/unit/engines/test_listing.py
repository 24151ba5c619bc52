"""Listings (issue 13): every path, name, size and stat number stays visible; expand is exact."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.listing import compact_listing, listing_kind, tree_paths
from workers.fidelity.lossy import check_lossy
from workers.markers import structured_view
from workers.markers.stash import expand_offload
from workers.pipeline.runner import Pipeline
from workers.testing import tool_output_record

REPO = Path(__file__).resolve().parents[3]


def _find_listing() -> str:
    """A generated ``find .`` listing: nested directories, odd names, an error line."""
    lines = ["."]
    for pkg in ("cvec", "core/io", "core/net", "docs"):
        lines.append(f"./{pkg}")
        for i in range(40):  # a listing worth a tree (MIN_SAVED_PATH_TOKENS)
            lines.append(f"./{pkg}/file_{i}.c")
        lines.append(f"./{pkg}/vec.h")
    lines += ["./docs/with space.md", "./docs/colon:.txt", './docs/quo"te', "./error_codes.c"]
    lines.append("find: './secret': Permission denied")
    return "\n".join(lines) + "\n"


def _long_listing() -> str:
    rows = ["total 96"]
    rows.append("drwxr-xr-x  5 root root  4096 Dec  1 14:41 .")
    rows.append("drwxr-xr-x 20 root root  4096 Nov 30 09:00 ..")
    for i in range(20):
        rows.append(f"-rw-r--r--  1 root root {1000 + 37 * i:5d} Dec  1 14:{i:02d} module_{i}.py")
    rows.append("-rwxr-xr-x  1 root root  8123 Dec  1 14:41 run.sh")
    rows.append("-rwsr-xr-x  1 root root 59976 Feb  6  2024 passwd")
    rows.append("-rw-------  1 app  app    311 Dec  1 14:41 token.txt")
    rows.append("lrwxrwxrwx  1 root root     9 Dec  1 14:41 latest -> module_3.py")
    rows.append("drwxr-xr-x  2 root root  4096 Dec  1 14:41 src")
    return "\n".join(rows) + "\n"


def _stat_log() -> str:
    out: list[str] = []
    for c in range(4):
        out += [
            f"commit {c:040x}",
            "Author: Dev One <dev@example.org>",
            f"Date:   Tue Dec {c + 1} 14:20:59 2026 +0000",
            "",
            f"    change number {c} in the parser",
            "",
            "    A body line that explains the change.",
            "",
        ]
        for f in range(10):
            plus, minus = f % 4 + 1, f % 3
            bar = "+" * plus + "-" * minus
            out.append(f" src/pkg{c}/mod_{f}.py{' ' * (20 - len(str(f)))}| {plus + minus:2d} {bar}")
        out.append(" 10 files changed, 25 insertions(+), 9 deletions(-)")
        out.append("")
    return "\n".join(out)


def _restore(text: str, stash: dict[str, str]) -> str:
    store = MemoryStore()
    store.put_many(stash)
    missing: list[str] = []
    restored = structured_view.decode(expand_offload(text, store, missing))
    assert not missing
    return restored


def _paths(listing: str) -> list[str]:
    return [line for line in listing.splitlines() if line and not line.startswith("find:")]


def _shown(view: str) -> set[str]:
    shown = tree_paths(view)
    for path in list(shown):
        shown.add(path.rstrip("/"))
    return shown


@pytest.fixture(scope="module")
def tokens() -> TokenCounter:
    return TokenCounter()


# --- path listings ------------------------------------------------------------


def test_find_view_shows_every_path_and_expands_exactly(tokens: TokenCounter) -> None:
    text = _find_listing()
    view = compact_listing(text, tokens, "find", "find .")
    assert view is not None and view.kind == "paths"
    body = view.text.split(structured_view.HEADER_LINE)[0]
    assert "./: error_codes.c\n  cvec/: file_0.c file_1.c" in body
    assert '"with space.md"' in body and '"quo\\"te"' in body
    assert "find: './secret': Permission denied" in body
    assert set(_paths(text)) <= _shown(body)
    assert _restore(view.text, view.stash) == text
    assert check_lossy(text, view.text, "tool_result", view.stash, (), "find .") == []
    assert tokens.count(view.text) < 0.8 * tokens.count(text)


def test_tree_reader_reads_nested_headers_relative_to_their_parent() -> None:
    view = "/usr/: bin sbin\n  lib/:\n    grub/: i386-pc\n  share/doc/: a b\nREADME.md"
    assert tree_paths(view) == {
        "/usr/",
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib/",
        "/usr/lib/grub/",
        "/usr/lib/grub/i386-pc",
        "/usr/share/doc/",
        "/usr/share/doc/a",
        "/usr/share/doc/b",
        "README.md",
    }


def test_real_find_over_the_repository_keeps_every_path(tokens: TokenCounter) -> None:
    if shutil.which("find") is None:
        pytest.skip("no find on this machine")
    text = subprocess.run(
        ["find", "workers", "-name", "__pycache__", "-prune", "-o", "-print"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    view = compact_listing(text, tokens, "find", "find workers")
    assert view is not None
    assert set(_paths(text)) <= _shown(view.text)
    assert _restore(view.text, view.stash) == text
    assert tokens.count(view.text) < 0.7 * tokens.count(text)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_every_path_of_a_find_listing_stays_visible_in_the_pipeline(mode: str) -> None:
    """Before the listing view, standard folded these into ``N more paths under DIR``."""
    text = _find_listing()
    out = Pipeline(Settings(mode=mode)).run_raw(tool_output_record("r", text, "find ."))
    after = out.record["content"]
    assert after != text
    missing = set(_paths(text)) - _shown(after)
    assert not missing, sorted(missing)[:5]
    assert out.stats["tokens_after"] < out.stats["tokens_before"]


def test_lossless_mode_leaves_a_listing_byte_exact() -> None:
    text = _find_listing()
    out = Pipeline(Settings(mode="lossless")).run_raw(tool_output_record("r", text, "find ."))
    assert out.record["content"] == text


def test_not_a_listing_is_left_to_the_filters(tokens: TokenCounter) -> None:
    log = "\n".join(f"2026-12-01 10:00:{i:02d} INFO worker {i} started job" for i in range(40))
    prose = "\n".join(f"line {i} of a plain program output with words" for i in range(40))
    grep = "\n".join(f"src/pkg/mod_{i}.py:{i + 1}:    import os" for i in range(40))
    for text in (log, prose, grep):
        assert compact_listing(text, tokens) is None
        assert listing_kind(text) is None
    files = "\n".join(f"src/pkg/mod_{i}.py" for i in range(40))
    assert compact_listing(files, tokens, "grep", "grep -l os -r src") is None  # grep's own facts


# --- long listings ------------------------------------------------------------


def test_ls_la_keeps_every_name_and_size_and_only_unusual_modes(tokens: TokenCounter) -> None:
    text = _long_listing()
    view = compact_listing(text, tokens, "ls", "ls -la")
    assert view is not None and view.kind == "long"
    body = view.text.split(structured_view.HEADER_LINE)[0]
    lines = body.splitlines()
    for i in range(20):
        assert f"module_{i}.py {1000 + 37 * i}" in lines
    assert "run.sh* 8123" in lines
    assert "passwd* 59976 -rwsr-xr-x" in lines
    assert "token.txt 311 -rw------- app:app" in lines
    assert "latest -> module_3.py 9" in lines
    assert "src/" in lines
    assert "Dec  1" not in body  # dates are stashed
    assert _restore(view.text, view.stash) == text


def test_find_ls_is_grouped_by_directory(tokens: TokenCounter) -> None:
    rows = []
    for d in ("workers/core", "workers/engines"):
        rows.append(f"  5308582      4 drwxr-xr-x   6 root     root         4096 Dec  1 13:22 {d}")
        for i in range(6):
            rows.append(
                f"  53085{i:02d}     12 -rw-r--r--   1 root     root        {10960 + i} "
                f"Dec  1 09:37 {d}/mod_{i}.py"
            )
    text = "\n".join(rows) + "\n"
    view = compact_listing(text, tokens, "find", "find workers -ls")
    assert view is not None and view.kind == "long"
    body = view.text.split(structured_view.HEADER_LINE)[0]
    assert "workers/:" in body and "  core/:" in body
    assert "    mod_3.py 10963" in body.splitlines()
    assert _restore(view.text, view.stash) == text


def test_real_ls_la_keeps_every_name_and_size(tokens: TokenCounter) -> None:
    if shutil.which("ls") is None:
        pytest.skip("no ls on this machine")
    text = subprocess.run(
        ["ls", "-la", "workers/engines"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    view = compact_listing(text, tokens, "ls", "ls -la workers/engines")
    assert view is not None
    body = view.text.split(structured_view.HEADER_LINE)[0]
    for line in text.splitlines()[1:]:
        fields = line.split()
        name, size = fields[-1], fields[4]
        shown = [v for v in body.splitlines() if v.split(" ")[0].rstrip("/*") == name]
        assert shown, name
        assert fields[0].startswith("d") or size in shown[0].split(" "), (name, size)
    assert _restore(view.text, view.stash) == text


# --- git log --stat -----------------------------------------------------------

_STAT_LINE = re.compile(r"^ (\S+)\s+\|\s+(\d+) (\+*)(-*)$")


def _stat_facts(text: str) -> list[tuple[str, str]]:
    """(path, ``+a -d``) of every unscaled stat line."""
    out = []
    for line in text.splitlines():
        m = _STAT_LINE.match(line)
        if m and len(m.group(3)) + len(m.group(4)) == int(m.group(2)):
            plus, minus = len(m.group(3)), len(m.group(4))
            nums = f"+{plus}" if not minus else (f"-{minus}" if not plus else f"+{plus} -{minus}")
            out.append((m.group(1), nums))
    return out


_SUMMARY_LINE = re.compile(r"^ \d+ files? changed")


def test_git_log_stat_keeps_hashes_subjects_paths_and_numbers(tokens: TokenCounter) -> None:
    text = _stat_log()
    view = compact_listing(text, tokens, "git-log", "git log --stat")
    assert view is not None and view.kind == "git-stat"
    body = view.text.split(structured_view.HEADER_LINE)[0]
    for c in range(4):
        assert f"commit {c:040x}" in body
        assert f"    change number {c} in the parser" in body
    paths = tree_paths(body)
    for path, nums in _stat_facts(text):
        assert path in paths, path
        assert f"{path.rsplit('/', 1)[1]} {nums}" in body, (path, nums)
    assert " 10 files changed, 25 insertions(+), 9 deletions(-)" in body  # as written
    assert "|" not in body
    assert _restore(view.text, view.stash) == text
    assert tokens.count(view.text) < 0.8 * tokens.count(text)


def test_scaled_bar_keeps_the_total_and_the_bar_as_written(
    tokens: TokenCounter,
) -> None:
    lines = [f"commit {'a' * 40}", "Author: A <a@b.c>", "Date:   today", "", "    subject", ""]
    pad = len("dir/sub/a_much_longer_module_name_00.py")  # git aligns the bars
    lines += [f" {f'dir/f{i}.py':{pad}} | {120 + i} {'+' * 30}{'-' * 10}" for i in range(9)]
    lines += [f" {f'dir/sub/a_much_longer_module_name_{i}.py':{pad}} |   1 +" for i in range(30)]
    view = compact_listing("\n".join(lines) + "\n", tokens, "git-log")
    assert view is not None
    # git scaled the bar: the view keeps it as written instead of inventing a split
    assert any(x.startswith("  f0.py 120 +") and x.endswith("-") for x in view.text.splitlines())
    assert "~" not in view.text


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_git_log_stat_of_this_repository_keeps_every_fact(mode: str) -> None:
    """Before, every --stat line of a commit past the second was stashed."""
    if shutil.which("git") is None:
        pytest.skip("no git on this machine")
    run = subprocess.run(
        ["git", "log", "--stat", "-n", "30", "--format=commit %H"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0 or "|" not in run.stdout:
        pytest.skip("not a git checkout with history")
    text = run.stdout
    out = Pipeline(Settings(mode=mode)).run_raw(tool_output_record("r", text, "git log --stat"))
    after = out.record["content"]
    if "<<cx:" in text or "[[" in text:
        pytest.skip("the history quotes markers: the pipeline leaves such text alone")
    # (a log of ids and stats alone may stay as written: the view pays under 10 % then)
    for line in text.splitlines():
        if line.startswith("commit "):
            assert line in after
    paths = tree_paths(after)
    kept = set(after.splitlines())
    for line in text.splitlines():
        if _SUMMARY_LINE.match(line):
            assert line in kept, line  # each commit's summary as written
    for path, nums in _stat_facts(text):
        base = path.rsplit("/", 1)[-1]
        written = [line for line in text.splitlines() if line.startswith(f" {path} ")]
        if any(line in kept for line in written):
            continue  # the stat line as written (a short log: no view)
        assert path in paths or f" {path} {nums}" in after, path
        assert f"{base} {nums}" in after, (path, nums)


def test_find_exec_ls_la_puts_directory_listings_under_their_directory(
    tokens: TokenCounter,
) -> None:
    """``find d -exec ls -la {} +``: files named by path, then each directory's own listing."""
    rows = [f"-rw-r--r-- 1 root root {100 + i} Dec  1 10:22 pkg/sub/m{i}.py" for i in range(5)]
    rows += ["", "pkg/sub:", "total 20"]
    rows.append("drwxr-xr-x 2 root root 4096 Dec  1 10:22 .")
    rows.append("drwxr-xr-x 3 root root 4096 Dec  1 10:22 ..")
    rows += [f"-rw-r--r-- 1 root root {100 + i} Dec  1 10:22 m{i}.py" for i in range(5)]
    rows.append("-rw-r--r-- 1 root root 7 Dec  1 10:22 only_here.txt")
    text = "\n".join(rows) + "\n"
    view = compact_listing(text, tokens, "find", "find pkg -exec ls -la {} +")
    assert view is not None and view.kind == "long"
    body = view.text.split(structured_view.HEADER_LINE)[0].splitlines()
    assert body[1:3] == ["pkg/sub/:", "  m0.py 100"]
    assert "  only_here.txt 7" in body
    assert (
        sum(1 for line in body if line.strip().startswith("m0.py")) == 1
    )  # one entry, twice listed
    assert _restore(view.text, view.stash) == text


def test_columns_and_patches_are_not_listings(tokens: TokenCounter) -> None:
    columns = "\n".join("  ".join(f"name_{r}_{c}.txt" for c in range(5)) for r in range(20))
    assert compact_listing(columns, tokens, "ls", "ls") is None
    patch = [f"commit {'b' * 40}", "Author: A <a@b.c>", "Date:   today", "", "    subject", ""]
    patch += [f" src/f{i}.py | 2 +-" for i in range(10)]
    patch += ["", "diff --git a/src/f0.py b/src/f0.py", "@@ -1 +1 @@", "-old", "+new"]
    assert compact_listing("\n".join(patch) + "\n", tokens, "git-diff", "git log -p --stat") is None
    assert listing_kind("\n".join(patch)) is None


def test_kept_lines_with_stray_quotes_do_not_break_the_reader(tokens: TokenCounter) -> None:
    text = (
        "\n".join([*(f"./src/pkg/m{i}.c" for i in range(120)), 'find: "./odd: No such file']) + "\n"
    )
    view = compact_listing(text, tokens, "find", "find .")
    assert view is not None
    assert 'find: "./odd: No such file' in view.text
    assert {f"./src/pkg/m{i}.c" for i in range(120)} <= tree_paths(view.text)
    assert tree_paths('"unterminated x\n"also: y') >= {'"unterminated x'}


def test_ls_r_names_stay_under_their_directory_header(tokens: TokenCounter) -> None:
    names = [f"mod_{i}.py" for i in range(30)] + ["errors.py"]
    text = "pkg/email:\n" + "\n".join(names) + "\n\npkg/email/sub:\n" + "\n".join(names) + "\n"
    view = compact_listing(text, tokens, "ls", "ls -R pkg/email")
    assert view is not None and view.kind == "paths"
    shown = tree_paths(view.text)
    for folder in ("pkg/email", "pkg/email/sub"):
        assert {f"{folder}/{n}" for n in names} <= shown
    assert _restore(view.text, view.stash) == text


def test_git_log_shortstat_keeps_every_commit_and_its_numbers(tokens: TokenCounter) -> None:
    out: list[str] = []
    for c in range(20):
        out += [f"commit {c:040x}", "Author: Dev <d@example.org>", f"Date:   Dec {c + 1} 2026", ""]
        out += [f"    subject {c}", "", "    a body line", "    another body line", "", ""]
        files = "1 file" if c == 0 else f"{c + 1} files"
        out.append(f" {files} changed, {3 * c + 1} insertions(+), {c} deletions(-)")
    text = "\n".join(out) + "\n"
    view = compact_listing(text, tokens, "git-log", "git log --shortstat")
    assert view is not None and view.kind == "git-stat"
    lines = view.text.splitlines()
    for c in range(20):  # each summary as written: a fact of its commit
        assert f"commit {c:040x}" in lines and f"    subject {c}" in lines
        files = "1 file" if c == 0 else f"{c + 1} files"
        assert f" {files} changed, {3 * c + 1} insertions(+), {c} deletions(-)" in lines
    assert _restore(view.text, view.stash) == text


def test_a_short_find_listing_keeps_its_paths_as_written(tokens: TokenCounter) -> None:
    # held-out set 34: the tree of 20 paths saved 12 tokens, and ``./lib/inventory/cart.rb``
    # was nowhere as written
    files = ("cart", "item", "money", "parser", "stock", "version")
    text = "".join(f"./lib/inventory/{name}.rb\n" for name in files)
    text += "".join(f"./spec/{name}_spec.rb\n" for name in files)
    text += "".join(f"./test/test_{name}.rb\n" for name in files)
    assert compact_listing(text, tokens, "find", "find . -name '*.rb'") is None
