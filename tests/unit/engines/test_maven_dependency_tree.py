"""``mvn dependency:tree`` is run to see the tree: its lines stay.

Held-out set 26: the maven filter kept ``[ERROR]``/``[WARNING]`` lines and the build's
summary, and the whole tree went into ``… 67 lines omitted`` (``org.slf4j:slf4j-api:jar:2.0.12``
out of sight in a session about a dependency convergence failure).  The output here is written
in Maven 3.9's layout."""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output

TREE = [
    "[INFO] com.acme.ledger:ledger-web:jar:1.4.0-SNAPSHOT",
    "[INFO] +- com.acme.ledger:ledger-persistence:jar:1.4.0-SNAPSHOT:compile",
    "[INFO] |  +- com.acme.ledger:ledger-domain:jar:1.4.0-SNAPSHOT:compile",
    "[INFO] |  \\- org.slf4j:slf4j-api:jar:2.0.12:compile",
    "[INFO] +- ch.qos.logback:logback-classic:jar:1.4.14:compile",
    "[INFO] |  \\- ch.qos.logback:logback-core:jar:1.4.14:compile",
    "[INFO] \\- org.junit.jupiter:junit-jupiter:jar:5.10.2:test",
    "[INFO]    +- org.junit.jupiter:junit-jupiter-api:jar:5.10.2:test",
    "[INFO]    |  +- org.opentest4j:opentest4j:jar:1.3.0:test",
    "[INFO]    |  \\- org.apiguardian:apiguardian-api:jar:1.1.2:test",
    "[INFO]    \\- org.junit.jupiter:junit-jupiter-engine:jar:5.10.2:test",
]


def _output() -> str:
    out = ["[INFO] Scanning for projects..."]
    for k in range(30):  # the downloads and banners of a first run
        out.append(
            f"[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/x/a{k}/1.0/a{k}-1.0.pom (2.1 kB at 40 kB/s)"
        )
    out += [
        "[INFO] ",
        "[INFO] ---------------------< com.acme.ledger:ledger-web >---------------------",
        "[INFO] Building ledger :: web 1.4.0-SNAPSHOT                              [4/4]",
        "[INFO] --------------------------------[ jar ]---------------------------------",
        "[INFO] ",
        "[INFO] --- maven-dependency-plugin:3.8.1:tree (default-cli) @ ledger-web ---",
        *TREE,
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD SUCCESS",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Total time:  9.533 s",
    ]  # fmt: skip
    return "\n".join(out) + "\n"


def test_every_line_of_the_tree_stays() -> None:
    out, saved = compress_soundly(tool_output(_output(), "mvn -B dependency:tree"), "standard")
    shown = out.splitlines()
    for line in TREE:
        assert line in shown, line
    assert "[INFO] BUILD SUCCESS" in shown
    assert saved > 0.3  # the downloads go
