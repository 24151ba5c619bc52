"""The ``toolfilter`` engine: command-aware, reversible filtering of tool outputs."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from tests.conftest import Corpus
from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines import engine_class
from workers.engines._filters import (
    FilterError,
    FilterSet,
    builtin_filters,
    check_pattern,
    clear_cache,
    command_segments,
    load_file,
    load_filter_set,
)
from workers.engines.base import EngineContext
from workers.engines.toolfilter import ToolFilterEngine, verify_filter
from workers.fidelity.facts import SHAPED_KINDS, critical_lines, line_shape
from workers.fidelity.lossy import check_lossy
from workers.markers import structured_view
from workers.markers.stash import expand_offload
from workers.messages import parse_record
from workers.messages.model import Unit
from workers.pipeline.runner import Pipeline
from workers.testing import make_unit, tool_output_record

MARKER = re.compile(r"… ([^\n]*?) <<cx:([0-9a-f]{16})>>")


def _unit(text: str, command: str | None = None, tool: str | None = "bash") -> Unit:
    return make_unit(1, text, command=command, tool_name=tool)


def _run(
    text: str,
    command: str | None = None,
    tokens: TokenCounter | None = None,
    tool: str | None = "bash",
    filters: FilterSet | None = None,
) -> tuple[str, dict[str, str], dict[str, object]]:
    ctx = EngineContext(tokens=tokens or TokenCounter(), filters=filters)
    out = ToolFilterEngine().apply([_unit(text, command, tool)], ctx)
    return out.texts[0], out.stash, out.details


def _expand(text: str, stash: dict[str, str]) -> str:
    store = MemoryStore()
    store.put_many(stash)
    missing: list[str] = []
    restored = expand_offload(text, store, missing)
    assert not missing
    return structured_view.decode(restored)  # a listing's view: the original follows its header


def _assert_sound(before: str, after: str, stash: dict[str, str]) -> None:
    """Expand restores the input exactly and the gate accepts the change."""
    assert _expand(after, stash) == before
    assert check_lossy(before, after, "tool_result", stash) == []


# --- registry and contract -----------------------------------------------------


def test_registered_and_lossy() -> None:
    cls = engine_class("toolfilter")
    assert cls is ToolFilterEngine
    assert cls.lossless is False
    assert cls.name == "toolfilter"


def test_frozen_prose_json_and_small_outputs_are_untouched(tokens: TokenCounter) -> None:
    big = "\n".join(f"line {i} of some output" for i in range(300))
    units = [
        _unit(big, "some-tool"),
        make_unit(2, big, kind="text", role="user"),
        make_unit(3, big, frozen=True),
        _unit(orjson.dumps([{"i": i, "v": "x" * 20} for i in range(200)]).decode(), "curl x"),
        _unit("short\noutput\n", "ls"),
    ]
    out = ToolFilterEngine().apply(units, EngineContext(tokens=tokens))
    assert out.texts[0] != big
    assert out.texts[1:] == [u.text for u in units[1:]]


# --- facts that must survive --------------------------------------------------------

PYTEST_OUT = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.11.7, pytest-8.3.3, pluggy-1.5.0 -- /usr/bin/python\n"
    "rootdir: /src/app\n"
    "collected 240 items\n\n"
    + "".join(
        f"tests/test_api.py::test_case_{i} PASSED{' ' * 20}[{i * 100 // 240:3d}%]\n"
        for i in range(120)
    )
    + "tests/test_api.py::test_login_rejects_bad_token FAILED              [ 50%]\n"
    + "".join(
        f"tests/test_models.py::test_model_{i} PASSED{' ' * 20}[{(i + 121) * 100 // 240:3d}%]\n"
        for i in range(118)
    )
    + "tests/test_models.py::test_save_twice ERROR                         [100%]\n\n"
    "==================================== ERRORS ====================================\n"
    "_____________________ ERROR at setup of test_save_twice ______________________\n"
    "file /src/app/tests/test_models.py, line 88\n"
    "  def test_save_twice(db_session):\n"
    "E       fixture 'db_session' not found\n"
    "/src/app/tests/test_models.py:88\n"
    "=================================== FAILURES ===================================\n"
    "________________________ test_login_rejects_bad_token _________________________\n\n"
    "    def test_login_rejects_bad_token():\n"
    "        client = make_client()\n"
    '        resp = client.post("/login", headers={"Authorization": "Bearer nope"})\n'
    ">       assert resp.status_code == 401\n"
    "E       assert 200 == 401\n"
    "E        +  where 200 = <Response [200]>.status_code\n\n"
    "tests/test_api.py:57: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_api.py::test_login_rejects_bad_token - assert 200 == 401\n"
    "ERROR tests/test_models.py::test_save_twice\n"
    "============= 1 failed, 238 passed, 1 error in 3.21s =============\n"
)


def test_pytest_failures_survive_and_passes_collapse(tokens: TokenCounter) -> None:
    after, stash, details = _run(PYTEST_OUT, "python -m pytest -v tests", tokens)
    _assert_sound(PYTEST_OUT, after, stash)
    assert details["filters_hit"] == {"pytest": 1}
    for must in (
        "tests/test_api.py::test_login_rejects_bad_token FAILED",
        "FAILED tests/test_api.py::test_login_rejects_bad_token - assert 200 == 401",
        "ERROR tests/test_models.py::test_save_twice",
        "E       assert 200 == 401",
        ">       assert resp.status_code == 401",
        "tests/test_api.py:57: AssertionError",
        "E       fixture 'db_session' not found",
        "============= 1 failed, 238 passed, 1 error in 3.21s =============",
    ):
        assert must in after
    assert "120 lines omitted (all PASSED)" in after
    assert "118 lines omitted (all PASSED)" in after
    assert tokens.count(after) < tokens.count(PYTEST_OUT) / 4


MYPY_OUT = (
    "".join(
        f'workers/mod{i}.py:{10 + i}: error: Incompatible return value type (got "int", expected "str")  [return-value]\n'
        for i in range(40)
    )
    + "Found 40 errors in 40 files (checked 95 source files)\n"
)


def test_mypy_findings_all_stay(tokens: TokenCounter) -> None:
    after, stash, _ = _run(MYPY_OUT, "mypy --strict workers", tokens)
    # every finding is a fact: nothing may be dropped
    for line in MYPY_OUT.splitlines():
        assert line in after
    _assert_sound(MYPY_OUT, after, stash)


GIT_STATUS = (
    "On branch main\n"
    "Your branch is up to date with 'origin/main'.\n\n"
    "Changes to be committed:\n"
    '  (use "git restore --staged <file>..." to unstage)\n'
    "\tmodified:   workers/service/app.py\n"
    "\trenamed:    old_name.py -> new_name.py\n\n"
    "Changes not staged for commit:\n"
    '  (use "git add/rm <file>..." to update what will be committed)\n'
    '  (use "git restore <file>..." to discard changes in working directory)\n'
    "\tdeleted:    docs/old.md\n"
    "\tmodified:   README.md\n\n"
    "Untracked files:\n"
    '  (use "git add <file>..." to include in what will be committed)\n'
    + "".join(f"\tnotes/draft-{i:03d}.md\n" for i in range(60))
    + "\n"
    'no changes added to commit (use "git add" and/or "git commit -a")\n'
)


def test_git_status_keeps_every_path_including_untracked(tokens: TokenCounter) -> None:
    after, stash, _ = _run(GIT_STATUS, "git status", tokens)
    _assert_sound(GIT_STATUS, after, stash)
    for i in range(60):
        assert f"\tnotes/draft-{i:03d}.md\n" in after
    for path in (
        "workers/service/app.py",
        "old_name.py -> new_name.py",
        "docs/old.md",
        "README.md",
    ):
        assert path in after


def _diff(files: int, lines: int) -> str:
    parts = []
    for f in range(files):
        body = "".join(f"+    value_{k} = compute({k})\n" for k in range(lines))
        parts.append(
            f"diff --git a/src/mod{f}.py b/src/mod{f}.py\n"
            f"index 1a2b3c{f}..4d5e6f{f} 100644\n"
            f"--- a/src/mod{f}.py\n+++ b/src/mod{f}.py\n"
            f"@@ -10,6 +10,{6 + lines} @@ def handler(request):\n"
            "     data = load(request)\n     check(data)\n"
            f"{body}"
            "     return data\n"
        )
    return "".join(parts)


def test_diff_keeps_every_file_and_hunk_header(tokens: TokenCounter) -> None:
    diff = _diff(12, 60)
    after, stash, _ = _run(diff, "git diff", tokens)
    _assert_sound(diff, after, stash)
    for f in range(12):
        assert f"diff --git a/src/mod{f}.py b/src/mod{f}.py" in after
        assert f"--- a/src/mod{f}.py\n+++ b/src/mod{f}.py" in after
    assert after.count("@@ -10,6 +10,66 @@ def handler(request):") == 12
    # every added line stays in sight: in the first file as written, in the eleven files that
    # add the same lines as a repeat of those
    assert "".join(f"+    value_{k} = compute({k})\n" for k in range(60)) in after
    assert after.count("60 repeated lines omitted (shown above)") == 11
    assert tokens.count(after) < tokens.count(diff) / 2


def _modified(path: str, changes: int, context: int) -> str:
    removed = "".join(f"-    old_{path}_{k} = legacy({k})\n" for k in range(changes))
    added = "".join(f"+    new_{path}_{k} = compute({k}, strict=True)\n" for k in range(changes))
    around = "".join(f"     keep_{path}_{k} = 0\n" for k in range(context))
    return (
        f"diff --git a/{path} b/{path}\nindex 1a2b3c4..4d5e6f7 100644\n"
        f"--- a/{path}\n+++ b/{path}\n"
        f"@@ -10,{2 * context + changes} +10,{2 * context + changes} @@ def handler():\n"
        f"{around}{removed}{added}{around}"
    )


def test_diff_keeps_every_changed_line_of_a_modified_file(tokens: TokenCounter) -> None:
    new_file = "".join(f"+generated line {k} of a new fixture\n" for k in range(80))
    diff = (
        _modified("src/a.py", 30, 20)
        + "diff --git a/tests/fixture.txt b/tests/fixture.txt\nnew file mode 100644\n"
        "index 0000000..1a2b3c4\n--- /dev/null\n+++ b/tests/fixture.txt\n"
        f"@@ -0,0 +1,80 @@\n{new_file}" + _modified("package-lock.json", 40, 0)
    )
    after, stash, _ = _run(diff, "git diff", tokens)
    _assert_sound(diff, after, stash)
    for k in range(30):  # a modified file: every removed and added line, in order
        assert f"-    old_src/a.py_{k} = legacy({k})\n" in after
        assert f"+    new_src/a.py_{k} = compute({k}, strict=True)\n" in after
    assert "     keep_src/a.py_19 = 0\n" not in after  # its context lines past the head go
    assert "+generated line 79 of a new fixture" not in after  # a new file's body: its head
    assert "+generated line 0 of a new fixture" in after
    assert "new_package-lock.json_39" not in after  # a lock file's changes: their head
    assert "more lines of this hunk omitted (+" in after
    assert "(+0 -0)" not in after  # context lines alone: no zero counts


def test_diff_detected_from_output_without_command(tokens: TokenCounter) -> None:
    diff = _diff(3, 80)
    after, stash, details = _run(diff, None, tokens, tool=None)
    assert details["filters_hit"] == {"git-diff": 1}
    _assert_sound(diff, after, stash)


GCC_OUT = (
    "gcc -O2 -Wall -c src/parse.c -o build/parse.o\n"
    "src/parse.c: In function 'parse_header':\n"
    "src/parse.c:41:17: warning: unused variable 'len' [-Wunused-variable]\n"
    "   41 |     size_t len = 0;\n"
    "      |            ^~~\n"
    "src/parse.c:57:12: error: 'hdr' undeclared (first use in this function)\n"
    "   57 |     return hdr->size;\n"
    "      |            ^~~\n"
)


def test_make_keeps_compiler_findings_with_their_caret(tokens: TokenCounter) -> None:
    noise = "".join(
        f"make[2]: Entering directory '/src/lib{i}'\n"
        f"gcc -O2 -Wall -fPIC -Iinclude -c src/lib{i}/a.c -o build/lib{i}/a.o\n"
        f"make[2]: Leaving directory '/src/lib{i}'\n"
        for i in range(40)
    )
    text = noise + GCC_OUT + "make: *** [Makefile:12: build/parse.o] Error 1\n"
    after, stash, _ = _run(text, "make -j4 all 2>&1 | tee build.log", tokens)
    _assert_sound(text, after, stash)
    for line in GCC_OUT.splitlines()[1:]:
        assert line in after
    assert "make: *** [Makefile:12: build/parse.o] Error 1" in after
    assert tokens.count(after) < tokens.count(text) / 2


def test_grep_keeps_every_matched_file() -> None:
    lines = []
    for f in range(25):
        for k in range(30):
            lines.append(f"src/pkg{f}/handlers:    result = dispatch(event_{k})")
    text = "\n".join(lines) + "\n"
    after, stash, _ = _run(text, "grep -r dispatch src")
    _assert_sound(text, after, stash)
    for f in range(25):
        assert f"src/pkg{f}/handlers:    result = dispatch(event_0)" in after
    assert "28 more matches in src/pkg3/handlers omitted" in after


def test_generic_log_keeps_distinct_errors_and_collapses_repeats(tokens: TokenCounter) -> None:
    lines = []
    for i in range(400):
        lines.append(f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}Z INFO worker heartbeat ok seq={i}")
        if i % 50 == 7:
            lines.append("2024-05-01T10:00:00Z ERROR upstream refused connection: db-1:5432")
    lines.append("2024-05-01T10:07:00Z WARN disk usage 91% on /var")
    text = "\n".join(lines)
    after, stash, details = _run(text, "some-daemon --verbose", tokens)
    assert details["filters_hit"] == {"generic": 1}
    _assert_sound(text, after, stash)
    assert after.count("ERROR upstream refused connection: db-1:5432") == 1
    assert "WARN disk usage 91% on /var" in after
    assert tokens.count(after) < tokens.count(text) / 5


def test_table_keeps_header_and_error_rows_with_row_count() -> None:
    header = "  UNIT                      LOAD   ACTIVE SUB     DESCRIPTION"
    rows = [f"  svc-{i:03d}.service          loaded active running Service {i}" for i in range(200)]
    rows[120] = "● svc-120.service          loaded failed failed  Service 120"
    text = "\n".join(
        [header, *rows, "", "LOAD   = Reflects whether the unit definition was properly loaded."]
    )
    after, stash, _ = _run(text, "systemctl list-units")
    _assert_sound(text, after, stash)
    assert after.startswith(header + "\n")
    assert "● svc-120.service          loaded failed failed  Service 120" in after
    assert re.search(r"… \d+ of 200 rows omitted <<cx:", after)


def test_plain_file_reads_are_never_filtered() -> None:
    text = "\n".join(f"def f{i}():\n    return {i}\n" for i in range(300))
    for command in ("cat src/big.py", "head -n 400 src/big.py", "cd src && cat big.py"):
        after, _, _ = _run(text, command)
        assert after == text, command
    after, _, _ = _run(text, None, tool="read_file")
    assert after == text


# --- markers ---------------------------------------------------------------------------


def test_one_marker_per_dropped_run_with_words_and_counts(tokens: TokenCounter) -> None:
    after, stash, _ = _run(PYTEST_OUT, "pytest", tokens)
    markers = MARKER.findall(after)
    assert markers and len(markers) == len(stash)
    for note, key in markers:
        assert re.search(r"\d+ (?:[\w ]+ )?(?:lines|rows|more|tests|frames)\b", note), note
        assert key in stash
        # each marker sits alone on its line
        assert re.search(rf"(?m)^… [^\n]*<<cx:{key}>>$", after)


def test_crlf_and_trailing_newline_are_restored_exactly() -> None:
    text = "".join(f"2024-01-01 INFO step {i} done\r\n" for i in range(300)) + "ERROR boom\r\n"
    after, stash, _ = _run(text, "deploy.sh")
    assert after != text
    _assert_sound(text, after, stash)
    assert after.endswith("ERROR boom\r\n")


def test_long_lines_are_capped_not_lost() -> None:
    text = "\n".join(
        ["build started", "classpath=" + ";".join(f"/opt/lib/jar{i}.jar" for i in range(3000))]
        + [f"step {i}" for i in range(5)]
    )
    after, stash, _ = _run(text, "ant build")
    _assert_sound(text, after, stash)
    assert len(after) < len(text) / 10


# --- hostile input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a" * 5_000_000,
        ("x" * 10_000 + "\n") * 300,
        "\n" * 200_000,
        "ü€𝄞\u2028\u0085 error \r\x0b\x0c" * 20_000,
        "".join(f"{i}: a a a a a a a a : : : : ---- \n" for i in range(200_000)),
    ],
    ids=["one-5MB-line", "long-lines", "blank-lines", "unicode-breaks", "many-lines"],
)
@pytest.mark.slow
def test_hostile_input_is_linear_and_exact(text: str, tokens: TokenCounter) -> None:
    started = time.perf_counter()
    after, stash, _ = _run(text, "cmd", tokens)
    assert time.perf_counter() - started < 10
    assert _expand(after, stash) == text


# --- command detection -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("pytest -x tests/", "pytest"),
        ("cd app && python3 -m pytest -q 2>&1 | tail -50", "pytest"),
        ("FOO=1 sudo -E uv run pytest", "pytest"),
        ("git -C repo --no-pager diff HEAD~1", "git-diff"),
        ("git show abc123", "git-diff"),
        ("git show HEAD:src/app.py", None),
        ("curl -s https://example.org/docs", None),
        ("git log --oneline -20", "git-log"),
        ("git log -p -3", "git-diff"),
        ("git status --short", "git-status"),
        ("npx jest --ci", "jest"),
        ("pnpm exec vitest run", "vitest"),
        ("go test ./... -v", "go-test"),
        ("cargo test --all", "cargo"),
        ("npx tsc --noEmit", "tsc"),
        ("./node_modules/.bin/eslint src", "eslint"),
        ("ruff check .", "ruff"),
        ("mypy --strict workers", "mypy"),
        ("flake8 src", "flake8"),
        ("clang -c a.c", "gcc"),
        ("make -k all 2>&1 | tee build.log", "make"),
        ("pip install -r requirements.txt", "pip"),
        ("npm ci", "npm"),
        ("pnpm install", "pnpm"),
        ("yarn install --frozen-lockfile", "yarn"),
        ("uv sync", "uv"),
        ("sudo apt-get install -y curl", "apt"),
        ("docker build -t app .", "docker-build"),
        ("docker logs web --tail 200", "container-logs"),
        ("kubectl get pods -A", "kubectl"),
        ("kubectl -n prod logs deploy/api", "container-logs"),
        ("terraform plan -out plan.tfplan", "terraform"),
        ("ls -la /etc", "ls"),
        ("find . -name '*.py'", "find"),
        ("du -sh *", "du"),
        ("ps aux | grep nginx", "ps"),
        ("df -h", "df"),
        ("rg -n 'TODO|FIXME' src", "grep"),
        ("cat build.log | grep -i error", "grep"),
        ("tail -n 500 /var/log/syslog", "logfile"),
    ],
)
def test_command_selects_filter(command: str, name: str | None) -> None:
    filt = builtin_filters().select(command, "bash", "some output\n" * 50)
    assert (filt.name if filt else None) == name, command


def test_command_segments_normalise_wrappers_and_quotes() -> None:
    assert command_segments("cd /x && FOO='a b' sudo -u me time npx jest 'a|b' | tee o") == (
        "cd /x",
        "jest 'a|b'",
        "tee o",
    )
    assert command_segments("python3 -m pytest 2>&1 | tail") == ("pytest 2>&1", "tail")
    assert command_segments("/usr/local/bin/git -c core.pager=cat log") == ("git log",)


# --- user filters and regex safety --------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("(a+)+$", "nested quantifiers"),
        ("(?:\\w+\\s?)*x", "nested quantifiers"),
        ("(a|aa)*b", "alternation inside an unbounded repeat"),
        ("(\\w+)\\1", "backreferences"),
        ("foo(?=bar)", "lookaround"),
        ("(?<!x)y", "lookaround"),
        ("a" * 600, "longer than"),
        ("(unclosed", "invalid regex"),
        (".*.*.*.*x", "too slow"),
    ],
)
def test_dangerous_patterns_are_rejected(pattern: str, reason: str) -> None:
    found = check_pattern(pattern)
    assert found is not None and reason in found, found


def test_user_filter_with_bad_regex_names_file_and_pattern(tmp_path: Path) -> None:
    bad = tmp_path / "evil.json"
    bad.write_text(
        orjson.dumps({"name": "evil", "match": {"command": ["evil"]}, "drop": ["(x+)+y"]}).decode()
    )
    with pytest.raises(FilterError) as info:
        load_file(bad)
    message = str(info.value)
    assert str(bad) in message and "(x+)+y" in message and "nested quantifiers" in message


def test_user_filters_dir_toml_overrides_and_adds(tmp_path: Path, tokens: TokenCounter) -> None:
    (tmp_path / "deploy.toml").write_text(
        'name = "deploy"\n'
        "priority = 90\n"
        "head = 2\n"
        "tail = 1\n"
        '[match]\ncommand = ["deploy\\\\.sh\\\\b"]\n'
        '[[drop]]\npattern = "^uploading "\nlabel = "uploads"\n'
    )
    clear_cache()
    try:
        text = "start\n" + "".join(f"uploading chunk {i}\n" for i in range(100)) + "done\n"
        filters = load_filter_set(str(tmp_path))
        after, stash, details = _run(text, "./deploy.sh prod", tokens, filters=filters)
        assert details["filters_hit"] == {"deploy": 1}
        assert "100 lines omitted (all uploads)" in after
        _assert_sound(text, after, stash)
    finally:
        clear_cache()


def test_project_filters_only_when_trusted(tmp_path: Path) -> None:
    project = tmp_path / ".ctxpress" / "filters"
    project.mkdir(parents=True)
    (project / "mytool.json").write_text(
        orjson.dumps(
            {"name": "mytool", "priority": 90, "match": {"command": ["mytool\\b"]}}
        ).decode()
    )
    clear_cache()
    try:
        untrusted = load_filter_set(project_dir=str(tmp_path))
        assert "mytool" not in untrusted.by_name
        assert untrusted is builtin_filters()
        trusted = load_filter_set(trust_project=True, project_dir=str(tmp_path))
        assert "mytool" in trusted.by_name
        assert trusted.select("mytool --all", "bash", "x\n" * 50) is trusted.by_name["mytool"]
    finally:
        clear_cache()


# --- the corpus --------------------------------------------------------------------------


# (outputs changed, saved, saved on non-JSON outputs); measured: generated 27, 11.9-15.6%, 26.0%
# (its git records follow the repository's history, so they vary by checkout);
# shared 52, 39.8%, 70.9%
CORPUS_FLOORS = {"generated": (20, 0.08, 0.15), "shared": (40, 0.35, 0.6)}


@pytest.mark.slow
def test_corpus_expand_exact_and_every_critical_line_visible(
    corpus: Corpus, corpus_lines: list[bytes], tokens: TokenCounter
) -> None:
    """Only this engine, over every tool output of the corpus: expand is exact, and every
    critical line stays visible (one of an error line's shape, as the gate counts it).

    Prints the savings (``pytest tests/unit/test_toolfilter.py -k corpus -s``).
    """
    engine = ToolFilterEngine()
    ctx = EngineContext(tokens=tokens)
    before_total = after_total = text_before = text_after = changed = nbytes = 0
    seconds = 0.0
    problems: list[str] = []
    for raw in corpus_lines:
        record = parse_record(orjson.loads(raw))
        for unit in record.units:
            if unit.kind != "tool_result":
                continue
            started = time.perf_counter()
            out = engine.apply([unit], ctx)
            seconds += time.perf_counter() - started
            nbytes += len(unit.text.encode())
            after = out.texts[0]
            b, a = tokens.count(unit.text), tokens.count(after)
            before_total += b
            after_total += a
            try:
                orjson.loads(unit.text)
            except orjson.JSONDecodeError:
                text_before += b
                text_after += a
            if after == unit.text:
                continue
            changed += 1
            if _expand(after, out.stash) != unit.text:
                problems.append(f"{record.record_id}/{unit.uid}: expand differs")
            visible = {line.strip()[:600] for line in after.splitlines()}
            shapes: set[str] | None = None
            for kind, line in critical_lines(unit.text, "tool_result"):
                if line in visible or line in after:
                    continue
                if kind in SHAPED_KINDS:  # one visible line of its shape, as the gate counts
                    if shapes is None:
                        shapes = {line_shape(v) for v in visible}
                    if line_shape(line) in shapes:
                        continue
                problems.append(f"{record.record_id}/{unit.uid}: {kind} lost: {line[:100]}")
    assert not problems, problems[:10]
    saved = 1 - after_total / before_total
    print(
        f"\ntoolfilter alone on the corpus: tool-output tokens {before_total} -> {after_total} "
        f"({saved:.1%} saved); non-JSON tool outputs {text_before} -> {text_after} "
        f"({1 - text_after / text_before:.1%} saved); {changed} outputs changed; "
        f"{nbytes / 1e6 / seconds:.1f} MB/s"
    )
    min_changed, min_saved, min_text_saved = CORPUS_FLOORS[corpus.name]
    assert changed >= min_changed
    assert saved >= min_saved, f"toolfilter saved only {saved:.1%} of {corpus.name} tool outputs"
    assert 1 - text_after / text_before >= min_text_saved


# --- facts the gate does not see (yet) but the filters keep ---------------------------


def test_jest_failing_test_names_stay_even_without_error_words(tokens: TokenCounter) -> None:
    passing = "".join(f"    ✓ renders row {i} (3 ms)\n" for i in range(80))
    text = (
        "FAIL src/table.test.tsx\n  Table\n" + passing + "    ✕ sorts by date (12 ms)\n"
        "\nTests:       1 failed, 80 passed, 81 total\n"
    )
    after, stash, _ = _run(text, "npx jest", tokens)
    _assert_sound(text, after, stash)
    assert "    ✕ sorts by date (12 ms)" in after
    assert "80 lines omitted (all passing tests)" in after


def test_coloured_diff_headers_stay(tokens: TokenCounter) -> None:
    body = "".join(f"\x1b[32m+line {k} of new code\x1b[m\n" for k in range(40))
    text = "".join(
        f"\x1b[1mdiff --git a/f{i}.txt b/f{i}.txt\x1b[m\n\x1b[1m--- a/f{i}.txt\x1b[m\n"
        f"\x1b[1m+++ b/f{i}.txt\x1b[m\n\x1b[36m@@ -1,0 +1,40 @@\x1b[m\n{body}"
        for i in range(5)
    )
    after, stash, _ = _run(text, "git diff --color", tokens)
    _assert_sound(text, after, stash)
    for i in range(5):
        assert f"\x1b[1mdiff --git a/f{i}.txt b/f{i}.txt\x1b[m" in after
        assert f"\x1b[1m+++ b/f{i}.txt\x1b[m" in after
    assert after.count("\x1b[36m@@ -1,0 +1,40 @@\x1b[m") == 5


def test_short_git_status_keeps_every_path() -> None:
    text = "## main...origin/main [ahead 1]\n" + "".join(
        f"{code} src/module_{i:03d}.py\n"
        for i, code in enumerate([" M", "M ", "??", "A ", " D"] * 30)
    )
    after, stash, _ = _run(text, "git status -s")
    assert after == text or _expand(after, stash) == text
    for line in text.splitlines():
        assert line in after


# --- filter file validation ------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"name": "x", "match": {"command": ["x"]}, "frobnicate": 1}, "unknown key"),
        ({"name": "Bad Name", "match": {"command": ["x"]}}, "'name' must match"),
        ({"name": "x", "match": {}}, "at least one"),
        ({"name": "x", "match": {"command": ["x"]}, "head": -1}, "head must be"),
        (
            {
                "name": "x",
                "match": {"command": ["x"]},
                "drop": [{"pattern": "a", "note": "{n} {oops}"}],
            },
            "unknown note field",
        ),
        ({"name": "x", "match": {"command": ["x"]}, "group": {"key": "^\\S+"}}, "capture group"),
        ({"name": "x", "match": {"command": ["x"]}, "keep": ["(?P<n>a)"]}, "named groups"),
        ({"name": "x", "match": {"command": ["x"]}, "keep": ["(?s)a.b"]}, "inline flags"),
    ],
)
def test_filter_file_errors_are_clear(tmp_path: Path, doc: dict[str, object], message: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(orjson.dumps(doc).decode())
    with pytest.raises(FilterError) as info:
        load_file(path, probe=False)
    assert message in str(info.value) and str(path) in str(info.value)


def test_bad_user_filter_makes_the_pipeline_fail_when_built(tmp_path: Path) -> None:
    (tmp_path / "evil.json").write_text(
        orjson.dumps({"name": "evil", "match": {"command": ["x"]}, "keep": ["(a*)*b"]}).decode()
    )
    clear_cache()
    try:
        with pytest.raises(FilterError, match=r"evil\.json"):
            Pipeline(Settings(filters_dir=str(tmp_path)))
    finally:
        clear_cache()


def test_the_pipeline_hands_its_filter_set_to_the_engine(tmp_path: Path) -> None:
    (tmp_path / "deploy.json").write_text(
        orjson.dumps(
            {"name": "deploy", "priority": 90, "head": 2, "tail": 1,
             "match": {"command": ["deploy\\.sh\\b"]}, "drop": ["^uploading "]}
        ).decode()
    )  # fmt: skip
    clear_cache()
    try:
        with_user = Pipeline(Settings(mode="standard", filters_dir=str(tmp_path)))
        assert with_user._filters is load_filter_set(str(tmp_path))
        assert "deploy" in with_user._filters.by_name
        assert Pipeline(Settings())._filters is None  # the engine takes builtin_filters()
        text = "start\n" + "".join(f"uploading chunk {i}\n" for i in range(100)) + "done\n"
        record = tool_output_record("r1", text, command="./deploy.sh prod")
        stats = {s.engine: s for s in with_user.run_raw(record).engine_stats}
        assert stats["toolfilter"].details["filters_hit"] == {"deploy": 1}
        builtin = Pipeline(Settings(mode="standard")).run_raw(record)
        stats = {s.engine: s for s in builtin.engine_stats}
        assert "deploy" not in stats["toolfilter"].details.get("filters_hit", {})
    finally:
        clear_cache()


def test_apply_reads_no_file_and_spawns_nothing(
    tmp_path: Path, tokens: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "deploy.toml").write_text(
        'name = "deploy"\nhead = 1\ntail = 1\n[match]\ncommand = ["deploy\\\\.sh\\\\b"]\n'
    )
    clear_cache()
    try:
        filters = load_filter_set(str(tmp_path))
        clear_cache()  # the engine cannot find the user set again: it must use the one given
        builtin = builtin_filters()  # loaded before the file system goes away
        text = "".join(f"step {i} done in {i % 7} ms\n" for i in range(200))
        tokens.count(text)

        def forbidden(*args: object, **kwargs: object) -> None:
            raise AssertionError("the engine touched the file system or spawned a process")

        for name in ("open", "read_bytes", "read_text", "iterdir", "stat", "is_dir"):
            monkeypatch.setattr(Path, name, forbidden)
        monkeypatch.setattr(subprocess, "run", forbidden)
        monkeypatch.setattr(subprocess, "Popen", forbidden)
        monkeypatch.setattr("builtins.open", forbidden)
        _, _, details = _run(text, "./deploy.sh", tokens, filters=filters)
        assert details["filters_hit"] == {"deploy": 1}
        _, _, details = _run(text, "make all", tokens)  # ctx.filters None: the built-in set
        assert details["filters_hit"] == {"make": 1} and builtin_filters() is builtin
    finally:
        monkeypatch.undo()
        clear_cache()


def test_fenced_code_blocks_stay_whole(tokens: TokenCounter) -> None:
    code = "```python\n" + "".join(f"x_{i} = compute({i})\n" for i in range(80)) + "```\n"
    text = "".join(f"step {i} ok\n" for i in range(60)) + code + "done\n"
    after, stash, _ = _run(text, "some-tool --report", tokens)
    _assert_sound(text, after, stash)
    assert code in after


def test_long_line_cap_never_splits_a_url() -> None:
    url = "https://example.org/" + "a" * 300 + "/file.tar.gz"
    line = "x" * 200 + " " + url + " " + "y" * 2000
    text = "\n".join(["start", line, *[f"row {i}" for i in range(5)]])
    after, stash, _ = _run(text, "some-tool")
    assert after != text  # the long line was capped
    _assert_sound(text, after, stash)
    assert url in after or any(url in v for v in stash.values())


def test_verify_filter_runs_a_user_filters_samples(tmp_path: Path, tokens: TokenCounter) -> None:
    text = "start\n" + "".join(f"uploading chunk {i}\n" for i in range(50)) + "done\n"
    doc = {
        "name": "deploy",
        "priority": 90,
        "head": 2,
        "tail": 1,
        "match": {"command": ["deploy\\.sh\\b"]},
        "drop": [{"pattern": "^uploading ", "label": "uploads"}],
        "verify": [
            {
                "command": "./deploy.sh",
                "input": text,
                "expected": "start\n… 50 lines omitted (all uploads) <<cx:*>>\ndone\n",
            },
            {"command": "./deploy.sh", "input": text, "expected": text},
        ],
    }
    (tmp_path / "deploy.json").write_text(orjson.dumps(doc).decode())
    clear_cache()
    try:
        filt = load_file(tmp_path / "deploy.json")
        failures = verify_filter(filt, tokens, load_filter_set(str(tmp_path)))
        assert len(failures) == 1 and "verify[1]" in failures[0]
    finally:
        clear_cache()


def test_grep_files_with_matches_keeps_every_file() -> None:
    text = "".join(f"src/pkg{i // 10}/module_{i}.py\n" for i in range(120))
    after, _, _ = _run(text, "rg -l TODO src")
    assert after == text
