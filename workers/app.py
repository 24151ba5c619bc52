"""``faust -A workers.app:app worker``: the usual Faust entry point.

The app lives in :mod:`workers.service.app`; this module only hands it on.
"""

from workers.service.app import app

__all__ = ["app"]
