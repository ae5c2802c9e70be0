"""Issue 36: 13 reports cited "advisor issue 23: …", "samples/multi_core: …" or "advisor reference
rbln-profiler.md §6 M16" as a rule's references: provenance a reader cannot follow. A built-in rule's references
name public sources only (vendor documentation, rule sources, papers); the provenance is a comment in the pack."""

from __future__ import annotations

import re

from advisor.packs.load import load_packs

INTERNAL = re.compile(r"^(advisor issue \d|samples/|advisor reference )")


def test_no_built_in_reference_is_internal_provenance():
    internal = [(r.pack, r.name, ref) for r in load_packs().rules for ref in r.references if INTERNAL.match(ref)]
    assert not internal
