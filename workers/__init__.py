"""ctxpress: compress LLM chat transcripts and agent tool outputs without making them wrong."""

__version__ = "0.1.0"
