"""One capture stored in two formats is one profile of the fleet (issue 36 §4): an Nsight Compute CSV and its
text export, a legacy Neuron JSON and its Parquet export, one run read as cores and as ranks. Known by what was
analysed, not by bytes; genuinely different profiles (a fixed kernel, another rank's time) stay apart."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from fleet.frames import finding, frames, profile
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, load_analysis
from advisor.fleet.capture import capture_key, same_captures
from advisor.fleet.cluster import executor
from advisor.fleet.discover import discover, run_settings
from advisor.fleet.rows import fleet_spec
from advisor.fleet.run import run_fleet
from advisor.fleet.store import Store
from advisor.fleet.summary import summarize


def _key(path: Path) -> str | None:
    analysis = load_analysis(path, AnalyzeOptions())
    return capture_key(analysis, fleet_spec(analysis.kind), run_settings()["same_capture"])


def _same(first: str, second: str) -> bool:
    """Whether the second sample is the same capture as the first, as the fleet judges their rows."""
    rows = [{"hash": str(i), "path": name, "status": "ok", "run": 1, "label": None, "capture": _key(SAMPLES / name)}
            for i, name in enumerate((first, second))]
    assert all(r["capture"] for r in rows)
    return len(same_captures(rows)) == 1  # the one later by path is the other's duplicate


def _key_of(total: float, dma: float | None = 0.5, kind: str = "neuron") -> str:
    """A stored key as `capture_key` writes it: 0.1 % on a time, 0.1 % + 0.0001 on a fraction."""
    return json.dumps({"kind": kind, "identity": {"instance_type": "trn1.2xlarge"}, "values": {
        "total_time": [total, total * 1e-3], "dma": [dma, 0.0 if dma is None else dma * 1e-3 + 1e-4]}})


@pytest.mark.parametrize(("first", "second"), [
    ("ncu_before_after/before.csv", "ncu_before_after/before.txt"),  # CSV and text export: identical figures
    ("ncu_seed004/details.csv", "ncu_seed004/output.txt"),  # launch ID 38096 in the CSV, 0 in the text
    ("legacy_trace/profile.json", "explorer_parquet"),  # legacy JSON and its Parquet export
    ("multi_core/summary.json", "multi_rank"),  # one run as cores and as ranks
    ("matmul_text/summary.txt", "matmul_text/summary_raw.txt"),  # 0.601 vs 0.6010000000069999
])
def test_two_formats_of_one_capture_are_one_capture(first, second):
    assert _same(first, second)


@pytest.mark.parametrize(("first", "second"), [
    ("weight_reload/summary.json", "weight_reload_fixed/summary.json"),  # the kernel before and after its fix
    ("multi_rank/profile_rank_0.json", "multi_rank/profile_rank_1.json"),  # two ranks, 48.20 vs 48.49 ms
    ("multi_rank/profile_rank_0.json", "multi_rank/profile_rank_3.json"),  # the same metrics, 48.20 vs 47.94 ms
    ("multi_rank/profile_rank_2.json", "multi_rank"),  # the slowest rank alone is not its run of four
    ("ncu_before_after/before.csv", "ncu_before_after/after.csv"),
])
def test_different_profiles_are_different_captures(first, second):
    assert not _same(first, second)


def _captures(root: Path) -> list[Path]:
    """Copies of samples: three captures each in two formats, and profiles that only look alike."""
    for name, source in (("ncu/before.csv", "ncu_before_after/before.csv"),
                         ("ncu/before.txt", "ncu_before_after/before.txt"),
                         ("legacy/profile.json", "legacy_trace/profile.json"),
                         ("cores/summary.json", "multi_core/summary.json"),
                         ("kernel/summary.json", "weight_reload/summary.json"),
                         ("kernel_fixed/summary.json", "weight_reload_fixed/summary.json"),
                         ("rank0/one.json", "multi_rank/profile_rank_0.json"),
                         ("rank1/one.json", "multi_rank/profile_rank_1.json")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / source, root / name)
    shutil.copytree(SAMPLES / "explorer_parquet", root / "explorer")
    shutil.copytree(SAMPLES / "multi_rank", root / "ranks")
    return [root]


def _run(paths, folder: Path):
    store = Store.open(folder, create=True)
    return store, run_fleet(discover([str(p) for p in paths], folder), store, AnalyzeOptions(),
                            lambda: executor(1, None))


def _summary(store: Store):
    profiles = store.profiles()
    return summarize(profiles, store.findings(profiles), store.units(), str(store.folder), store.analysis_path)


def test_a_second_format_is_named_and_not_counted(tmp_path):
    root = tmp_path / "fleet"
    store, result = _run(_captures(root), tmp_path / "store")
    assert result.duplicates == (
        f"{root / 'legacy' / 'profile.json'} (same capture as {root / 'explorer'})",
        f"{root / 'ncu' / 'before.txt'} (same capture as {root / 'ncu' / 'before.csv'})",
        f"{root / 'ranks'} (same capture as {root / 'cores' / 'summary.json'})")
    assert (result.found, result.analysed, result.failed) == (10, 7, 0)
    s = _summary(store)
    assert (s.profiles, s.ok, s.same_capture) == (7, 7, 3)
    assert {k.kind: k.profiles for k in s.kinds} == {"ncu": 1, "neuron": 6}
    causes = {c.rule: c for c in s.root_causes}
    assert causes["uncoalesced-global-access"].profiles == 1  # the CSV's, not the text export's too
    assert causes["tensor-reload"].profiles == 1 and causes["straggler-dma"].profiles == 1
    kept = [o.path for o in s.offenders]
    assert len(kept) == len(set(kept)) and {str(root / "ncu" / "before.txt"), str(root / "ranks")}.isdisjoint(kept)
    rows = _rows(store)
    counted = {r["path"] for r in rows if r["hash"] not in same_captures(rows)}
    # alike but not one capture: the kernel before and after its fix, two ranks of one run
    assert {str(root / p) for p in ("kernel/summary.json", "kernel_fixed/summary.json", "rank0/one.json",
                                    "rank1/one.json")} <= counted


def _rows(store: Store) -> list[dict]:
    from advisor.fleet.attempts import records

    return records(store.profiles())


def test_the_format_stored_first_counts_across_runs(tmp_path):
    """The text export stored by run 1 counts; the CSV of the same capture, added by run 2, is the duplicate."""
    root = tmp_path / "fleet"
    root.mkdir()
    shutil.copy(SAMPLES / "ncu_before_after" / "before.txt", root / "before.txt")
    store, first = _run([root], tmp_path / "store")
    assert (first.analysed, first.duplicates) == (1, ())
    shutil.copy(SAMPLES / "ncu_before_after" / "before.csv", root / "before.csv")
    store, second = _run([root], tmp_path / "store")
    assert second.duplicates == (f"{root / 'before.csv'} (same capture as {root / 'before.txt'})",)
    assert (second.analysed, second.unchanged) == (0, 1)
    s = _summary(store)
    assert (s.profiles, s.same_capture) == (1, 1)


def test_which_one_counts_is_deterministic():
    """The first by run, then path, whatever order the rows come in; a label keeps two attempts apart, and a
    row without a key (an error, a store written before the key) is never a duplicate."""
    rows = [profile("k", "h1", 0.001, path="/p/b.txt", capture=_key_of(0.0010004, 0.50004)),  # within rounding
            profile("k", "h2", 0.001, path="/p/a.csv", capture=_key_of(0.001)),
            profile("k", "h3", 0.001, path="/p/0.csv", capture=_key_of(0.001), run=2),
            profile("k", "h4", 0.001, path="/p/c.csv", capture=_key_of(0.001), label="night 2"),
            profile("k", "h5", 0.001, path="/p/d.csv"), profile("k", "h6", 0.001, path="/p/e.csv"),
            profile("k", "h7", 0.001, path="/p/g.csv", capture=_key_of(0.001, None)),  # a figure unknown
            profile("k", "h8", 0.001, path="/p/h.csv", capture=_key_of(0.001, 0.51)),  # another figure
            profile("k", "h9", 0.001, path="/p/i.csv", capture=_key_of(0.00101)),  # 1 % longer: another run
            profile("k", "hA", 0.001, path="/p/j.csv", capture=_key_of(0.001, kind="ncu")),
            profile("k", "hB", 0.001, path="/p/k.csv", capture="{not json"),  # an edited store: never a duplicate
            profile("x", "hC", status="error", error="bad", path="/p/f.csv", capture=_key_of(0.001))]
    expected = {"h1": "/p/a.csv", "h3": "/p/a.csv"}
    for seed in range(5):
        random.Random(seed).shuffle(rows)
        assert same_captures(rows) == expected


def test_summary_leaves_the_second_format_out(tmp_path):
    a = profile("k", "h1", 0.010, gain=0.5, gain_finding="r", path="/p/k.csv", capture=_key_of(0.01),
                root_causes="r")
    b = profile("k", "h2", 0.010, gain=0.5, gain_finding="r", path="/p/k.txt", capture=_key_of(0.01),
                root_causes="r")
    c = profile("k", "h3", 0.020, gain=0.5, gain_finding="r", path="/p/k2.csv", capture=_key_of(0.02),
                root_causes="r")
    p, f = frames([a, b, c], [finding(a, "r", 0.5), finding(b, "r", 0.5), finding(c, "r", 0.5)])
    s = summarize(p, f, {"total_time": "s"}, "/s", lambda h: Path("/s") / f"{h}.json")
    assert (s.profiles, s.same_capture) == (2, 1)
    assert s.root_causes[0].recoverable_time == pytest.approx(0.015) and s.root_causes[0].profiles == 2
    assert [o.path for o in s.offenders] == ["/p/k2.csv", "/p/k.csv"]


def test_the_closing_line_tells_copies_from_other_formats():
    """Issue 36: a second format of a capture is analysed and stored but not counted: the closing line says so,
    apart from byte-identical copies, which are not analysed at all."""
    from types import SimpleNamespace

    from advisor.cli.fleet import _summary

    result = SimpleNamespace(analysed=2, failed=0, unchanged=0, skipped_files=0, run=1, found=4, duplicates=(
        "b/summary.json (same content as a/summary.json)", "ncu/before.txt (same capture as ncu/before.csv)"))
    line = _summary(result)
    assert "1 duplicate skipped (b/summary.json (same content as a/summary.json))" in line
    assert "1 other format of a capture not counted (ncu/before.txt (same capture as ncu/before.csv))" in line
