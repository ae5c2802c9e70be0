"""advisor: a rules-based performance advisor for ML-accelerator profiles.

In Python (a notebook, a script), docs/notebook.md:

    >>> import advisor
    >>> result = advisor.analyze("samples/mp2_energy/summary.json")
    >>> result                      # kind, input, verdict, top findings; a rich report in Jupyter
    >>> result.findings             # a DataFrame, root causes first; result.metrics, .bounds, .tables
    >>> result.save("findings.md")  # or .html, .pdf, .json, under the CLI's output rules

`analyze`, `compare`, `load`, `fleet` and `history` are imported on first use, so `advisor --help` stays instant.
"""

import importlib
import sys
import types
from typing import Any

from advisor.core.version import __version__

__all__ = ["ComparisonResult", "FleetResult", "HistoryResult", "Result", "__version__", "analyze", "compare",
           "fleet", "history", "load"]
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    # imported by name on first use: `advisor --help` stays instant, and no stage depends on the notebook layer
    if name in _API:
        return getattr(importlib.import_module("advisor.notebook"), name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What tab completion offers: the API, not this module's own imports."""
    return sorted(__all__)


class _Package(types.ModuleType):
    """`advisor.fleet` is the API's call, though `advisor/fleet/` is also the fleet's package: the import system
    sets a submodule as its package's attribute once it is imported, and a property on the package's class wins
    over that (the package stays importable as `from advisor.fleet.… import …`)."""

    @property
    def fleet(self) -> Any:
        return importlib.import_module("advisor.notebook").fleet

    @fleet.setter
    def fleet(self, module: types.ModuleType) -> None:
        self.__dict__["_fleet_package"] = module


sys.modules[__name__].__class__ = _Package
