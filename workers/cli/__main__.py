"""``python -m workers.cli``: the same as the ``ctxpress`` command."""

from workers.cli import main

raise SystemExit(main())
