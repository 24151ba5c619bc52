"""read-lifecycle: superseded file reads become markers pointing at the newer copy."""

from __future__ import annotations

import re

import pytest

from tests.conftest import Corpus
from tests.support.sessions import bash_session
from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines import resolve
from workers.engines.base import EngineContext
from workers.engines.readlifecycle import Access, Read, ReadLifecycleEngine, covers, parse_access
from workers.messages.model import Unit
from workers.pipeline.expand import expand_record
from workers.pipeline.runner import Pipeline
from workers.testing import check_corpus_changes, expanded, make_unit

CTX = EngineContext(tokens=TokenCounter())
BODY = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(40))
MARKER = re.compile(r"… [^\n]* <<cx:[0-9a-f]{16}>>")


def tool(i: int, text: str, command: str, tool_name: str = "bash") -> Unit:
    return make_unit(i, text, command=command, tool_name=tool_name)


def user(i: int, text: str) -> Unit:
    return Unit(uid=f"m{i}", index=i, role="user", kind="text", text=text, path=("messages", i))


def head(n: int) -> str:
    return "\n".join(BODY.splitlines()[:n])


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat a.txt", Read("a.txt")),
        ("cat -n ./src/../a.txt 2>/dev/null", Read("a.txt")),
        ("head -n 50 a.txt", Read("a.txt", 1, 50)),
        ("head -50 a.txt", Read("a.txt", 1, 50)),
        ("head a.txt", Read("a.txt", 1, 10)),
        ("tail -n 20 app.log", Read("app.log", tail=20)),
        ("tail -n +5 app.log", Read("app.log", 5, None)),
        ("sed -n '1,80p' src/x.py", Read("src/x.py", 1, 80)),
        ("sed -n '10,$p' x", Read("x", 10, None)),
        ("cd src && cat a.py", Read("src/a.py")),
        ("cat a.py | head -n 5", Read("a.py", 1, 5)),
        ("nl -ba m.c", Read("m.c")),
        ("bat -r 1:40 x.rs", Read("x.rs", 1, 40)),
    ],
)
def test_reads(command: str, expected: Read) -> None:
    assert parse_access(command, "bash") == Access(expected)


@pytest.mark.parametrize(
    "command",
    [
        'grep -rn "cat " .',
        "jenkins: cat pipeline console log",
        "cat a b",
        "cat *.py",
        "head -c 100 f",
        "echo cat a.txt",
        "cat a.txt && rm a.txt",
    ],
)
def test_not_reads(command: str) -> None:
    access = parse_access(command, "bash")
    assert access is None or access.read is None


@pytest.mark.parametrize(
    ("command", "writes", "edits"),
    [
        ("cat a.txt > b.txt", ("b.txt",), ()),
        ("echo hi >> out.txt && cat out.txt", (), ("out.txt",)),
        ("sed -i 's/a/b/' f.txt", (), ("f.txt",)),
        ("sed -i.bak -e s/a/b/ f1 f2", (), ("f1", "f2")),
        ("perl -pi -e 's/a/b/' g.txt", (), ("g.txt",)),
        ("patch src/app.py fix.diff", (), ("src/app.py",)),
        ("cat > f.py <<'EOF'\nprint('it''s')\nEOF", ("f.py",), ()),
        ("make 2>&1 | tee build.log", ("build.log",), ()),
        ("make 2>&1 | tee -a build.log", (), ("build.log",)),
    ],
)
def test_writes(command: str, writes: tuple[str, ...], edits: tuple[str, ...]) -> None:
    access = parse_access(command, "bash")
    assert access is not None
    assert access.read is None
    assert (access.writes, access.edits) == (writes, edits)


def test_editor_and_edit_tools() -> None:
    # the record codec turns the text editor's calls into these commands
    editor = "str_replace_based_edit_tool"
    assert parse_access("cat src/app.py", editor) == Access(Read("src/app.py", assumed=True))
    assert parse_access("sed -n '3,9p' src/app.py", editor) == Access(Read("src/app.py", 3, 9))
    assert parse_access("tee src/app.py", editor) == Access(None, ("src/app.py",))
    assert parse_access("patch src/app.py", editor) == Access(None, (), ("src/app.py",))
    assert parse_access("cat src/app.py", "Edit") == Access(None, (), ("src/app.py",))
    assert parse_access("cat src/app.py", "MultiEdit") == Access(None, (), ("src/app.py",))


