"""A kind's own command-line options (its data/options.yaml), read and checked in one place: the command line
adds them (advisor/cli/options.py), and `kinds.check()` refuses a bad file before any command is built."""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.core.errors import AdvisorError
from advisor.kinds.base import ProfileKind

OPTIONS_FILE = "options.yaml"
_SPEC_KEYS = ("flag", "dest", "metavar", "help", "action", "entry")
_ACTIONS = ("store", "store_true")
_FLAG = re.compile(r"--[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class KindOption:
    """One command-line option a kind declares in its data/options.yaml."""

    kind: str  # the kind's title, for the argument group and errors
    flag: str  # --neff
    dest: str  # neff: the key in LoadOptions.kind_options
    help: str
    action: str = "store"  # store | store_true
    metavar: str | None = None


def kind_option_specs(kind: ProfileKind) -> list[KindOption]:
    """The options a kind declares, validated: a mistake names the file and the entry."""
    path = kind.folder / OPTIONS_FILE
    if not path.is_file():
        return []
    where = str(path)
    data = kind.data(OPTIONS_FILE)
    entries = data.get("options", [])
    if not data or not isinstance(entries, list):
        raise AdvisorError(where, "must be a mapping with `options:`, a list of {flag, dest, metavar, help, "
                                  "action}")
    specs = []
    for i, entry in enumerate(entries):
        at = f"options[{i}]"
        if not isinstance(entry, dict):
            raise AdvisorError(where, f"{at}: must be a mapping of {', '.join(_SPEC_KEYS)}")
        unknown = [k for k in entry if k not in _SPEC_KEYS]
        if unknown:
            raise AdvisorError(where, f"{at}: unknown key '{unknown[0]}'; known: {', '.join(_SPEC_KEYS)}")
        flag, help_text = entry.get("flag"), entry.get("help")
        if not isinstance(flag, str) or not _FLAG.fullmatch(flag):
            raise AdvisorError(where, f"{at}: flag must be a long option such as --neff")
        dest = entry.get("dest") or flag[2:].replace("-", "_")  # as ProfileKind.option_dests reads it
        action = entry.get("action", "store")
        metavar = entry.get("metavar")
        if not isinstance(dest, str) or not dest.isidentifier():
            raise AdvisorError(where, f"{at} ({flag}): dest must be a Python identifier")
        if not isinstance(help_text, str) or not help_text.strip():
            raise AdvisorError(where, f"{at} ({flag}): help is required")
        if action not in _ACTIONS:
            raise AdvisorError(where, f"{at} ({flag}): action must be one of {', '.join(_ACTIONS)}")
        if not isinstance(entry.get("entry", False), bool):
            raise AdvisorError(where, f"{at} ({flag}): entry must be true or false")
        if metavar is not None and (not isinstance(metavar, str) or action != "store"):
            raise AdvisorError(where, f"{at} ({flag}): metavar must be text, and only for action store")
        specs.append(KindOption(kind.title, flag, dest, " ".join(help_text.split()), action, metavar))
    return specs
