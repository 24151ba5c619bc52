"""``toolfilter``: command-aware filtering of tool outputs (lossy, reversible).

For every tool output (``unit.kind == "tool_result"``, not frozen, not JSON)
a filter is chosen from the unit's shell command (``unit.command``), else
from the tool name, else from signatures in the output itself (pytest's
session header, ``diff --git``, ``file.c:12:5: error:`` ...).  Filters are
data (``workers/engines/_filters/builtin/*.json``, see :mod:`workers.engines._filters`).

Each line is classified in one linear pass:

- *kept*: every critical line of the gate (:func:`workers.fidelity.facts.critical_lines`:
  errors, warnings, failing tests, summaries, findings, diff headers, git
  status paths, the innermost frame), the filter's ``keep`` lines, and
  markers of earlier engines; a repeat of a kept line is dropped (the first
  copy stays visible), unless its place makes it another fact: a user frame in
  another crash stack, the location right under another finding's headline, an
  eslint ``line:col`` finding under another file's header (a file whose findings
  are all an earlier file's still folds);
- *dropped*: ``drop`` lines, repeats of ``collapse`` lines after the first,
  block and group lines beyond their head/tail, similar consecutive lines;
- the remaining lines are kept within the filter's head/tail budget (and
  around kept lines, ``context``) and dropped beyond it.

Whatever the filter, the lines themselves are read for structure first
(:mod:`.blocks`): in a test-runner report (pytest, unittest, go test -v,
cargo test, jest, vitest, mocha, TAP, surefire, gradle, ctest) passing tests
are dropped and counted (``… 30 passing tests omitted``), assertion lines and
frames in user code are kept, library frames dropped; in compiler and linter
diagnostics the headline and location stay while snippet art and help text
are dropped, and repeats of one warning kind in one file collapse into one
note that lists every location (``… warning -Wunused-variable 5 more times
at main.c:4:33 main.c:5:33 …``); in a crash report (panic, race, sanitizer,
valgrind, exception) library frames are dropped and user frames stay.  The
filter's own drop rules keep their labels; the gate's critical lines always
stay.

Every maximal run of dropped lines (blank lines inside a run join it) is
replaced in place by one marker line ``… 412 lines omitted (all PASSED)
<<cx:KEY>>`` and stashed under ``KEY = stash_key(run)``, so expanding the
output gives back the input exactly.  A run is only dropped when that saves
at least 12 tokens once the marker is paid for; shorter runs stay visible,
unless they are decoration (code frames, help text, library frames, banners, a
filter's ``decoration`` rules) or short runs of passing tests (and a filter's
``counted`` rules): those go into one view of the output when that pays
(:func:`.render._view`: ``<<cx:view>>… N lines above omitted without a marker
(…)``, the whole input stashed).  A
shown context line longer than ``LONG_LINE`` keeps its first ~240 characters followed by
``… N more characters of this line omitted <<cx:KEY>>`` (the cut never
splits a URL, path or number).  Fenced code blocks are kept whole (the gate
protects a fence as one span).  Plain file reads (``cat``, ``head``,
``git show REV:PATH``, read tools) and fetched documents are left alone.

The package: :mod:`.engine` (the engine), :mod:`.blocks` (report and
diagnostic structure), :mod:`.plan` (per-line classes and budgets), :mod:`.render` (runs of dropped lines -> markers),
:mod:`.family` (the family an output is reported as: bench, ``--explain``),
:mod:`.verify` (filter-author tooling: a filter's ``verify`` samples).  The
filters themselves (model, regex safety, loading, selection) are the shared
helper :mod:`workers.engines._filters`: the pipeline loads a
:class:`~workers.engines._filters.FilterSet` once when it is built and hands
it over in ``EngineContext.filters``, so :meth:`ToolFilterEngine.apply` reads
no file and spawns nothing.
"""

from __future__ import annotations

from workers.engines.toolfilter.engine import ToolFilterEngine
from workers.engines.toolfilter.family import Family, output_family
from workers.engines.toolfilter.render import FilterResult, filter_text
from workers.engines.toolfilter.verify import sample_unit, verify_filter

__all__ = [
    "Family",
    "FilterResult",
    "ToolFilterEngine",
    "filter_text",
    "output_family",
    "sample_unit",
    "verify_filter",
]
