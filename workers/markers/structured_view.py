"""The structured-view envelope: ``VIEW\n<<cx:view>>… note <<cx:KEY>>``.

The structured engine writes a shorter view of a JSON, YAML, XML or Markdown
document (the toolfilter engine one of a listing, :mod:`workers.engines.listing`),
then the header line ``<<cx:view>>``, then a stash marker for the original.
Once the stash marker is expanded in place the text is
``VIEW\n<<cx:view>>ORIGINAL``, and :func:`decode` keeps what follows the header.
"""

from __future__ import annotations

__all__ = ["HEADER_LINE", "LITERAL", "VIEW_HEADER", "decode"]

VIEW_HEADER = "<<cx:view>>"
HEADER_LINE = "\n" + VIEW_HEADER
LITERAL = VIEW_HEADER


def decode(text: str) -> str:
    """Undo a structured view once its stash entry has been expanded in place.

    After expansion the text is ``VIEW\n<<cx:view>>ORIGINAL``: the original is
    what follows the header.  A text without the header is returned as it is
    (one substring test); a change to input that holds ``<<cx:`` is kept only when
    expand gives the input back, so a forged header never reaches a reader.
    """
    at = text.find(HEADER_LINE)
    if at < 0:
        return text
    if text.find(HEADER_LINE, at + 1) >= 0:
        return text  # not a view this engine wrote
    return text[at + len(HEADER_LINE) :]
