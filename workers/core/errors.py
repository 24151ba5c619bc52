"""The root of every error ctxpress raises on purpose.

Catch :class:`CtxpressError` to handle any of them; each also keeps the
built-in base it always had (``ValueError``, ``LookupError``, ...), so code
that caught those keeps working.  Foreign errors (orjson, aiokafka, OS) are
wrapped where they enter, with ``raise ... from exc``.

::

    CtxpressError
    ├── SettingsError            core.settings       a CTXPRESS_* value is wrong (ValueError)
    ├── UnknownEncoding          core.tokens         no such tokenizer encoding (ValueError)
    ├── TokenizerFailed          core.tokens         no counter could count a text (ValueError)
    ├── OffloadStoreError        core.offload        a stash entry that is a link, not a file, too large (ValueError)
    ├── InvalidRecord            messages            a record has none of the accepted shapes (ValueError)
    ├── MissingMarker            markers             a lossless engine without a marker row (LookupError)
    ├── StashError               markers.stash       a stash that loops, nests too deep or grows too long (ValueError)
    ├── UnknownEngine            engines             an engine or mode name that is not registered (LookupError)
    ├── RecordError              pipeline.runner     a record the pipeline cannot run (Exception)
    ├── ExpandError              pipeline.expand     a marker that cannot be resolved (ValueError)
    ├── TopicSpecError           service.topics      a topic definition that is wrong (ValueError)
    ├── PublishError             service.publish     publishing a batch failed (RuntimeError)
    ├── GapError                 service.source      missed records could not be re-read (RuntimeError)
    ├── HandlerFailed            service.handler     the handler refuses batches after a failure (RuntimeError)
    └── UserError                cli                 what the user typed cannot work; exit 2
"""

from __future__ import annotations

__all__ = ["CtxpressError"]


class CtxpressError(Exception):
    """Base class of every error ctxpress raises on purpose (see the tree above)."""