def test_read_and_write_tools() -> None:
    assert parse_access("cat src/app.py", "Write") == Access(None, ("src/app.py",))
    assert parse_access("cat src/app.py", "Read", "     1→a\n     2→b\n") == Access(
        Read("src/app.py", 1, 2)
    )
    assert parse_access("cat src/app.py", "read_file", "a\nb") == Access(
        Read("src/app.py", assumed=True)
    )
    assert parse_access("cat src", "list_directory", "a\nb") is None


def test_covers() -> None:
    assert covers(Read("a"), Read("a", 1, 50))
    assert covers(Read("a", 1, 80), Read("a", 1, 50))
    assert not covers(Read("a", 1, 50), Read("a"))
    assert not covers(Read("a", 51, 100), Read("a", 1, 50))
    assert covers(Read("a", tail=50), Read("a", tail=20))
    assert not covers(Read("a", 5, None), Read("a", tail=20))


def run(units: list[Unit]) -> tuple[list[str], dict[str, object], dict[str, str]]:
    out = ReadLifecycleEngine().apply(units, CTX)
    return out.texts, out.details, out.stash


def test_later_full_read_supersedes_and_expand_restores() -> None:
    newer = BODY + "\ndef g():\n    pass"
    units = [tool(1, BODY, "cat src/app.py"), user(2, "ok"), tool(3, newer, "cat src/app.py")]
    texts, details, stash = run(units)
    key = next(iter(stash))
    assert texts == [
        f"… superseded read of src/app.py (80 lines); newer copy in message 3 <<cx:{key}>>",
        "ok",
        newer,
    ]
    assert details == {"reads_superseded": 1, "_backrefs": {0: [2]}}
    assert expanded(texts[0], stash) == BODY


def test_head_is_superseded_by_a_wider_read_but_not_the_reverse() -> None:
    units = [tool(1, head(50), "head -n 50 a.py"), tool(2, BODY, "cat a.py")]
    texts, _, stash = run(units)
    assert texts[0].startswith("… superseded read of a.py (50 lines); newer copy in message 2")
    assert expanded(texts[0], stash) == head(50)
    units = [tool(1, BODY, "cat a.py"), tool(2, head(50), "head -n 50 a.py")]
    assert run(units)[0] == [BODY, head(50)]


def test_different_ranges_are_not_superseded() -> None:
    lines = BODY.splitlines()
    first, second = "\n".join(lines[:40]), "\n".join(lines[40:])
    units = [tool(1, first, "sed -n '1,40p' a.py"), tool(2, second, "sed -n '41,80p' a.py")]
    assert run(units)[0] == [first, second]


def test_grep_mentioning_cat_is_not_a_read() -> None:
    units = [tool(1, BODY, 'grep -rn "cat " .'), tool(2, BODY, "cat .")]
    assert run(units)[0] == [BODY, BODY]


def test_later_write_makes_a_read_stale() -> None:
    units = [tool(1, BODY, "cat src/app.py"), tool(2, "", "cp /tmp/app.py src/app.py")]
    texts, details, stash = run(units)
    assert texts[0].startswith(
        "… stale read of src/app.py (80 lines); the file was changed in message 2 <<cx:"
    )
    assert details["stale_reads"] == 1
    assert expanded(texts[0], stash) == BODY


@pytest.mark.parametrize(
    ("command", "tool_name"),
    [
        ("sed -i 's/x/y/' src/app.py", "bash"),
        ("patch src/app.py", "str_replace_based_edit_tool"),
        ("cat src/app.py", "Edit"),
    ],
)
def test_an_edit_in_place_leaves_the_newest_read_whole(command: str, tool_name: str) -> None:
    # the model is editing that text: the read it edits from stays (issue 13)
    units = [tool(1, BODY, "cat src/app.py"), tool(2, "", command, tool_name)]
    texts, details, _ = run(units)
    assert texts[0] == BODY and "stale_reads" not in details
    # a newer read still supersedes it
    units.append(tool(3, BODY, "cat src/app.py"))
    texts, details, _ = run(units)
    assert details["reads_superseded"] == 1 and texts[0] != BODY


def test_newer_copy_that_is_a_dedup_marker_does_not_supersede() -> None:
    dup = "[[dup:v1 src=m1 at=0 len=700 | same 80 lines as message 1: def f0(x):]]"
    units = [tool(1, BODY, "cat a.py"), tool(2, dup, "cat a.py")]
    assert run(units)[0] == [BODY, dup]


