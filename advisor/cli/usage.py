"""Usage errors as ruff and sqlfluff give them: one line `advisor: error: usage: …`, exit 2, with "did you mean"
for a misspelt command, action, option or choice, pointing to the help of the command it was given to; and the
global options (--debug, --quiet) taken before or after the command. argparse does the parsing: this only words
its errors and routes the unrecognised arguments to the command that was parsing them."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

from advisor.core.errors import closest

_CHOICE = re.compile(r"argument (?P<name>.+?): invalid choice: (?P<value>.*) \(choose from .*\)", re.DOTALL)
_UNRECOGNIZED = "unrecognized arguments: "
_REQUIRED = "the following arguments are required"
_NUMBER = re.compile(r"-\d+(\.\d*)?([eE][-+]?\d+)?$|-\.\d+$")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line naming what to type instead and whose help to read."""

    _seen: Sequence[str] = ()

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self._seen = list(args) if args is not None else []  # for error(): the arguments this parser was given
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """argparse's, but arguments no parser took are refused by the command that was parsing them (its
        options are the ones a misspelt option was meant as, its help the one to read)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            active = self._active(parsed)
            active._seen = extras  # what no parser took: the misspelt option is among them
            active.error(_UNRECOGNIZED + " ".join(extras))
        return parsed

    def error(self, message: str) -> NoReturn:
        about, help_of = self._worded(message)
        self.exit(2, f"advisor: error: usage: {about} (see `{help_of} --help`)\n")

    def _worded(self, message: str) -> tuple[str, str]:
        """The problem in words, with a suggestion where one is close, and whose help to point to."""
        unknown = self._unknown_option(self._seen) if message.startswith((_UNRECOGNIZED, _REQUIRED)) else None
        if unknown is not None:  # `--fial-on high`, or `--stroe s` that left the required --store missing
            meant = closest(unknown, self._long_options())
            return f"unknown option {unknown}" + (f"; did you mean {meant}?" if meant else ""), self.prog
        choice = _CHOICE.fullmatch(message)
        action = self._action_named(choice["name"]) if choice else None
        if choice is None or action is None or not action.choices:
            return " ".join(message.split()), self.prog
        value = _unquoted(choice["value"])
        meant = closest(value, [str(c) for c in action.choices])
        if isinstance(action, argparse._SubParsersAction):  # a command (or `rules` action) misspelt
            noun = action.metavar.lower() if isinstance(action.metavar, str) else "command"
            what = f"unknown {noun} '{value}'"
            if meant is None:
                return what, self.prog
            return f"{what}; did you mean `{meant}`?", f"{self.prog} {meant}"
        return " ".join(message.split()) + (f"; did you mean `{meant}`?" if meant else ""), self.prog

    def _options(self) -> list[str]:
        return [s for action in self._actions for s in action.option_strings]

    def _long_options(self) -> list[str]:
        return [s for s in self._options() if s.startswith("--")]

    def _unknown_option(self, seen: Sequence[str]) -> str | None:
        """The first argument that looks like an option and is none of this parser's (nor a prefix of one)."""
        known = self._options()
        for arg in seen:
            if arg == "--":
                break
            flag = arg.partition("=")[0]
            if not arg.startswith("-") or arg == "-" or _NUMBER.match(arg) or flag in known:
                continue
            if not (flag.startswith("--") and self.allow_abbrev and any(k.startswith(flag) for k in known)):
                return flag
        return None

    def _action_named(self, name: str) -> argparse.Action | None:
        """The action argparse's message names (`--fail-on`, `-o/--output`, `COMMAND`)."""
        for action in self._actions:
            if name in ("/".join(action.option_strings), action.metavar, action.dest):
                return action
        return None

    def _active(self, parsed: argparse.Namespace) -> Parser:
        """The deepest command parser the arguments reached (`advisor rules list …`: that of `list`)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
                if isinstance(chosen, Parser):
                    return chosen._active(parsed)
        return self


def _unquoted(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


GLOBAL_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--debug", {"action": "store_true", "help": "show tracebacks (before or after the command)"}),
    ("--quiet", {"action": "store_true", "help": "no progress, notes or closing `advisor: wrote` line on stderr; "
                                                 "errors and gates still show (before or after the command)"}),
)


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """--debug and --quiet on the top parser and on every command under it, so `advisor report x --debug` is
    `advisor --debug report x`. A command's copy has no default (argparse.SUPPRESS): given nowhere, the top
    parser's False stands; given before or after the command, it is set."""
    for flag, spec in GLOBAL_OPTIONS:
        parser.add_argument(flag, **spec)
    for command in _commands(parser):
        for flag, spec in GLOBAL_OPTIONS:
            command.add_argument(flag, **spec, default=argparse.SUPPRESS)


def _commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):  # aliases map to the same parser once
                found += [command, *_commands(command)]
    return found
