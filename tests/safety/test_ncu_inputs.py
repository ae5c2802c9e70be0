"""Issue 22, sections 2, 4 and 5, for the Nsight Compute readers (details CSV, text output, .ncu-rep)
and every regular expression that runs on input: bounded time, and one clear line for bad input."""

from __future__ import annotations

import csv
import importlib
import pkgutil
import re
import time
from pathlib import Path

import pytest
from tests_support import FIXTURES, ROOT, SAMPLES, one_line_error

from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.ncu.adapters import load
from advisor.profilers.ncu.adapters.text_output import _header, _process

REFERENCE = FIXTURES / "ncu-examples"
REPORT = REFERENCE / "ncu_rep_T4_matrix_add2d_uncoalesced.ncu-rep"
DETAILS = SAMPLES / "ncu_multi_kernel" / "details.csv"
# Hang guards, not speed targets: linear work here takes milliseconds, the quadratic patterns these tests
# caught took minutes; speed is measured by benchmarks/, never asserted by a unit test.
HANG = 120.0  # seconds; the tests that use it are marked hang_guard
TERMINATORS = ("", "\x00", ",", "\n", "!", " x y")  # what makes a match fail at the very end, after all the work


def input_patterns() -> dict[str, tuple[re.Pattern[str], tuple[str, ...]]]:
    """Name -> (pattern, hostile fragments) of every module of the package that declares `INPUT_PATTERNS`:
    found by walking the package, so a reader added anywhere (a new kind too) is held without a list."""
    import advisor

    found: dict[str, tuple[re.Pattern[str], tuple[str, ...]]] = {}
    for module in pkgutil.walk_packages(advisor.__path__, "advisor."):
        if module.name != "advisor.__main__":
            found.update(getattr(importlib.import_module(module.name), "INPUT_PATTERNS", {}))
    return found


def test_every_module_that_declares_input_patterns_is_held():
    """The walk finds each declaring module's every pattern (nine readers of Neuron, ncu and text input)."""
    found = input_patterns()
    declaring = [p for p in (ROOT / "advisor").rglob("*.py") if "\nINPUT_PATTERNS = " in p.read_text(encoding="utf-8")]
    assert len(declaring) >= 9
    for path in declaring:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        assert set(importlib.import_module(name).INPUT_PATTERNS) <= set(found), name


def _seconds(call, text: str) -> float:
    start = time.perf_counter()
    call(text)
    return time.perf_counter() - start


def _shapes(fragments: tuple[str, ...]) -> list[tuple[str, str]]:
    """(repeated unit, terminator) pairs made of the pattern's own fragments: the others together, and each
    alone, each ended by every terminator."""
    units = ["".join(fragments[1:]) or fragments[0], *fragments]
    return [(unit, end) for unit in units for end in TERMINATORS]


