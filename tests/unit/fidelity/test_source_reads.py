"""A read of one source file is code, not a report: its error words are no findings."""

from __future__ import annotations

import pytest

from workers.fidelity.facts import command_family, critical_lines

CODE = (
    "def load(path):\n"
    "    try:\n"
    "        return parse(open(path).read())\n"
    "    except OSError as exc:\n"
    '        log.error("failed to read %s: %s", path, exc)\n'
    '        raise ConfigError(f"cannot load {path}") from exc\n'
)


@pytest.mark.parametrize(
    "command",
    [
        "cat src/app/config.py",
        "cat -n src/app/config.py",
        "sed -n '1,120p' src/main.rs",
        "head -n 80 cmd/server/main.go",
        "cd web && cat src/cart.ts",
        "/usr/bin/cat ./lib/Account.java",
        "tail -40 src/vec.c",
    ],
)
def test_a_read_of_one_source_file_holds_no_error_lines(command: str) -> None:
    assert command_family(command) == "source-read"
    assert critical_lines(CODE, "tool_result", command) == frozenset()


@pytest.mark.parametrize(
    "command",
    [
        "cat build.log",
        "tail -n 80 /var/log/app/server.log",
        "python src/app/config.py",
        "cat src/app/config.py | grep error",
        "sed 's/a/b/' src/app/config.py",
        "cat a.py && python a.py",
    ],
)
def test_other_commands_keep_the_report_rules(command: str) -> None:
    assert command_family(command) != "source-read"
    assert ("error_line", 'log.error("failed to read %s: %s", path, exc)') in critical_lines(
        CODE, "tool_result", command
    )


def test_a_failed_read_is_read_as_any_output() -> None:
    failed = "cat: src/app/config.py: Permission denied\nerror: could not open the file\n"
    assert critical_lines(failed, "tool_result", "cat src/app/config.py") == critical_lines(
        failed, "tool_result", None
    )
    assert critical_lines(failed, "tool_result", None)


def test_merge_conflict_markers_of_a_read_are_critical() -> None:
    text = "x = 1\n<<<<<<< HEAD\ny = 2\n=======\ny = 3\n>>>>>>> topic\n"
    assert {line for _, line in critical_lines(text, "tool_result", "cat a.py")} == {
        "<<<<<<< HEAD",
        "=======",
        ">>>>>>> topic",
    }
