"""The one error type users see: a file and what is wrong with it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class AdvisorError(Exception):
    """Bad input or usage. The CLI prints `advisor: error: <where>: <problem>` and exits 2."""

    def __init__(self, where: str, problem: str):
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem

    def __reduce__(self):  # picklable, so a rank analysed in a worker process reports its own error
        return (type(self), (self.where, self.problem))


class Problems(AdvisorError):
    """Several problems found at once; the CLI prints one `advisor: error:` line for each."""

    def __init__(self, problems: list[str], where: str = "input"):
        super().__init__(where, f"{len(problems)} problem(s)")
        self.problems = list(problems)

    def __reduce__(self):
        return (type(self), (self.problems, self.where))


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to a misspelt one, or None when none is close (difflib's ratio of 0.6 or more)."""
    close = difflib.get_close_matches(str(name), sorted(set(known)), n=1)
    return close[0] if close else None


def suggest(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest known name, or "" when none is close."""
    close = closest(name, known)
    return f"; did you mean '{close}'?" if close else ""
