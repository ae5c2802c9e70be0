"""Folders of profiles for the fleet tests: copies of bundled samples, made distinct by total_time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests_support import SAMPLES


def neuron_profiles(folder: Path, count: int, start: int = 0) -> list[Path]:
    """`count` distinct Neuron summary-json profiles (weight_reload with a scaled total_time), one per
    kernel folder, as a nightly tree lays them out. Each 0.2 % longer than the one before: more than two
    exports of one capture differ by, so none is the same capture as another (advisor/fleet/capture.py)."""
    base = json.loads((SAMPLES / "weight_reload" / "summary.json").read_text())
    paths = []
    for i in range(start, start + count):
        path = folder / f"kernel_{i:04d}" / "summary.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**base, "total_time": base["total_time"] * 1.002 ** i}))
        paths.append(path)
    return paths


def mixed_folder(folder: Path) -> Path:
    """One profile of each kind, a rank folder, a corrupt file, a duplicate and files that are no profile."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAMPLES / "weight_reload" / "summary.json", folder / "neuron.json")
    shutil.copy(SAMPLES / "ncu_seed004" / "details.csv", folder / "ncu.csv")
    shutil.copy(SAMPLES / "rbln_atom_cnn" / "trace.pb", folder / "rbln.pb")
    shutil.copytree(SAMPLES / "multi_rank", folder / "ranks")
    (folder / "ranks" / "README.md").unlink(missing_ok=True)
    (folder / "other").mkdir()
    shutil.copy(SAMPLES / "weight_reload" / "summary.json", folder / "other" / "copy.json")  # a duplicate
    (folder / "broken.json").write_text('{"n_1": {"hbm_read_bytes": ')  # truncated (a Neuron field: Neuron's to read)
    (folder / "README.md").write_text("not a profile\n")
    (folder / "notes.yaml").write_text("a: 1\n")
    return folder
