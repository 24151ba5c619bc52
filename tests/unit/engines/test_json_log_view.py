"""A JSON log whose lines repeat the same members (Elasticsearch's ECS log: the service, the
cluster, the node) is shown with those members once, in the first line (held-out set 8:
``tail -n 40 out/es-server.json``, 7,143 tokens, saved 9.4 % in standard).  Warning and error
lines stay whole, every event's own members stay on its line, and expand gives the log back."""

from __future__ import annotations

import json

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, openai_record

_SHARED = (
    '"ecs.version":"1.2.0","service.name":"ES_ECS","event.dataset":"elasticsearch.server",'
    '"elasticsearch.cluster.uuid":"kX3u9aQzR8ub0s1fJ9eWcg","elasticsearch.node.id":'
    '"Yd2pL4sWTy6cQ0cR8w3B2A","elasticsearch.node.name":"es-data-1"'
)
_MESSAGES = [
    "[orders-2026.11][2] merge segment [_2k] done: took [31.4s]",
    "[orders-2026.11][3] bulk request of {n} items",
    "[gc][{n}] overhead, spent [86ms] collecting in the last [1s]",
    'current.health=\\"GREEN\\" previous.health=\\"YELLOW\\"',
]


def _log() -> tuple[str, list[str]]:
    lines: list[str] = []
    loud: list[str] = []
    for k in range(40):
        level = "WARN" if k % 9 == 4 else "INFO"
        message = (
            "Authentication to realm file1 failed for svc_ingest"
            if level == "WARN"
            else _MESSAGES[k % 4].format(n=2400 + 13 * k)
        )
        line = (
            f'{{"@timestamp":"2026-11-30T04:00:{k:02d}.642Z","log.level":"{level}",'
            f'"message":"{message}",{_SHARED},"process.thread.name":"elasticsearch[T#{k % 7}]"}}'
        )
        lines.append(line)
        if level == "WARN":
            loud.append(line)
    return "\n".join(lines) + "\n", loud


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_shared_members_are_said_once(mode: str) -> None:
    text, loud = _log()
    data = openai_record(
        "es-1", ("user", "What happened to the cluster?"), ("tool", text),
        command="tail -n 40 logs/es-server.json",
    )  # fmt: skip
    outcome = Pipeline(Settings(mode=mode)).run_raw(json.loads(json.dumps(data)))
    visible = outcome.record["messages"][-1]["content"]
    for line in loud:
        assert line in visible
    assert text.split("\n")[0] in visible  # the first line shows the shared values
    assert expanded_record(outcome)["messages"][-1]["content"] == text
    counter = TokenCounter()
    assert counter.count(visible) < 0.6 * counter.count(text)
    if mode == "standard":
        body = visible.split("<<cx:view>>")[0]
        # the events stay on their lines (repeats of events shown above fold, as in any log:
        # each template's first line and every warning stay)
        assert body.count('"@timestamp":"2026-11-30T04:00:') >= 4 + len(loud)
        assert "lines repeating events shown above" in body
        assert body.count('"ecs.version":"1.2.0"') == 1 + len(loud)
