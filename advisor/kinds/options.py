"""How to read an input (LoadOptions), the options bag every kind's adapters take: a leaf of the registry, so
the contract a kind is written against and the kind descriptor both build on it without importing each other."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.inputs.limits import default_max_memory

Progress = Callable[[str], None]


@dataclass(frozen=True)
class LoadOptions:
    """How to read an input; `kind_options` holds a kind's own command-line options by their dest
    (for Neuron: neuron_profile, neff, trace)."""

    entry: str | None = None  # which entry of a file that holds several profiles
    # bytes; full traces above half of it are streamed instead of loaded whole
    max_memory: int = field(default_factory=default_max_memory)
    progress: Progress | None = None  # progress lines for long ingests (a terminal is watching)
    kind_options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, name: str, default: Any = None) -> Any:
        return self.kind_options.get(name, default)
