"""`advisor fleet`: analyse every profile under the paths into a store (when paths are given), then
write the fleet overview from the store when one is asked for (-o or --format; from the store alone,
Markdown on stdout by default). A nightly job that only fills the store pays nothing for the overview."""

from __future__ import annotations

import argparse
import sys

from advisor.cli import options
from advisor.cli.output import emit, output_format


def _progress_line(progress) -> None:
    print(f"\radvisor: fleet: {progress.done}/{progress.total} analysed, {progress.failed} failed", end="",
          file=sys.stderr, flush=True)


def _summary(result) -> str:
    parts = [f"{result.analysed} analysed", f"{result.failed} failed", f"{result.unchanged} already stored"]
    formats = [d for d in result.duplicates if "(same capture as " in d]  # analysed and stored, not counted
    copies = [d for d in result.duplicates if d not in formats]  # the same bytes: not analysed
    for named, what in ((copies, "duplicate{} skipped"), (formats, "other format{} of a capture not counted")):
        if named:
            parts.append(f"{len(named)} {what.format('s' if len(named) != 1 else '')} ({'; '.join(named[:3])}"
                         f"{'; …' if len(named) > 3 else ''})")
    if result.skipped_files:
        parts.append(f"{result.skipped_files} other file{'s' if result.skipped_files != 1 else ''} skipped")
    found = f"{result.found} profile{'s' if result.found != 1 else ''} found"
    return f"advisor: fleet: run {result.run}: {found}; " + ", ".join(parts)


def _check_workers(workers: int | None) -> None:
    from advisor.core.errors import AdvisorError
    from advisor.fleet.cluster import WORKERS_PER_CORE, max_workers

    if workers is not None and workers < 1:
        raise AdvisorError("--workers", "must be at least 1")
    if workers is not None and workers > max_workers():
        raise AdvisorError("--workers", f"{workers} is more than {WORKERS_PER_CORE} per core ({max_workers()} on this "
                                        "machine); more processes only contend for the cores")


def fleet(args: argparse.Namespace) -> int:
    from advisor.api import paths_read
    from advisor.core.errors import AdvisorError
    from advisor.fleet.discover import scanned
    from advisor.fleet.store import Store

    analyze_options = options.analyze_options(args, options.settings(args))
    # before any work: -o is none of the files the run reads (nor a new file in a folder it searches, read by
    # the next run; nor the context, packs or settings) and not inside the store
    from advisor.report.ci_formats import FLEET_FORMATS, GATE_EXTENSIONS, fleet_ci, implied_format

    args.format = implied_format(args.output, args.format, GATE_EXTENSIONS)  # -o fleet.xml: JUnit
    fmt = output_format(args, paths_read(scanned(args.paths), analyze_options), "fleet.pdf", protected=[args.store])
    noise = options.noise(args)
    if args.top < 1:
        raise AdvisorError("--top", "must be at least 1")
    _check_workers(args.workers)
    if args.scheduler is not None and args.workers is not None:
        raise AdvisorError("--workers", "sizes the local cluster; an existing cluster (--scheduler) has its own "
                                        "workers")
    found = None
    if args.paths:
        from advisor.fleet.discover import discover

        found = discover(args.paths, args.store)
        if len(found.missing) == len(args.paths):  # nothing to do: no store is created for it
            raise AdvisorError(found.missing[0], "no such file or folder" + (" (nor any given path)"
                                                                             if len(args.paths) > 1 else ""))
    store = Store.open(args.store, create=found is not None)
    if found is not None:
        from advisor.fleet.cluster import LocalPool
        from advisor.fleet.run import run_fleet

        show = None if args.quiet or not sys.stderr.isatty() else _progress_line
        result = run_fleet(found, store, analyze_options, LocalPool(args.workers, args.scheduler), args.label,
                           args.force, show, getattr(args, "interrupted", None))
        if show:
            print(file=sys.stderr)
        for missing in result.missing:
            print(f"advisor: error: {missing}: no such file or folder", file=sys.stderr)
        for lost in result.lost:
            print(f"advisor: error: {lost} (not stored; the next run retries it)", file=sys.stderr)
        if not args.quiet or result.failed or result.lost:
            print(_summary(result), file=sys.stderr)
    if args.paths and args.output is None and args.format is None:  # the store is the product: no overview asked
        if not args.quiet:
            print(f"advisor: fleet: the overview: advisor fleet --store {args.store} -o fleet.md", file=sys.stderr)
        return 0
    if fmt in FLEET_FORMATS:  # CI (docs/ci.md): the stored profiles and their findings, latest row of each
        profiles = store.profiles()
        emit(args, fleet_ci(profiles.to_dict("records"), store.findings(profiles).to_dict("records"), fmt), store)
        return 0
    from advisor.fleet.render import fleet_summary, render_fleet

    summary = fleet_summary(store, noise, args.top)
    emit(args, render_fleet(store, fmt, args.output, args.page_size, noise, args.top, summary), summary)
    return 0
