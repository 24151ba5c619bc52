"""The shared-keys view of a JSON log (:mod:`workers.engines._jsonlogkeys`), for JSON lines as
any logger or user writes them (any spacing, escapes, unicode, big integers, ``1.50``, nested
values, empty arrays): the view's stash gives the input back byte for byte; every JSON line
of the view still loads; a shortened line holds exactly the input line's members less the
shared ones, with the same values as written; the first line and the lines that must stay
are unchanged."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core.tokens import TokenCounter
from workers.engines._jsonline import members
from workers.engines._jsonlogkeys import shared_keys_view
from workers.engines._text import expanded
from workers.markers.structured_view import HEADER_LINE, decode

_TOKENS = TokenCounter()

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from(["1.50", "0.0", "-2.5e10", "1E+3"]).map(lambda raw: json.loads(raw)),
    st.text(max_size=30),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
_separators = st.sampled_from([(",", ":"), (", ", ": "), (",", ": "), (" ,", " : ")])


def _line(members_: list[tuple[str, object]], separators: tuple[str, str], ascii_: bool) -> str:
    item, key = separators
    body = item.join(
        json.dumps(k, ensure_ascii=ascii_) + key + json.dumps(v, ensure_ascii=ascii_)
        for k, v in members_
    )
    return "{" + body + "}"


@st.composite
def _logs(draw: st.DrawFn) -> tuple[str, set[int]]:
    shared = draw(
        st.dictionaries(
            st.sampled_from(["service", "host", "ecs.version", "pid", "node", "env", "region"]),
            st.one_of(st.text(min_size=20, max_size=60), _values),
            min_size=2,
            max_size=5,
        )
    )
    ascii_ = draw(st.booleans())  # one logger, one way to write non-ASCII
    lines: list[str] = []
    stays: set[int] = set()
    for i in range(draw(st.integers(min_value=6, max_value=16))):
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "plain text line", "  indented", "[ok] done"])))
            continue
        own = draw(st.dictionaries(st.sampled_from(["ts", "msg", "n", "req", "x"]), _values))
        items = list({**own, **shared}.items())
        order = draw(st.permutations(range(len(items))))
        line = _line([items[k] for k in order], draw(_separators), ascii_)
        if draw(st.integers(0, 4)) == 0:
            stays.add(i)
        lines.append(line)
    end = draw(st.sampled_from(["\n", "\r\n"]))  # LF, or CRLF as Windows services write
    return end.join(lines) + draw(st.sampled_from(["", end])), stays


@settings(max_examples=300, deadline=None)
@given(_logs())
def test_the_view_restores_and_keeps_every_line_s_own_members(case: tuple[str, set[int]]) -> None:
    text, stays = case
    found = shared_keys_view(text, _TOKENS, lambda i, _line: i in stays)
    if found is None:
        return
    view, stash = found
    assert decode(expanded(view, stash)) == text
    assert _TOKENS.count(view) < _TOKENS.count(text)
    shown = view[: view.index(HEADER_LINE)].split("\n")
    lines = text.split("\n")
    json_lines = [i for i, line in enumerate(lines) if members(line.removesuffix("\r")) is not None]
    first = json_lines[0]
    assert shown[first] == lines[first]
    for i, line in enumerate(lines):
        if i >= len(shown):
            assert not line  # (trailing blank lines of the input)
            continue
        if i not in json_lines or i in stays:
            assert shown[i] == line
            continue
        before, after = json.loads(line), json.loads(shown[i])
        assert line.endswith("\r") == shown[i].endswith("\r")
        assert set(after) <= set(before)
        assert all(after[k] == before[k] for k in after)
        gone = set(before) - set(after)
        # a left-out member has the same value on every JSON line
        for k in gone:
            assert all(json.loads(lines[j]).get(k, object()) == before[k] for j in json_lines)


def test_an_elasticsearch_style_log_keeps_its_events_and_warnings() -> None:
    common = (
        '"ecs.version":"1.2.0","service.name":"ES_ECS","event.dataset":"elasticsearch.server",'
        '"elasticsearch.cluster.uuid":"kX3u9aQzR8ub0s1fJ9eWcg","elasticsearch.node.name":"es-data-1"'
    )
    lines = []
    for k in range(30):
        level = "WARN" if k % 10 == 7 else "INFO"
        lines.append(
            f'{{"@timestamp":"2026-11-30T04:00:{k:02d}.642Z","log.level":"{level}",'
            f'"message":"[orders][{k % 4}] bulk request of {1000 + k} items",{common}}}'
        )
    text = "\n".join(lines)
    found = shared_keys_view(text, _TOKENS, lambda _i, line: '"WARN"' in line)
    assert found is not None
    view, stash = found
    assert decode(expanded(view, stash)) == text
    for k, line in enumerate(lines):
        if k == 0 or '"WARN"' in line:
            assert line in view
        else:
            assert f'"message":"[orders][{k % 4}] bulk request of {1000 + k} items"}}' in view
    assert "ecs.version" in view.split(HEADER_LINE)[1]
    assert _TOKENS.count(view) < 0.6 * _TOKENS.count(text)


def test_too_little_shared_or_too_few_lines_gives_no_view() -> None:
    few = "\n".join(f'{{"ts":{k},"service":"billing-service-eu-west-1-prod"}}' for k in range(3))
    assert shared_keys_view(few, _TOKENS, lambda _i, _l: False) is None
    small = "\n".join(f'{{"ts":{k},"svc":"a"}}' for k in range(30))
    assert shared_keys_view(small, _TOKENS, lambda _i, _l: False) is None
