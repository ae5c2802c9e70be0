"""Shared fixtures of the torch kind's tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from advisor.api import AnalyzeOptions, analyze
from advisor.kinds.base import LoadOptions


@pytest.fixture(scope="session")
def analyse_trace(tmp_path_factory) -> Callable[[str, dict[str, Any]], Any]:
    """analyse_trace(name, trace): a Kineto trace built as a dict, written as `name`.json and analysed."""

    def _analyse(name: str, trace: dict[str, Any]) -> Any:
        path = tmp_path_factory.mktemp(name) / f"{name}.json"
        path.write_text(json.dumps(trace))
        return analyze(path, AnalyzeOptions(load=LoadOptions()))

    return _analyse
