from advisor.cli import run

raise SystemExit(run())
