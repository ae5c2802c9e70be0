"""A folder of per-rank profiles (`profile_rank_<i>.*`, as multi-worker captures write them):
ranks analysed in parallel, the slowest analysed in full, and a cross-rank overview."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis

RANK_FILE = re.compile(r"^profile_rank_(\d+)\.(json|txt|ntff)$")


def rank_files(folder: Path) -> list[tuple[int, Path]]:
    try:
        names = sorted(folder.iterdir())
    except OSError as exc:
        raise AdvisorError(str(folder), exc.strerror or str(exc)) from None
    ranks = sorted((int(m.group(1)), p) for p in names if (m := RANK_FILE.match(p.name)) and p.is_file())
    if not ranks:
        if any(folder.glob("*.parquet")):
            raise AdvisorError(str(folder), "Parquet tables but no Summary.parquet: a Neuron Explorer output folder "
                                            "needs its Summary table")
        raise AdvisorError(str(folder), "a folder, but neither per-rank profiles (profile_rank_<i>.json, .txt or "
                                        ".ntff) nor a Neuron Explorer output (Summary.parquet …) in it")
    seen: dict[int, Path] = {}
    for rank, path in ranks:
        if rank in seen:
            raise AdvisorError(str(folder), f"rank {rank} twice: {seen[rank].name} and {path.name}")
        seen[rank] = path
    return ranks


def _analyze_rank(path: Path, options) -> Analysis:
    from advisor.api import analyze

    return analyze(path, options)


def analyze_ranks(folder: Path, options, jobs: int | None,
                  progress: Callable[[str], None] | None = None) -> Analysis:
    from dataclasses import replace

    from advisor.api import with_entries

    ranks = rank_files(folder)
    rank_options = replace(options, context=None, load=replace(options.load, entry=None))
    workers = max(1, min(jobs or os.cpu_count() or 1, len(ranks)))
    analyses: list[Analysis] = []
    if workers == 1:
        for i, (_, path) in enumerate(ranks):
            if progress:
                progress(f"analysing rank {i + 1}/{len(ranks)}")
            analyses.append(_analyze_rank(path, rank_options))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_analyze_rank, path, rank_options) for _, path in ranks]
            for i, future in enumerate(futures):
                analyses.append(future.result())
                if progress:
                    progress(f"analysed rank {i + 1}/{len(ranks)}")
    names = [f"rank {rank}" for rank, _ in ranks]
    if options.load.entry is not None:
        if options.load.entry not in names and options.load.entry not in {str(r) for r, _ in ranks}:
            raise AdvisorError(str(folder), f"--entry {options.load.entry}: no such rank; the folder holds "
                                            f"{', '.join(names)}")
        chosen = next(i for i, (r, _) in enumerate(ranks) if options.load.entry in (str(r), f"rank {r}"))
    else:
        chosen = max(range(len(analyses)), key=lambda i: (analyses[i].value("total_time") or 0.0, -i))
    if options.context is not None:  # the investigation context belongs to the rank reported in full
        from advisor.api import analyze

        analyses[chosen] = analyze(ranks[chosen][1], replace(rank_options, context=options.context))
    return with_entries(analyses, names, chosen)
