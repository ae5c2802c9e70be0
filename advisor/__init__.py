"""advisor: a rules-based performance advisor for ML-accelerator profiles.

In Python (a notebook, a script): `advisor.analyze(path, **options)` and `advisor.compare(paths, **options)`
(advisor/notebook.py, docs/notebook.md). They are imported on first use, so `advisor --help` stays instant.
"""

import importlib
from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # imported by name on first use: every stage reads __version__ from here, and none of them may depend on
    # the notebook layer above the api
    if name in ("analyze", "compare"):
        return getattr(importlib.import_module("advisor.notebook"), name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
