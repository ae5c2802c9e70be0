"""Shared fixtures: the seed-002 profile, sample paths, running the installed CLI, and the
hypothesis profiles."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Executor, Future
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from tests_support import SAMPLES

# Property tests (tests/test_properties.py) take max_examples from the profile: "ci" keeps the
# issue's bar of at least 2,000 examples per target; "dev" is for a quick local run. The deadline
# is off in both: the shared CI machine's timing is not what these tests are about.
# HYPOTHESIS_PROFILE picks one; by default "ci" when CI is set (CI systems and .ci/run set it), else "dev".
_PROPERTY_SETTINGS = {"deadline": None,
                      "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]}
settings.register_profile("ci", max_examples=2000, print_blob=True, **_PROPERTY_SETTINGS)
settings.register_profile("dev", max_examples=200, **_PROPERTY_SETTINGS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

# Seed 002's raw profile data, as the findings doc printed it.
MP2 = json.loads((SAMPLES / "mp2_energy" / "summary.json").read_text()) if (
    SAMPLES / "mp2_energy" / "summary.json").exists() else {}


def advisor_command() -> list[str]:
    """The installed console script beside this interpreter, as a user runs it."""
    script = Path(sys.executable).parent / "advisor"
    if script.exists():
        return [str(script)]
    found = shutil.which("advisor")
    return [found] if found else [sys.executable, "-m", "advisor"]


def run_cli(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*advisor_command(), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=120, check=False)


# --- Markers: a default run a newcomer can wait for, and everything in CI ----------------------------------
#
# A plain `pytest` deselects the heavy tests and the hang guards (addopts in pyproject.toml:
# -m "not slow and not hang_guard"); `pytest -m ""` runs every test, as `.ci/run` does (it exports
# PYTEST_ADDOPTS='-m ""'). One family at a time:
# `pytest -m pdf`, `pytest -m "golden or browser"`, `pytest -m hang_guard`.
#
#   golden      the golden cases of every sample: what matters in each (tests/report/test_expectations.py) and
#               the full reports kept as goldens (tests/report/test_golden.py)
#   pdf         PDF rendering (WeasyPrint) and the chart-drawing process
#   browser     headless Chromium (tests/report/test_browser.py)
#   fleet       fleets on a dask LocalCluster, Ctrl-C and SIGKILL of fleet runs
#   fidelity    the real-trace fidelity suite and the tests over every real trace of ../shared/reference
#   slow        every one of the above, plus the tests measured at about 1.3 s or more here (2 cores), listed below
#   hang_guard  a generous bound on wall time that catches a hang or a quadratic blow-up, never a speed
#               target (those are benchmarks/, with their figures in docs/performance.md); set on the test
#
# Heavy tests are marked here, by file and test-name pattern, so a new test in a heavy file is heavy too.
# A pattern matching nothing (a test renamed) only means that test runs by default: re-measure with
# `pytest -m "" -p no:cacheprovider --durations=60` and keep the default run at a few minutes on two cores.
_HEAVY: tuple[tuple[str, str, str], ...] = (
    # (marker, test file under the root, fnmatch; regular expression searched in the test's name, "" for all)
    ("golden", "tests/report/test_golden.py", ""),
    ("golden", "tests/report/test_expectations.py", ""),
    ("pdf", "tests/report/test_formats.py", ""),
    ("pdf", "tests/report/test_pdf.py", ""),
    ("pdf", "tests/report/test_drawing.py", ""),
    ("pdf", "tests/*", r"\[pdf\]|rerendered_pdf|pdf_names|pdf_is_the_same|killed_parent|ctrl_c_is_one_line_exit_130"),
    ("browser", "tests/report/test_browser.py", ""),
    ("fleet", "tests/fleet/test_run.py", ""),
    ("fleet", "tests/fleet/test_cluster.py", ""),
    ("fleet", "tests/fleet/test_overview_report.py", ""),
    ("fleet", "tests/safety/test_fleet_store.py", r"ctrl_c|two_runs_at_once|samples_still_run"),
    ("fleet", "tests/cli/test_fleet_cli.py", r"every_format_from_the_run"),
    ("fleet", "tests/profilers/torch/test_compare.py", r"fleet_over"),
    ("fidelity", "tests/fidelity/*", ""),
    ("fidelity", "tests/profilers/torch/adapters/test_one_pass.py", r"every_real_trace"),
    ("fidelity", "tests/profilers/torch/test_operators.py", r"top_matmuls_achieved_flops"),
    ("fidelity", "tests/comparing/test_work_per_step.py", ""),
    # measured slow: whole files first, then single tests (each about 1.3 s or more, or a parametrised set
    # well over it)
    ("slow", "tests/samples/test_make_rbln_samples.py", ""),
    ("slow", "tests/test_malformed.py", r"test_malformed_input"),
    ("slow", "tests/profilers/torch/test_rank_comparability.py", ""),
    ("slow", "tests/test_types.py", ""),
    ("slow", "tests/report/test_ci_workflow.py", ""),  # docs/ci.md's workflow, run step by step
    ("slow", "tests/notebook/test_executed.py", ""),  # a Jupyter kernel executes a notebook
    ("slow", "tests/packs/test_load.py", r"ten_thousand_rules"),
    ("slow", "tests/profilers/torch/adapters/test_read.py", r"any_budget_or_run_size"),
    ("slow", "tests/profilers/torch/test_compare.py", r"fail_on_regression|fail_on_severity|comparability_warnings"),
    ("slow", "tests/profilers/torch/test_samples_generated.py", r"every_generated_file|readme_figures"),
    ("slow", "tests/profilers/rbln/test_end_to_end.py", r"folder_of_rank_traces|compare_traces"),
    ("slow", "tests/profilers/rbln/test_verdicts.py", r"samples_report_the_union_idle"),
    ("slow", "tests/profilers/rbln/adapters/test_read.py", r"every_encoding_of_the_sample_generator"),
    ("slow", "tests/profilers/ncu/test_raw_appendix.py", r"appendix_lists_the_fields_used"),
    ("slow", "tests/test_time_budget.py", r"zero_estimate_pack_rule_sharing|every_kind_has_samples_here"),
    ("slow", "tests/comparing/test_diff.py", r"cli_regression_gate|cli_pair_markdown|cli_series_renders"),
    ("slow", "tests/report/test_chart_data.py", r"odd_target_speedup"),
    ("slow", "tests/report/test_output.py", r"profile_text_cannot_inject_markup"),
    ("slow", "tests/test_api_rerender.py", r"new_context_is_judged"),
    ("slow", "tests/packs/test_kinds.py", r"pack_left_out_says_why"),
    ("slow", "tests/safety/test_output_files.py", r"owned_folder_property|fleet_overview_keeps"),
    ("slow", "tests/safety/test_saved_analyses.py", r"any_mutation_renders"),
    ("slow", "tests/safety/test_rbln_inputs.py", r"gzip_bomb|compressed_packets_count|no_temporary_file_even_when"),
    ("slow", "tests/safety/test_inputs.py", r"fifo_named_like_a_capture"),
    ("slow", "tests/safety/test_settings.py", r"shown_in_the_setup_table"),
    ("slow", "tests/safety/test_options.py", r"another_kinds_rule_fails"),
    ("slow", "tests/cli/test_cli.py", r"progress_only_on_a_terminal"),
)
DEFAULT_SELECTION = "not slow and not hang_guard"  # addopts' -m in pyproject.toml


def pytest_configure(config):
    """A test file or test named on the command line runs in full, marked or not (`pytest
    tests/report/test_golden.py --update-golden` regenerates every golden); an explicit -m always wins."""
    named = any("::" in arg or arg.partition("::")[0].endswith(".py") for arg in config.args)
    updating = config.getoption("--update-golden") or config.getoption("--update-expected")
    if config.option.markexpr == DEFAULT_SELECTION and (named or updating):
        config.option.markexpr = ""


@pytest.hookimpl(tryfirst=True)  # before the -m deselection
def pytest_collection_modifyitems(config, items):
    root = Path(config.rootpath)
    for item in items:
        try:
            path = Path(item.path).resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        name = item.nodeid.partition("::")[2]
        for marker, pattern, test in _HEAVY:
            if fnmatch.fnmatch(path, pattern) and (not test or re.search(test, name)):
                item.add_marker(getattr(pytest.mark, marker))
                if marker != "slow":
                    item.add_marker(pytest.mark.slow)


class SerialExecutor(Executor):
    """An executor that runs each task as it is submitted, in the calling thread: for tests that inject an
    executor to count or record its work. Never a thread pool: the analysis is not thread-safe under CPython
    3.11 (its `ast` module state is shared between threads), and advisor itself only pools processes."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # the pool's contract: the future holds it
            future.set_exception(exc)
        return future


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/ from the current output (review the diff like code)")
    parser.addoption("--update-expected", action="store_true",
                     help="rewrite samples/*/expected.yaml from the current output (review the diff like code)")


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def update_expected(request) -> bool:
    return bool(request.config.getoption("--update-expected"))


@pytest.fixture
def mp2() -> dict:
    assert MP2, "samples/mp2_energy/summary.json is missing"
    return dict(MP2)


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text_or_bytes_or_obj) -> path in a temporary folder."""

    def _write(name: str, content: object) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
        return path

    return _write
