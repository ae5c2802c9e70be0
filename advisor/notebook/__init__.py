"""The Python entry points (docs/notebook.md): `analyze`, `compare`, `load`, `fleet` and `history`, each the
call the CLI command of the same name makes (the CLI is a thin layer over `advisor.api` and the fleet), returning
a result that shows itself in a notebook, gives DataFrames and saves under the CLI's output rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from advisor import api
from advisor.comparing.diff import DEFAULT_NOISE
from advisor.core import serialize
from advisor.core.errors import AdvisorError
from advisor.engine.evaluate import Selection
from advisor.inputs.limits import saved_analysis_limit
from advisor.kinds import LoadOptions
from advisor.notebook.results import ComparisonResult, FleetResult, HistoryResult, Result

__all__ = ["ComparisonResult", "FleetResult", "HistoryResult", "Result", "analyze", "compare", "fleet", "history",
           "load"]


def _options(hardware: str | None, rules: Sequence[str | Path], select: Sequence[str], ignore: Sequence[str],
             params: Mapping[str, float] | None, context: str | Path | None, kind: str | None,
             entry: str | None) -> api.AnalyzeOptions:
    return api.AnalyzeOptions(load=LoadOptions(entry=entry), hardware=hardware,
                              rule_paths=tuple(Path(r) for r in rules),
                              selection=Selection(select=tuple(select), ignore=tuple(ignore),
                                                  params=dict(params or {})),
                              context=Path(context) if context is not None else None, kind=kind)


def analyze(path: str | Path, *, hardware: str | None = None, rules: Sequence[str | Path] = (),
            select: Sequence[str] = (), ignore: Sequence[str] = (), params: Mapping[str, float] | None = None,
            context: str | Path | None = None, kind: str | None = None, entry: str | None = None,
            jobs: int | None = None) -> Result:
    """Analyse a profile of any kind (or re-read a saved analysis JSON), as `advisor report` does.

    >>> result = advisor.analyze("samples/ncu_seed004/details.csv")
    >>> result.findings[["severity", "estimated_gain"]]   # a DataFrame, root causes first

    The keywords are the CLI's options: `params={"weight-reload.min_ratio": 4}` is `--set
    weight-reload.min_ratio=4`, `entry="2"` is `--kernel 2` / `--entry 2`."""
    options = _options(hardware, rules, select, ignore, params, context, kind, entry)
    return Result(api.load_analysis(Path(path), options, jobs), tuple(api.paths_read([Path(path)], options)))


def load(path: str | Path) -> Result:
    """A saved analysis JSON (`advisor report … -o x.json`, `result.save("x.json")`), as it was analysed.

    >>> advisor.load("findings.json").verdict
    'tensor-reload'

    Anything else is refused (`analyze` reads profiles)."""
    saved = serialize.read_if_analysis(Path(path), *saved_analysis_limit())
    if saved is None:
        raise AdvisorError(str(path), "not a saved analysis JSON (advisor.analyze reads a profile)")
    return Result(api.load_analysis(Path(path)), (Path(path),))


def compare(paths: Sequence[str | Path], *, labels: Sequence[str] | None = None, noise: float = DEFAULT_NOISE,
            hardware: str | None = None, rules: Sequence[str | Path] = (), select: Sequence[str] = (),
            ignore: Sequence[str] = (), params: Mapping[str, float] | None = None,
            kind: str | None = None) -> ComparisonResult:
    """Compare two attempts (before, after) or a series of three or more, as `advisor compare` does.

    >>> diff = advisor.compare(["before.csv", "after.csv"])
    >>> diff.findings["status"]                           # fixed, new, persisting, not comparable"""
    api.check_compare_inputs(paths, labels)
    found = [Path(p) for p in paths]
    options = _options(hardware, rules, select, ignore, params, None, kind, None)
    names = list(labels) if labels is not None else api.default_labels(found)
    return ComparisonResult(api.compare_inputs(found, names, options, noise), tuple(api.paths_read(found, options)))


def fleet(paths: Sequence[str | Path] = (), *, store: str | Path, label: str | None = None, force: bool = False,
          workers: int | None = None, scheduler: str | None = None, noise: float = DEFAULT_NOISE, top: int = 10,
          hardware: str | None = None, rules: Sequence[str | Path] = (), kind: str | None = None) -> FleetResult:
    """Analyse every profile under `paths` into the Parquet `store` (on a dask local cluster, or `scheduler`)
    and give its overview, as `advisor fleet` does; with no paths, the overview of the store as it is.

    >>> overview = advisor.fleet(["profiles/"], store="fleet-store")
    >>> overview.root_causes.head()"""
    from advisor.fleet.cluster import LocalPool
    from advisor.fleet.discover import discover
    from advisor.fleet.render import fleet_summary
    from advisor.fleet.run import run_fleet
    from advisor.fleet.store import Store

    given = [str(p) for p in paths]
    options = _options(hardware, rules, (), (), None, None, kind, None)
    found = discover(given, Path(store)) if given else None
    if found is not None and len(found.missing) == len(given):
        raise AdvisorError(found.missing[0], "no such file or folder")
    opened = Store.open(Path(store), create=found is not None)
    run = (run_fleet(found, opened, options, LocalPool(workers, scheduler), label, force) if found is not None
           else None)
    read = (Path(store), *(Path(p) for p in given))
    return FleetResult(opened, fleet_summary(opened, noise, top), run, noise, top, read)


def history(name: str, *, store: str | Path, noise: float = DEFAULT_NOISE) -> HistoryResult:
    """One kernel's or model's stored attempts in order, as `advisor history NAME --store DIR` gives them.

    >>> advisor.history("weight_reload", store="fleet-store").attempts"""
    from advisor.fleet.history import stored_history
    from advisor.fleet.store import Store

    opened = Store.open(Path(store))
    return HistoryResult(opened, stored_history(opened, name, noise), (Path(store),))
