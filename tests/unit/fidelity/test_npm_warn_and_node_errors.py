"""Facts aggressive mode had aged away on held-out set 36 (Express + jest).

- npm 10 and 11 write ``npm warn`` (npm 9 ``npm WARN``): the peer conflict behind ``--force``;
- the ``code: 'EADDRINUSE'`` node prints among an error's properties under its stack;
- autocannon's ``0 2xx responses, 2729 non 2xx responses``.
"""

from __future__ import annotations

from workers.fidelity.facts import critical_lines


def _found(text: str, command: str) -> dict[str, str]:
    return {line: kind for kind, line in critical_lines(text, "tool_result", command)}


def test_npm_warn_lines_node_error_codes_and_load_totals() -> None:
    text = (
        "npm warn Conflicting peer dependency: typescript@6.0.3\n"
        "    at emitErrorNT (node:net:1944:8) {\n  code: 'EADDRINUSE',\n  errno: -98,\n}\n"
        "0 2xx responses, 2729 non 2xx responses\n"
    )
    found = _found(text, "npm install -D ts-jest --force")
    assert found["npm warn Conflicting peer dependency: typescript@6.0.3"] == "error_line"
    assert found["code: 'EADDRINUSE',"] == "error_detail"
    assert found["0 2xx responses, 2729 non 2xx responses"] == "test_summary"
