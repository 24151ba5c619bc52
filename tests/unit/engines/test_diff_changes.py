"""A diff's changes stay in sight; the tool filter reads critical lines as the gate does.

Held-out set 32 (a Rust workspace): ``git diff HEAD~6 HEAD`` folded each long hunk's tail as
``… 74 more lines of this hunk omitted (+44 -10)``, the line that turned a 500 into a 404
among them.  A modified file's added and removed lines now stay (its context lines past the
hunk's head, and a new, deleted or lock file's body, may go).  Held-out set 34 (Ruby):
``git log -p --format='%h %an %ad %s'`` had its second commit line folded into the hunk
above and the gate rejected the whole message (the filter read the output's critical lines
without the command, so without ``git log``'s one-line commits).
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output


def _new_file(path: str, lines: int) -> str:
    body = "".join(f"+  line {k} of {path}\n" for k in range(lines))
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..b009901\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{lines} @@\n{body}"
    )


def test_one_line_commits_of_git_log_p_stay() -> None:
    log = (
        "d05b68d Lukas Brenner 2024-03-07 Parser for semicolon feeds\n\n"
        + _new_file("lib/inventory/parser.rb", 40)
        + "968b562 Dana Okafor 2024-03-05 Cart: lines, subtotal, coupons (INV-198)\n\n"
        + _new_file("lib/inventory/cart.rb", 55)
    )
    out, saved = compress_soundly(
        tool_output(log, "git log -p -2 --format='%h %an %ad %s' --date=short -- lib"), "standard"
    )
    assert "968b562 Dana Okafor 2024-03-05 Cart: lines, subtotal, coupons (INV-198)" in out
    assert saved > 0.4


def test_a_modified_files_changes_stay_past_the_hunk_head() -> None:
    context = "".join(f"     let ctx_{k} = {k};\n" for k in range(3))
    removed = "".join(
        f"-    Err(e) => Response::text(500, &e.to_string()), // {k}\n" for k in range(8)
    )
    added = "".join(
        f"+    Err(e @ LedgerError::NotFound(_)) => Response::text(404, &e.to_string()), // {k}\n"
        for k in range(40)
    )
    hunk = f"@@ -90,14 +90,46 @@ fn route(req: &Request) -> Response {{\n{context}{removed}{added}{context}"
    diff = (
        "diff --git a/src/main.rs b/src/main.rs\nindex 09cc84b..eaf506e 100644\n"
        "--- a/src/main.rs\n+++ b/src/main.rs\n" + hunk + _new_file("src/fixtures.rs", 200)
    )
    out, saved = compress_soundly(tool_output(diff, "git diff HEAD~6 HEAD"), "standard")
    assert removed + added in out
    assert "+  line 199 of src/fixtures.rs" not in out  # a new file's body: its head
    assert saved > 0.3


def test_context_lines_that_declare_a_function_are_found() -> None:
    # aging keeps them in an aged diff (held-out set 32: ``pub fn format_minor`` had gone)
    from workers.engines._diff import declaring_context_rows

    lines = [
        "@@ -84,7 +84,7 @@ impl Ledger {",
        ' /// assert_eq!(format_minor(1234), "12.34");',
        '-/// assert_eq!(format_minor(5), "0.5");',
        '+/// assert_eq!(format_minor(5), "0.05");',
        " pub fn format_minor(units: u64) -> String {",
        "     let whole = units / 100;",
        "     def helper(): pass",
    ]
    assert list(declaring_context_rows(lines)) == [4, 6]
