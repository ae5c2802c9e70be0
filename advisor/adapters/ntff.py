"""NTFF: an undocumented binary only AWS's tools can read. We run `neuron-profile view` (or
`neuron-explorer view`) with its matching NEFF to get summary-json, then read that."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from advisor.errors import AdvisorError

NAME = "ntff"
TOOLS = ("neuron-profile", "neuron-explorer")
DEFAULT_TOOL_DIR = Path("/opt/aws/neuron/bin")  # where aws-neuronx-tools installs them
TIMEOUT_SECONDS = 1800


@dataclass(frozen=True)
class Conversion:
    command: tuple[str, ...]
    stdout: str


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


def convert(ntff: Path, tool_option: str | None, neff_option: str | None) -> Conversion:
    neff = find_neff(ntff, neff_option)
    tool = find_tool(tool_option)
    neff_shown = shlex.quote(str(neff)) if neff else "<kernel.neff>"
    wanted = f"neuron-profile view -n {neff_shown} -s {shlex.quote(str(ntff))} --output-format summary-json"
    if tool is None:
        raise AdvisorError(
            str(ntff),
            "reading an NTFF needs neuron-profile (aws-neuronx-tools), which is not on PATH; "
            f"on a machine that has it run `{wanted} > summary.json` and then `advisor report summary.json`, "
            "or pass --neuron-profile PATH",
        )
    if neff is None:
        raise AdvisorError(str(ntff), "no .neff beside it; the NTFF can only be read with the NEFF it was "
                                      "captured from: pass --neff PATH")
    command = (tool, "view", "-n", str(neff), "-s", str(ntff), "--output-format", "summary-json")
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
    return Conversion(command=tuple(shlex.quote(part) for part in command), stdout=done.stdout)
