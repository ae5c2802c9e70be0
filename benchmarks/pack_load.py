"""Time to load a rule pack of N rules (default 10,000, the size tests/packs/test_load.py loads without timing it),
in this process, after the built-in packs are loaded once (imports and caches warm). Prints the median of the
rounds, the rate, and the target of docs/performance.md it is held to.

    python benchmarks/pack_load.py [--rules 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from advisor.packs.load import load_packs

RULE = """
  - id: T{i:05d}
    name: rule-{i}
    title: A test rule
    category: memory
    severity: high
    when: weight_reload_ratio > min_ratio
    params: {{min_ratio: 2}}
    message: Reload {{weight_reload_ratio:.1f}}x of {{weight_size_bytes}}.
    recommendation: Reuse weights.
"""
TARGET_S = 10.0  # 10,000 rules; docs/performance.md


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    load_packs(kind="neuron")  # warm: imports, the built-in packs
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.yaml"
        path.write_text("pack: bench\nversion: 1.0.0\nrules:" + "".join(RULE.format(i=i) for i in range(args.rules)),
                        encoding="utf-8")
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            ruleset = load_packs([path])
            times.append(time.perf_counter() - start)
        assert len(ruleset.rules) > args.rules
    median = statistics.median(times)
    target = TARGET_S * args.rules / 10_000
    print(f"| {args.rules:,} rules | {median:.2f} s (median of {args.repeat}) | {args.rules / median:,.0f} rules/s "
          f"| target ≤ {target:.1f} s: {'met' if median <= target else 'MISSED'} |")
    return 0 if median <= target else 1


if __name__ == "__main__":
    sys.exit(main())
