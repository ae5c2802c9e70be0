"""NTFF: an undocumented binary only AWS's tools can read. We run `neuron-profile view` (or
`neuron-explorer view`) with its matching NEFF to get summary-json, then read that; with `--trace`,
the full event trace instead (neuron-profile's legacy JSON, or neuron-explorer's Parquet directory),
written to a folder the caller owns."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from advisor.core.errors import AdvisorError

NAME = "ntff"
TOOLS = ("neuron-profile", "neuron-explorer")
DEFAULT_TOOL_DIR = Path("/opt/aws/neuron/bin")  # where aws-neuronx-tools installs them
TIMEOUT_SECONDS = 1800


@dataclass(frozen=True)
class Conversion:
    command: tuple[str, ...]
    stdout: str
    output: Path | None = None  # the full trace the tool wrote (a JSON file, or an Explorer directory)


def sniff_name(path: Path) -> bool:
    return path.suffix.lower() == ".ntff"


def find_tool(explicit: str | None) -> str | None:
    if explicit:
        found = shutil.which(explicit) or (explicit if Path(explicit).is_file() else None)
        if found is None:
            raise AdvisorError(explicit, "--neuron-profile: no such executable")
        return found
    for tool in TOOLS:
        found = shutil.which(tool) or shutil.which(tool, path=str(DEFAULT_TOOL_DIR))
        if found:
            return found
    return None


def find_neff(ntff: Path, explicit: str | None) -> Path | None:
    if explicit:
        neff = Path(explicit)
        if not neff.is_file():
            raise AdvisorError(explicit, "--neff: no such file")
        return neff
    beside = sorted(ntff.resolve().parent.glob("*.neff"))
    if len(beside) > 1:
        names = ", ".join(p.name for p in beside[:5])
        raise AdvisorError(str(ntff), f"several NEFFs beside it ({names}); choose one with --neff")
    return beside[0] if beside else None


def _output_arguments(tool: str, trace_dir: Path | None) -> tuple[tuple[str, ...], Path | None]:
    """What to ask the tool for: summary-json on stdout, or the full trace into `trace_dir`."""
    if trace_dir is None:
        return ("--output-format", "summary-json"), None
    if Path(tool).name.startswith("neuron-explorer"):  # its default output: a Parquet directory
        out = trace_dir / "explorer"
        return ("--output-file", str(out)), out
    out = trace_dir / "profile.json"
    return ("--output-format", "json", "--output-file", str(out)), out


def convert(ntff: Path, tool_option: str | None, neff_option: str | None,
            trace_dir: Path | None = None) -> Conversion:
    """Run the tool on the NTFF: its summary-json, or with `trace_dir` its full event trace there."""
    neff = find_neff(ntff, neff_option)
    tool = find_tool(tool_option)
    neff_shown = shlex.quote(str(neff)) if neff else "<kernel.neff>"
    view = f"neuron-profile view -n {neff_shown} -s {shlex.quote(str(ntff))}"
    wanted, then = ((f"{view} --output-format summary-json > summary.json", "summary.json") if trace_dir is None
                    else (f"{view} --output-format json --output-file profile.json", "profile.json"))
    if tool is None:
        raise AdvisorError(
            str(ntff),
            "reading an NTFF needs neuron-profile (aws-neuronx-tools), which is not on PATH; "
            f"on a machine that has it run `{wanted}` and then `advisor report {then}`, "
            "or pass --neuron-profile PATH",
        )
    if neff is None:
        raise AdvisorError(str(ntff), "no .neff beside it; the NTFF can only be read with the NEFF it was "
                                      "captured from: pass --neff PATH")
    arguments, output = _output_arguments(tool, trace_dir)
    command = (tool, "view", "-n", str(neff), "-s", str(ntff), *arguments)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False,
            env={**os.environ, "NO_COLOR": "1"}, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise AdvisorError(str(ntff), f"{Path(tool).name} did not finish within {TIMEOUT_SECONDS} s") from None
    except OSError as exc:
        raise AdvisorError(str(ntff), f"could not run {tool}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        said = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        detail = said[-1] if said else "no message"
        raise AdvisorError(str(ntff), f"{Path(tool).name} view failed (exit {done.returncode}): {detail}")
    if output is not None and not output.exists():
        raise AdvisorError(str(ntff), f"{Path(tool).name} view reported success but wrote no trace")
    # shown with the output's own name, as a user would type it (and the same in every report)
    shown = tuple(output.name if output is not None and part == str(output) else part for part in command)
    return Conversion(command=tuple(shlex.quote(part) for part in shown), stdout=done.stdout, output=output)
