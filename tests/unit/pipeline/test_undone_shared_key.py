"""A lossy change to a text a back-reference points at is accepted when expanding its own
stash gives the text back, also when an earlier engine stashed the same lines under the same
key (one text, one key) and its marker is in the text already."""

from __future__ import annotations

from workers.core.offload import stash_key
from workers.markers.stash import stash_marker
from workers.pipeline.runner import _undone

RUN = "    at Test.run (node:internal/test_runner/test:796:25)\n    at Test.postRun (node:internal/test_runner/test:889:19)"
KEY = stash_key(RUN)
MARKER = f"… 2 lines omitted <<cx:{KEY}>>"


def test_an_earlier_marker_with_the_same_key_does_not_hide_the_undo() -> None:
    before = f"AssertionError: a\n{MARKER}\n\nAssertionError: b\n{RUN}\n"
    after = f"AssertionError: a\n{MARKER}\n\nAssertionError: b\n{MARKER}\n"
    assert _undone(before, after, {KEY: RUN})


def test_a_change_that_is_not_a_stash_is_still_refused() -> None:
    before = f"AssertionError: a\n{MARKER}\n\nAssertionError: b\n{RUN}\n"
    after = f"AssertionError: a\n{MARKER}\n\nAssertionError: c\n{MARKER}\n"
    assert not _undone(before, after, {KEY: RUN})
    assert not _undone(before, f"AssertionError: a\n{MARKER}\n", {KEY: RUN})


def test_a_later_engine_stashing_an_earlier_view_line_is_undone() -> None:
    # toolfilter wrote a view; budget then stashed its last lines, the view's header line
    # with them, and a run under a key an earlier marker of the text has too: expanding the
    # later stash gives the view back as it was (the view stays a view: it is not this
    # engine's to decode)
    tail = "  }\n<<cx:view>>… 15 lines above omitted <<cx:8b05b71adf040c20>>"
    before = f"AssertionError: a\n{MARKER}\n\nAssertionError: b\n{RUN}\n{tail}"
    marker, key = stash_marker("2 lines omitted", tail)
    after = f"AssertionError: a\n{MARKER}\n\nAssertionError: b\n{MARKER}\n{marker}"
    assert _undone(before, after, {key: tail, KEY: RUN})