def _line(fragments: tuple[str, ...], unit: str, end: str, size: int) -> str:
    """A hostile line of about `size` characters: the first fragment once, the unit repeated, the end."""
    return fragments[0] + unit * (size // max(1, len(unit))) + end


def _runs(pattern):
    return (pattern.search, pattern.findall)


@pytest.mark.parametrize("name", sorted(input_patterns()))
@pytest.mark.hang_guard
def test_every_input_pattern_is_linear(name):
    """Item 5.4 (and 4): every regular expression that runs on input finishes on hostile lines of its own
    fragments, up to 2 MB. A hang guard, not a speed target (those are benchmarks/): a linear pattern takes
    milliseconds here and a quadratic one minutes (the old launch-header pattern: 110 s on 704 KB), so the
    generous bound cannot flake on a loaded machine and still fails anything quadratic. The slowest shape is
    found at 64 KB first, so a cubic pattern fails at a few KB, not after hours."""
    pattern, fragments = input_patterns()[name]
    for size in (256, 1 << 10, 4 << 10, 16 << 10, 64 << 10):  # growing, so a cubic pattern fails early
        timed = [(_seconds(call, _line(fragments, unit, end, size)), call, unit, end)
                 for unit, end in _shapes(fragments) for call in _runs(pattern)]
        worst, call, unit, end = max(timed, key=lambda t: t[0])
        assert worst < HANG, f"{name}: {worst:.2f} s on a {size:,}-character line: not linear"
    large = _line(fragments, unit, end, 2 << 20)
    assert _seconds(call, large) < HANG, f"{name}: over {HANG} s on a 2 MB line: not linear"


@pytest.mark.hang_guard
def test_the_launch_header_of_repeated_context_pairs_parses_in_linear_time():
    """Item 5.4: the 704 KB line of repeated `, Context 1` that took the old launch-header pattern 110 s
    is taken apart (in milliseconds; the bound is a hang guard), and so is one four times as long."""
    for end in (",", ", Foo", ""):
        line = "  k" + ", Context 1" * 64_000 + end  # 704 KB
        assert _seconds(_header, line) < HANG
    assert _seconds(_header, "  k" + ", Context 1" * 256_000 + ",") < HANG
    assert _header("  void k(int) (3, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 7.5") == (
        "void k(int)", {"context": "1", "stream": "7", "device": "0", "compute_capability": "7.5",
                        "grid_dims": "(3, 1, 1)", "block_dims": "(256, 1, 1)"})


@pytest.mark.hang_guard
def test_the_process_line_is_linear_and_takes_the_last_at_sign():
    """Item 5.4: `[pid] process@host` was a backtracking pattern (quadratic on `@` runs); now string methods."""
    line = "[1] " + "@" * 500_000 + " x y"
    assert _seconds(_process, line) < HANG and _process(line) is None
    assert _process("[42] python3@gpu-node-1 ") == {"process_name": "python3", "host_name": "gpu-node-1"}


@pytest.mark.hang_guard
def test_a_hostile_text_export_gets_a_bounded_answer(tmp_path, capsys):
    """Item 5.4 through the CLI: a text export whose launch header is 704 KB of `, Context 1` finishes
    in seconds with one line (nothing in it is measured), where it used to take minutes."""
    path = tmp_path / "hostile.log"
    path.write_text("    Section: GPU Speed Of Light Throughput\n  k" + ", Context 1" * 64_000 + ",\n")
    start = time.perf_counter()
    line = one_line_error(capsys, path)
    assert time.perf_counter() - start < HANG
    assert "unknown format" in line  # not a launch header: nothing claims it


def _second_run(text: str) -> str:
    """The file's CSV block twice, as `cat run1.csv run2.csv` or two `ncu --csv` runs in one log give it."""
    return text + "==PROF== Disconnected from process 2\n" + text


def test_two_runs_in_one_details_csv_are_refused(tmp_path, capsys):
    """Item 5.6: a details CSV holding two runs with the same launch IDs is refused in one line, as the raw
    reader's runs are: the second run's values no longer replace the first's, nor its rule results double."""
    path = tmp_path / "two_runs.csv"
    path.write_text(_second_run(DETAILS.read_text()))
    line = one_line_error(capsys, path)
    assert line.endswith("two launches share the ID 0: the file holds more than one ncu run; export one run per file")


def test_a_second_run_without_its_header_is_refused_too(tmp_path):
    """Item 5.6: the rows of a second run appended under the first header (IDs starting over) are kept
    apart from the first run's launches, then refused the same way."""
    lines = DETAILS.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = [line for line in lines[header + 1:] if line.startswith('"')]
    path = tmp_path / "appended.csv"
    path.write_text("\n".join([*lines[:header + 1], *rows, *rows]) + "\n")
    with pytest.raises(AdvisorError, match="two launches share the ID 0"):
        load(path, LoadOptions())


def test_one_run_reads_as_before():
    """Item 5.6: keeping runs apart changes nothing for one run: each launch once, its rules once."""
    profiles = load(DETAILS, LoadOptions())
    ids = [p.info["launch_id"] for p in profiles]
    assert ids == sorted(set(ids), key=ids.index)
    rows = list(csv.DictReader(line for line in DETAILS.read_text().splitlines() if line.startswith('"')))
    assert len(profiles[0].vendor_findings) == sum(1 for r in rows if r["ID"] == "0" and r["Rule Name"])


def test_a_csv_field_past_the_csv_limit_is_one_line(tmp_path, capsys):
    """Item 2 (string length): a kernel name over the csv module's 128 KiB field limit is one line naming
    the CSV line, not csv.Error surfacing as an internal error."""
    text = DETAILS.read_text()
    path = tmp_path / "long_name.csv"
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith('"0"'))
    lines[row] = lines[row].replace('"0","', '"0","' + "k" * 200_000, 1)
    path.write_text("\n".join(lines) + "\n")
    line = one_line_error(capsys, path)
    assert "CSV line" in line and "field larger than field limit" in line


