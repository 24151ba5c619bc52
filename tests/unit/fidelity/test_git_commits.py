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
