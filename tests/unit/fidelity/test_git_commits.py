"""A git log's commit ids are facts: aging keeps them in an older log (held-out set 5)."""

from __future__ import annotations

from workers.fidelity.facts import critical_lines


def test_every_commit_id_of_a_log_is_critical() -> None:
    log = (
        "commit 782d22417f776f4e4fd05782c9c9d6bd2942b3fc\nAuthor: A <a@x>\n\n    fix pallets\n\n"
        "commit b481383710008e735b216d336f4732b9c01e74db\nAuthor: A <a@x>\n\n    add routing\n"
    )
    assert {
        line for kind, line in critical_lines(log, "tool_result", "git log") if kind == "commit"
    } == {
        "commit 782d22417f776f4e4fd05782c9c9d6bd2942b3fc",
        "commit b481383710008e735b216d336f4732b9c01e74db",
    }


def test_every_id_of_a_oneline_log_is_critical() -> None:
    log = (
        "* 4d8a4d6 (HEAD -> main) Fix pallets rounding\n"
        "| * a0e3378 Add routing\n"
        "|/  \n"
        "*   b56ff64 Merge branch 'routing'\n"
        "    abcdef12 is no commit: a body line\n"
    )
    commits = {
        line
        for kind, line in critical_lines(log, "tool_result", "git log --oneline --graph")
        if kind == "commit"
    }
    assert commits == {
        "* 4d8a4d6 (HEAD -> main) Fix pallets rounding",
        "| * a0e3378 Add routing",
        "*   b56ff64 Merge branch 'routing'",
    }
    assert not critical_lines(log, "tool_result", "cat notes.txt")


def test_a_stat_summary_is_a_fact_of_any_command() -> None:
    text = (
        " warehouse/routing.py | 6 ++++--\n"
        " 1 file changed, 4 insertions(+), 2 deletions(-)\n"
        " 3 files changed, 12 insertions(+)\n"
        " 2 files changed, 9 deletions(-)\n"
        " 10 files changed in the last release notes\n"
    )
    for command in ("git show --stat HEAD", "git diff --stat", "./release.sh"):
        found = {(kind, line) for kind, line in critical_lines(text, "tool_result", command)}
        assert found == {
            ("stat_summary", "1 file changed, 4 insertions(+), 2 deletions(-)"),
            ("stat_summary", "3 files changed, 12 insertions(+)"),
            ("stat_summary", "2 files changed, 9 deletions(-)"),
        }


def test_a_score_and_a_tree_count_are_summaries() -> None:
    text = (
        "------------------------------------------------------------------\n"
        "Your code has been rated at 8.86/10 (previous run: 8.80/10, +0.06)\n"
        "\n"
        "33 directories, 201 files\n"
        "3 directories of logs\n"
    )
    found = set(critical_lines(text, "tool_result", "pylint requests"))
    assert found == {
        ("test_summary", "Your code has been rated at 8.86/10 (previous run: 8.80/10, +0.06)"),
        ("test_summary", "33 directories, 201 files"),
    }