def test_chain_points_at_the_last_copy() -> None:
    units = [tool(1, BODY, "cat a.py"), tool(2, BODY, "cat a.py"), tool(3, BODY, "cat a.py")]
    texts, details, _ = run(units)
    assert "newer copy in message 3" in texts[0]
    assert "newer copy in message 3" in texts[1]
    assert texts[2] == BODY
    assert details["_backrefs"] == {0: [2], 1: [2]}


def test_failed_later_read_is_not_a_newer_copy() -> None:
    units = [tool(1, BODY, "cat a.py"), tool(2, "cat: a.py: No such file or directory", "cat a.py")]
    assert run(units)[0][0] == BODY


def test_different_content_without_a_write_is_not_superseded() -> None:
    other = "\n".join(f"class C{i}:\n    pass" for i in range(40))
    units = [tool(1, BODY, "cat a.py"), tool(2, other, "cat a.py")]
    assert run(units)[0][0] == BODY


def test_critical_lines_missing_from_the_newer_copy_keep_the_old_read() -> None:
    log = "\n".join(f"step {i}: ok" for i in range(40))
    old = log + "\nERROR: disk quota exceeded on /var/cache/app"
    units = [tool(1, old, "cat build.log"), tool(2, log, "cat build.log")]
    assert run(units)[0][0] == old


def test_an_older_copy_of_a_source_file_goes_whatever_words_its_code_holds() -> None:
    # code is no report: ``raise ValueError`` in the old copy is no finding that pins it
    old = BODY + "\nraise ValueError('bad config')"
    units = [tool(1, old, "cat a.py"), tool(2, BODY, "cat a.py")]
    assert run(units)[0][0] != old


# the generated corpus holds re-read files and an inline PNG; the public one neither
CORPUS_MIN_CHANGES = {"generated": 3, "shared": 0}


@pytest.mark.slow
def test_corpus_every_change_expands_back_and_passes_the_gate(
    corpus: Corpus, corpus_lines: list[bytes]
) -> None:
    changed = check_corpus_changes(ReadLifecycleEngine(), corpus_lines, CTX)
    assert changed >= CORPUS_MIN_CHANGES[corpus.name]


def _transcript(*reads: tuple[str, str]) -> dict[str, object]:
    """An OpenAI record: one bash tool call per ``(command, output)``."""
    return bash_session(reads)


def _pipeline() -> Pipeline:
    engines = resolve(("dedup", "read-lifecycle"))
    return Pipeline(Settings(mode="off"), tokens=CTX.tokens, engines={"chain": engines})


def test_dedup_then_read_lifecycle_never_deletes_the_only_copy() -> None:
    # dedup leaves a file read again whole (outside lossless mode), so read-lifecycle
    # supersedes the older copy: exactly one copy stays, the newest
    data = _transcript(("cat src/app.py", BODY), ("cat src/app.py", BODY))
    data["mode"] = "chain"
    outcome = _pipeline().run_raw(data)
    messages = outcome.record["messages"]
    assert messages[2]["content"].startswith("… superseded read of src/app.py (80 lines)")
    assert messages[4]["content"] == BODY
    assert outcome.rejections == []
    # a back-reference another output makes to the older read keeps that read whole
    data = _transcript(
        ("cat src/app.py", BODY), ("cat src/app.py", BODY), ("python3 show.py", BODY)
    )
    data["mode"] = "chain"
    messages = _pipeline().run_raw(data).record["messages"]
    assert messages[6]["content"].startswith("[[dup:v1 src=m2 ")
    assert messages[2]["content"] == BODY


def test_pipeline_supersedes_and_expand_restores() -> None:
    newer = BODY + "\ndef g():\n    return 0"
    data = _transcript(
        ("cat src/app.py", BODY),
        ("sed -n '1,20p' src/app.py", head(20)),
        ("cat src/app.py", newer),
    )
    data["mode"] = "chain"
    outcome = _pipeline().run_raw(data)
    messages = outcome.record["messages"]
    assert messages[2]["content"].startswith(
        "… superseded read of src/app.py (80 lines); newer copy in message 6 <<cx:"
    )
    assert messages[4]["content"].startswith(
        "… superseded read of src/app.py (20 lines); newer copy in message 6 <<cx:"
    )
    assert messages[6]["content"] == newer
    store = MemoryStore()
    store.put_many(outcome.stash)
    restored = expand_record(outcome.record, store)
    assert restored == data
