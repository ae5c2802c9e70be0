"""A fleet run: candidates found, the unchanged ones skipped, the rest analysed in batches on a
`concurrent.futures` executor (dask.distributed's `Client.get_executor()`, or serial), and the rows
committed to the store as results arrive.

The client never holds analyses: workers read each profile by path and write its analysis JSON into
the store themselves, returning only rows. At most a few tasks per worker are in flight, and rows are
committed every few hundred profiles, so the client's memory does not grow with the fleet.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from advisor.api import AnalyzeOptions, load_analysis
from advisor.core.errors import AdvisorError
from advisor.fleet.capture import named, same_captures
from advisor.fleet.discover import Candidate, Discovery, content_hash, run_settings
from advisor.fleet.rows import Item, Outcome, error_outcome, headline_metrics, outcome, path_name
from advisor.fleet.store import Store, Stored, StoreError, write_analysis
from advisor.fleet.store_parts import prepare_commit
from advisor.packs.load import PackCache


@dataclass(frozen=True)
class RunResult:
    """What a run did, for its closing line."""

    found: int  # candidates
    analysed: int
    failed: int  # stored as error rows
    unchanged: int  # skipped: already stored (same content)
    # skipped: "path (same content as other)", within this run; then those left out of the counts as
    # "path (same capture as other)": another format of a capture stored before it (fleet/capture.py)
    duplicates: tuple[str, ...]
    skipped_files: int  # files in the folders searched that no profile has the ending of
    missing: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()  # tasks that failed as a whole (a worker died too often): analysed next run
    run: int = 0


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    failed: int


@dataclass(frozen=True)
class TaskSettings:
    """What every task needs besides its profiles; picklable, sent with each task."""

    options: AnalyzeOptions
    store: Path
    label: str | None
    generic_stems: frozenset[str] = field(default_factory=frozenset)
    same_capture: dict[str, Any] | None = None  # fleet_run.yaml's `same_capture:` (the capture key)


class SerialExecutor(Executor):
    """`--workers 1`: each task runs when submitted, in this process (no cluster to start)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered through the future, as a pool would
            future.set_exception(exc)
        return future


@functools.lru_cache(maxsize=4)
def _packs(rule_paths: tuple[Path, ...]) -> PackCache:
    """The rule sets a worker process loaded, kept for its next tasks: reading the packs costs as much
    as analysing a dozen summary profiles. One fleet run reads one set of packs."""
    return PackCache(rule_paths)


def analyse_batch(items: Sequence[Item], settings: TaskSettings) -> list[Outcome]:
    """One task: each profile analysed on its own (a failure is that profile's error row), its analysis
    written into the store, its rows returned. A store that cannot be written fails the task (StoreError),
    and with it the run: no profile could be stored."""
    from advisor.core.serialize import dumps

    packs = _packs(tuple(settings.options.rule_paths))
    outcomes = []
    for item in items:
        try:
            analysis = load_analysis(item.path, settings.options, jobs=1, packs=packs)
            write_analysis(settings.store, item.hash, dumps(analysis, compact=True).encode("utf-8"))
            outcomes.append(outcome(analysis, item, settings.label, settings.generic_stems, settings.same_capture))
        except StoreError:
            raise
        except AdvisorError as exc:
            problem = exc.problem if exc.where == str(item.path) else f"{exc.where}: {exc.problem}"
            outcomes.append(error_outcome(item, problem, settings.label, path_name(item.path, settings.generic_stems)))
        except Exception as exc:  # a bug on one profile must not lose the others of the task
            said = " ".join(str(exc).split())
            outcomes.append(error_outcome(item, f"internal error ({type(exc).__name__}: {said})", settings.label,
                                          path_name(item.path, settings.generic_stems)))
    return outcomes


def batches(candidates: Sequence[Candidate], workers: int, settings: dict[str, int]) -> Iterator[list[Candidate]]:
    """Tasks of profiles in the order found: full traces (files of `trace_bytes` or more) up to
    `traces_per_task` a task, the smaller profiles up to `max_per_task`; fewer when there are few, so each
    worker gets several tasks; never more than `task_bytes` a task (a larger file is a task of its own).
    The largest tasks come first, so the last to finish are the shortest."""
    traces = [c for c in candidates if c.size >= settings["trace_bytes"]]
    small = [c for c in candidates if c.size < settings["trace_bytes"]]
    tasks = [*_grouped(traces, workers, settings["traces_per_task"], settings),
             *_grouped(small, workers, settings["max_per_task"], settings)]
    yield from sorted(tasks, key=lambda task: -sum(c.size for c in task))  # stable: ties in the order found


