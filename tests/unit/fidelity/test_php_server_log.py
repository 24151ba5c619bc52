"""PHP's built-in server log: a 500's request line, an uncaught exception's first frame and
where it was thrown are facts.

Held-out set 34 (``php -S`` under a curl loop): ``[500]: GET /accounts/acc-1003/balance``
lines were stashed with the 200s (no status form the gate knew), and the first fatal error's
``Stack trace:`` went as ``… 4 lines omitted``: its ``#0 .../index.php(26): ...`` frame and
``thrown in .../Ledger.php on line 22`` with it.
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

STAMP = "[Mon Dec  7 23:00:35 2026]"
FATAL = (
    f"{STAMP} PHP Fatal error:  Uncaught TypeError: Ledger\\Ledger::get(): Return value must be"
    " of type Ledger\\Account, null returned in /srv/ledger/src/Ledger.php:22\n"
    "Stack trace:\n#0 /srv/ledger/public/index.php(26): Ledger\\Ledger->get()\n#1 {main}\n"
    "  thrown in /srv/ledger/src/Ledger.php on line 22\n"
)


def _log() -> str:
    out = [f"{STAMP} PHP 8.2.36 Development Server (http://127.0.0.1:8080) started\n"]
    for k in range(300):
        port = 51000 + k
        out.append(f"{STAMP} 127.0.0.1:{port} Accepted\n")
        if k % 50 == 7:
            out.append(FATAL)
            out.append(f"{STAMP} 127.0.0.1:{port} [500]: GET /accounts/acc-{1000 + k}/balance\n")
        else:
            out.append(f"{STAMP} 127.0.0.1:{port} [200]: GET /accounts/acc-1001/balance\n")
        out.append(f"{STAMP} 127.0.0.1:{port} Closing\n")
    return "".join(out)


def test_the_gate_reads_php_facts() -> None:
    found = {line for _, line in critical_lines(_log(), "tool_result", "cat var/soak.log")}
    assert "#0 /srv/ledger/public/index.php(26): Ledger\\Ledger->get()" in found
    assert "thrown in /srv/ledger/src/Ledger.php on line 22" in found
    assert f"{STAMP} 127.0.0.1:51007 [500]: GET /accounts/acc-1007/balance" in found


def test_a_php_server_log_keeps_its_500s_and_the_first_frame() -> None:
    out, saved = compress_soundly(tool_output(_log(), "cat var/soak.log"), "standard")
    shown = out.splitlines()
    for k in range(7, 300, 50):
        assert f"{STAMP} 127.0.0.1:{51000 + k} [500]: GET /accounts/acc-{1000 + k}/balance" in shown
    assert "#0 /srv/ledger/public/index.php(26): Ledger\\Ledger->get()" in shown
    assert "  thrown in /srv/ledger/src/Ledger.php on line 22" in shown
    assert saved > 0.7
