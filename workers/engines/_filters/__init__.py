"""Tool-output filters as data: loading, validation, selection (the ``toolfilter`` engine's).

A package of its own, beside the engine, because the pipeline builds the
:class:`FilterSet` (:func:`load_filter_set`, once) and
:class:`~workers.engines.base.EngineContext` carries it: ``model`` (the
filter), ``safety`` (regex checks), ``validate`` (a document -> a filter),
``loader`` (files, directories, the process cache), ``workers.core.shell`` (shell
command normalisation), ``select`` (the filter for one output).

A filter is one JSON or TOML file (``builtin/*.json`` in this package; more
from the ``filters_dir`` setting and, when trusted, the project's
``.ctxpress/filters``).  Fields (all optional except ``name`` and ``match``)::

    name          "pytest"                     [a-z0-9][a-z0-9_.-]*, unique; a later file
                                               with the same name replaces the earlier one
    description   one sentence
    priority      int (default 50): the highest-priority match wins
    action        "filter" (default) or "skip" (leave the output alone, e.g. file reads)
    match.command regexes, ``re.match``-ed against each normalised command segment
    match.output  regexes (multiline) searched in the first 32 KB of the output
    match.tool    regexes matched against the tool name when no command is known
    match.lines   single-line regexes of what most lines of this output look like: when
                  the command names no filter (or only a shell tool is known) and no
                  output signature occurs, the filter whose ``lines`` (and single-line
                  ``output`` signatures) match the largest share of the first 120
                  non-blank lines wins, if at least half and 3 lines (``by_content``);
                  when several output signatures occur, the one covering most lines wins
    defer_to_output  bool: an output signature of another filter wins over this one
    keep          rules: lines always kept visible
    header        regexes of header/legend lines: kept, and not counted as table rows
    drop          rules: lines dropped (stashed)
    collapse      rules: runs of consecutive lines matching the same rule keep their
                  first line; the rest is dropped
    blocks        [{start, head, tail, label, note, count}]: a block runs from a line
                  matching ``start`` to the next block start or ``block_end`` line; its
                  unclassified lines beyond head/tail are dropped
    block_end     regexes that end the current block (the line itself is not in it)
    group         {key, head, label, note}: consecutive lines with the same key (first
                  capture group of ``key``) keep their first ``head`` unclassified lines
    head, tail    unclassified lines kept at the start and end of the output (10, 10)
    context       {before, after}: unclassified lines kept around every kept line
    similar       bool: consecutive lines of the same shape collapse to the first one, and
                  a kept line that repeats an event kept above (a log line that differs only
                  in a timestamp, a duration, a pid) folds
    events        bool: only the second half of ``similar`` (a search's matches in a log:
                  the match's line number counts as a measure too)
    dedupe        bool (default true): repeated kept lines are shown once
    rows          bool: notes say "N of M rows omitted" (tables)
    min_lines     outputs with fewer lines are left alone
    verify        [{input, command, expected, source}]: samples run by the test suite

A rule is a regex string or ``{"pattern": ..., "label": ..., "note": ...}``.  A drop rule
may add ``"decoration": true`` for lines whose absence changes no other line's meaning
(rule lines, empty log lines, progress bars, hints): they may go without a marker where
they were, into the one view marker of the output, whose note counts them by label (as the
structure's code frames do); or ``"counted": true`` for lines a count says enough about
(passing tests under a header or summary that counts them): those go into the view only
where a run of them is too short to pay for a marker of its own (as the structure's
passing tests do), a long run keeps its marker in place.
Notes are templates with ``{n}`` (lines dropped), ``{total}``, ``{label}``,
``{key}`` and the block's ``count`` names.

User regexes cannot hang the worker: they are compiled with RE2, a
linear-time engine (``linear.py``), and rejected at load time, with the file
and the pattern named, when RE2 cannot compile them (backreferences,
lookarounds, ``\\Z``, repeats over 1000) or their compiled program is too big;
the parsed-pattern checks (nested or alternated unbounded quantifiers, at most
512 characters) still run first.  Under RE2 ``\\d``, ``\\w`` and ``\\b`` are
ASCII-only and ``$`` matches only at the end of the line.  Built-in filters use
Python's ``re`` (their timing probe runs in the tests).  Every regex is applied
only to the first ``LINE_CAP`` characters of a line.
"""

from __future__ import annotations

from workers.core.shell import command_segments
from workers.engines._filters.loader import (
    BUILTIN_DIR,
    builtin_filters,
    clear_cache,
    load_file,
    load_filter_set,
    load_filters,
)
from workers.engines._filters.model import (
    ANSI,
    LINE_CAP,
    Block,
    Filter,
    FilterError,
    Group,
    Matcher,
    Rule,
    Sample,
)
from workers.engines._filters.safety import check_pattern, probe_patterns
from workers.engines._filters.select import Detection, FilterSet

__all__ = [
    "ANSI",
    "BUILTIN_DIR",
    "LINE_CAP",
    "Block",
    "Detection",
    "Filter",
    "FilterError",
    "FilterSet",
    "Group",
    "Matcher",
    "Rule",
    "Sample",
    "builtin_filters",
    "check_pattern",
    "clear_cache",
    "command_segments",
    "load_file",
    "load_filter_set",
    "load_filters",
    "probe_patterns",
]