def _with_value(tmp_path: Path, value: str) -> Path:
    """The sample with launch 0's elapsed cycles and grid size's x set to `value`, as text."""
    out = []
    for line in DETAILS.read_text().splitlines():
        if line.startswith('"0",') and '"GPU Speed Of Light Throughput","Elapsed Cycles"' in line:
            line = line[:line.rindex('","')] + f'","{value}",'
        out.append(line.replace('"(4320, 1, 1)"', f'"({value}, 1, 1)"') if line.startswith('"0",') else line)
    path = tmp_path / "numbers.csv"
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize(("value", "expected"), [("9" * 5000, None), ("9" * 300, float("9" * 300)),
                                                 ("1e309", None), ("nan", None), ("-inf", None), ("1e308", 1e308),
                                                 ("0", 0.0), ("-5", None)])
def test_numbers_in_an_ncu_csv_field_are_values_or_unavailable(tmp_path, value, expected):
    """Item 2.3: a 5,000-digit value, 1e309, NaN, Inf and a negative sentinel in a metric cell are
    unavailable (None, never 0); 300 digits, 1e308 and 0 are values for the rules to judge; a launch
    dimension of 5,000 digits (int() refuses past 4,300) is no dimension, never an exception."""
    profile = load(_with_value(tmp_path, value), LoadOptions())[0]
    assert profile.values["elapsed_cycles"] == expected
    assert profile.values["grid_size"] in (None, 4320.0) or value in ("0", "-5", "1e308")


def test_impossible_dates_in_a_text_header_are_text(tmp_path):
    """Item 2.3: an impossible launch timestamp (older ncu headers) is stripped as text, never parsed as a
    date, so it cannot raise."""
    log = SAMPLES / "ncu_text" / "profile.log"
    source = log if log.exists() else REFERENCE / "ncu_text_fused_rmsnorm_T4_cc75.log"
    text = source.read_text()
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if _header(line))
    sig, _, tail = lines[at].partition(", Context")
    lines[at] = sig.split(" (")[0] + ", 2024-Foo-99 99:99:99, Context" + tail
    path = tmp_path / "dates.log"
    path.write_text("\n".join(lines) + "\n")
    profile = load(path, LoadOptions())[0]
    assert "2024-Foo" not in profile.info["kernel_name"]


def _truncated_cuts() -> list[int]:
    size = REPORT.stat().st_size if REPORT.exists() else 0
    return [4, 16, 100, 1000, 5000, 20000, size // 2, 189_337, size - 100, size - 1]


@pytest.mark.parametrize("cut", _truncated_cuts())
def test_a_truncated_ncu_rep_is_one_line(tmp_path, capsys, cut):
    """Item 4 / 2: a real .ncu-rep cut short, which the ncu_report library half-loads (a launch without a
    name or metrics, or none), is one line saying it is truncated, never a half report or an exception."""
    pytest.importorskip("ncu_report")
    if not REPORT.exists():
        pytest.skip("the reference .ncu-rep is not here")
    path = tmp_path / f"cut_{cut}.ncu-rep"
    path.write_bytes(REPORT.read_bytes()[:cut])
    line = one_line_error(capsys, path, "-o", str(tmp_path / "r.md"))
    assert "truncated or damaged" in line or line.endswith("(no kernel results)"), line
    assert not (tmp_path / "r.md").exists()


def test_the_whole_ncu_rep_still_reads(tmp_path):
    """Item 4: the truncation checks leave the real report as it was: one launch, 1,131 metrics read."""
    pytest.importorskip("ncu_report")
    if not REPORT.exists():
        pytest.skip("the reference .ncu-rep is not here")
    [profile] = load(REPORT, LoadOptions())
    assert profile.info["kernel_function"] == "matrix_addition2D"
