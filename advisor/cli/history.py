"""`advisor history NAME --store DIR`: one kernel's or model's stored attempts, in order."""

from __future__ import annotations

import argparse

from advisor.cli import options
from advisor.cli.output import emit, output_format


def history(args: argparse.Namespace) -> int:
    from advisor.fleet.history import render_history, stored_history
    from advisor.fleet.store import Store

    noise = options.noise(args)
    fmt = output_format(args, [], "history.pdf", protected=[args.store])  # never into the store it reads
    store = Store.open(args.store)
    history = stored_history(store, args.name, noise)
    emit(args, render_history(store, args.name, fmt, args.output, args.page_size, noise, history), history)
    return 0