def _grouped(candidates: Sequence[Candidate], workers: int, most: int,
             settings: dict[str, int]) -> list[list[Candidate]]:
    """Runs of consecutive candidates: `most` at a time, or fewer so each worker gets `tasks_per_worker`."""
    count = max(1, min(most, math.ceil(len(candidates) / max(1, workers * settings["tasks_per_worker"]))))
    tasks: list[list[Candidate]] = []
    weight = 0
    for candidate in candidates:
        if not tasks or len(tasks[-1]) >= count or weight + candidate.size > settings["task_bytes"]:
            tasks.append([])
            weight = 0
        tasks[-1].append(candidate)
        weight += candidate.size
    return tasks


def _changed(candidates: Sequence[Candidate], index: dict[str, Stored]) -> tuple[list[Candidate], int]:
    """The candidates that may hold something new, and how many are unchanged: a file whose path, size
    and modification time match a stored row is skipped unread."""
    changed = [c for c in candidates if (known := index.get(str(c.path))) is None
               or (known.size, known.mtime_ns) != (c.size, c.mtime_ns)]
    return changed, len(candidates) - len(changed)


@dataclass
class _Contents:
    """Which contents a run has seen: one row per content, so a second file with the same bytes is a
    duplicate, named, not analysed, and a file whose bytes are stored (touched or renamed) is skipped."""

    stored: set[str]
    first: dict[str, Path] = field(default_factory=dict)
    already: int = 0
    duplicates: list[str] = field(default_factory=list)

    def new(self, candidates: Sequence[Candidate]) -> list[Item]:
        """The candidates whose content is new, hashed now."""
        items = []
        for candidate in candidates:
            digest = content_hash(candidate.path)
            if digest in self.first:
                self.duplicates.append(f"{candidate.path} (same content as {self.first[digest]})")
            elif digest in self.stored:
                self.already += 1
            else:
                self.first[digest] = candidate.path
                items.append(Item(candidate.path, digest, candidate.size, candidate.mtime_ns))
        return items


def _tasks(changed: Sequence[Candidate], contents: _Contents, workers: int,
           batching: dict[str, int]) -> Iterator[list[Item]]:
    """The tasks to run, each hashed just before it is submitted: the workers start on the first tasks
    while the client hashes the next ones, rather than wait for the whole fleet to be read (sha256 of a
    full trace costs about 5 % of its analysis)."""
    for task in batches(changed, workers, batching):
        if items := contents.new(task):
            yield items


Pool = Callable[[], contextlib.AbstractContextManager[tuple[Executor, int]]]


class SizedPool:
    """A pool told how many profiles there are to analyse before it starts, so it starts no more workers
    than there is work for (`cluster.LocalPool`); a plain `Pool` callable is started as it is."""

    def __call__(self, tasks: int) -> contextlib.AbstractContextManager[tuple[Executor, int]]:
        raise NotImplementedError


def _start(pool: Pool | SizedPool, tasks: int) -> contextlib.AbstractContextManager[tuple[Executor, int]]:
    return pool(tasks) if isinstance(pool, SizedPool) else pool()


def run_fleet(found: Discovery, store: Store, options: AnalyzeOptions, pool: Pool | SizedPool,
              label: str | None = None,
              force: bool = False, progress: Callable[[Progress], None] | None = None,
              interrupted: Callable[[], None] | None = None) -> RunResult:
    """Analyse every profile `found` (`discover`) not yet in `store` on the executor `pool()` gives (an
    executor and how many tasks it runs at once), started only when there is something to analyse.
    `interrupted` raises KeyboardInterrupt when Ctrl-C was pressed (checked after each task: see
    core/interrupts.py)."""
    from advisor.kinds import names

    fleet = run_settings()
    settings = TaskSettings(replace(options, load=replace(options.load, progress=None)), store.folder, label,
                            frozenset(fleet["identity"]["generic_stems"]), dict(fleet["same_capture"]))
    metrics = headline_metrics(list(names()))
    with store.lock():
        store.recover()
        run = store.next_run()
        index = {} if force else store.index()
        changed, unchanged = _changed(found.candidates, index)
        committer = _Committer(store, run, metrics, fleet["store"])
        lost: list[str] = []
        # The pool starts (in the background, for a local cluster) as soon as something may need analysing.
        contents = _Contents({s.hash for s in index.values()})
        with store.superseding() if force else contextlib.nullcontext(), \
                _start(pool, len(changed)) if changed else contextlib.nullcontext((None, 0)) as (executor, workers):
            tasks = _tasks(changed, contents, workers, fleet["batching"])
            # a pool of workers leaves this process idle: it loads what commits need meanwhile (pyarrow and
            # pandas, half a second) rather than at the first commit, on a short run the last thing it does.
            # Serially, that would only make the analyses' peak memory larger.
            prepare = None if isinstance(executor, SerialExecutor) else prepare_commit
            # no executor: nothing changed, so there is no task to run
            results = iter(()) if executor is None else _results(executor, workers, tasks, settings,
                                                                  fleet["batching"], prepare)
            try:
                for outcomes, batch, error in results:
                    if error is not None:  # the task as a whole (a worker killed too often): retried next run
                        lost += [f"{i.path}: {error}" for i in batch]
                    else:
                        committer.add(outcomes)
                    if progress:
                        skipped = contents.already + len(contents.duplicates)
                        progress(Progress(committer.done, len(changed) - skipped, committer.failed))
                    if interrupted:
                        interrupted()
            except AdvisorError as exc:
                if not isinstance(exc, StoreError):  # a file that cannot be hashed: what was analysed is kept
                    committer.flush()
                raise
            committer.flush()
        same = _same_captures(store, run) if committer.done > committer.failed else ()
    return RunResult(len(found.candidates), committer.done - committer.failed - len(same), committer.failed,
                     unchanged + contents.already, (*contents.duplicates, *same), found.skipped, found.missing,
                     tuple(lost), run)


