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
