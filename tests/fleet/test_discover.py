"""Which inputs a fleet run finds: folder walks, rank folders kept whole, globs, the store left out."""

from __future__ import annotations

from pathlib import Path

from fleet.fleet_support import mixed_folder

from advisor.fleet.discover import content_hash, discover


def names(found, root: Path) -> list[str]:
    return [c.path.relative_to(root).as_posix() for c in found.candidates]


def test_walk_keeps_rank_folders_whole_and_skips_files_no_profile_has(tmp_path):
    root = mixed_folder(tmp_path / "fleet")
    found = discover([str(root)])
    assert names(found, root) == ["broken.json", "ncu.csv", "neuron.json", "other/copy.json", "ranks", "rbln.pb"]
    assert found.skipped == 2  # README.md, notes.yaml
    ranks = next(c for c in found.candidates if c.path.name == "ranks")
    assert ranks.size == sum(p.stat().st_size for p in ranks.path.iterdir())


def test_globs_named_files_and_missing_paths(tmp_path):
    root = mixed_folder(tmp_path / "fleet")
    found = discover([str(root / "*.json"), str(root / "notes.yaml"), str(root / "absent.json"),
                      str(root / "neuron.json")])  # named twice: found once
    assert names(found, root) == ["broken.json", "neuron.json", "notes.yaml"]
    assert found.missing == (str(root / "absent.json"),)


def test_the_store_folder_is_never_searched(tmp_path):
    root = mixed_folder(tmp_path / "fleet")
    (root / "store" / "analyses" / "ab").mkdir(parents=True)
    (root / "store" / "analyses" / "ab" / "ab12.json").write_text("{}")
    assert "store/analyses/ab/ab12.json" not in names(discover([str(root)], root / "store"), root)
    assert "store/analyses/ab/ab12.json" in names(discover([str(root)]), root)


def test_content_hash_of_files_and_folders(tmp_path):
    root = mixed_folder(tmp_path / "fleet")
    assert content_hash(root / "neuron.json") == content_hash(root / "other" / "copy.json")
    assert content_hash(root / "neuron.json") != content_hash(root / "ncu.csv")
    before = content_hash(root / "ranks")
    (root / "ranks" / "profile_rank_0.json").rename(root / "ranks" / "profile_rank_9.json")
    assert content_hash(root / "ranks") != before  # names count, not only bytes


def test_the_endings_a_walk_keeps_come_from_the_kinds():
    """Issue 24 item 7: file endings are each kind's knowledge (its report.yaml `fleet: endings:`), not a list in
    the fleet's code or data: every installed kind's endings are kept, and saved analyses' .json."""
    from advisor.fleet.discover import profile_endings
    from advisor.kinds import available

    endings = set(profile_endings())
    for kind in available():
        assert set((kind.data("report.yaml").get("fleet") or {}).get("endings", ())) <= endings
    assert {".ntff", ".ncu-rep", ".pb", ".json"} <= endings