def _same_captures(store: Store, run: int) -> tuple[str, ...]:
    """The profiles this run stored that are another format of a capture stored before them (by run, then
    path: the same whatever order the workers finished in), named as the closing line says them."""
    from advisor.fleet.attempts import records

    rows = records(store.profiles())
    return named(rows, same_captures(rows), run)


def _results(executor: Executor, workers: int, tasks: Iterator[list[Item]], settings: TaskSettings,
             batching: dict[str, int], idle: Callable[[], None] | None = None
             ) -> Iterator[tuple[list[Outcome], list[Item], str | None]]:
    """Each task's outcomes as it finishes, with at most a few tasks per worker in flight (the client
    holds no more than that, however large the fleet). `idle` runs once the first tasks are out: the
    client has nothing else to do until one finishes. A file that cannot be hashed stops the run once the
    tasks in flight have given their outcomes. A store error is fatal: the tasks in flight are cancelled at
    once (as on any other way out: an interrupt, a failed commit) and it is raised."""
    in_flight: dict[Future, list[Item]] = {}
    limit = max(1, workers * batching["in_flight_per_worker"])
    exhausted = False
    unreadable: AdvisorError | None = None
    try:
        while True:
            while not exhausted and len(in_flight) < limit:
                try:
                    batch = next(tasks, None)
                except AdvisorError as exc:  # a file that cannot be hashed: the tasks in flight finish first
                    unreadable, batch = exc, None
                if batch is None:
                    exhausted = True
                else:
                    in_flight[executor.submit(analyse_batch, batch, settings)] = batch
            if idle is not None and in_flight:
                idle()
                idle = None
            if not in_flight:
                if unreadable is not None:
                    raise unreadable
                return
            finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            for future in [f for f in in_flight if f in finished]:  # in the order submitted: deterministic
                batch = in_flight.pop(future)
                try:
                    outcomes = future.result()
                except StoreError:
                    raise
                except Exception as exc:
                    yield [], batch, f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                else:
                    yield outcomes, batch, None
    finally:
        for future in in_flight:
            future.cancel()


class _Committer:
    """Rows gathered until a part is worth writing (a count or a time), then committed."""

    def __init__(self, store: Store, run: int, metrics: list[str], settings: dict[str, Any]):
        self.store, self.run, self.metrics = store, run, metrics
        self.every, self.seconds = settings["commit_every"], settings["commit_seconds"]
        self.rows: list[dict[str, Any]] = []
        self.findings: list[dict[str, Any]] = []
        self.units: dict[str, str] = {}
        self.since = time.monotonic()
        self.done = self.failed = 0

    def add(self, outcomes: Sequence[Outcome]) -> None:
        self.done += len(outcomes)
        self.failed += sum(o.row["status"] == "error" for o in outcomes)
        for o in outcomes:
            self.rows.append({**o.row, "run": self.run})
            self.findings += [{**f, "run": self.run} for f in o.findings]
            self.units.update(o.units)
        if len(self.rows) >= self.every or time.monotonic() - self.since >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.store.commit(self.rows, self.findings, self.units, self.metrics)
        self.rows, self.findings, self.since = [], [], time.monotonic()
