"""The Nsight Compute kind's inputs, recognised by content: an .ncu-rep report (magic `NVR\\0`), a
details/--metrics CSV, a raw CSV, or the default text output, each with any ==PROF== lines and
application output around it. Every kernel launch in the file is a profile entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.model import Profile
from advisor.inputs.limits import TextLimits
from advisor.inputs.text import decode, decode_head, read_bytes, read_head
from advisor.kinds.base import LoadOptions
from advisor.profilers.ncu.adapters import details_csv, raw_csv, report_file, text_output
from advisor.profilers.ncu.adapters.launches import Launch, entry_name, to_profile

TEXT_READERS = (details_csv, raw_csv, text_output)  # in the order they are tried
HEAD_CHARACTERS = 1 << 20  # as much as kind detection reads
_PROFILER_LINE = re.compile(r"^==(PROF|ERROR|WARNING)==", re.MULTILINE)
_ERROR_LINE = re.compile(r"^==ERROR==[ \t]*(.*)$", re.MULTILINE)
INPUT_PATTERNS = {"ncu profiler line": (_PROFILER_LINE, ("==PROF==", "==ERROR==", "\n")),
                  "ncu error line": (_ERROR_LINE, ("==ERROR==", " ", "\n"))}


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return False
    if report_file.sniff(head):
        return True
    text = decode_head(head)
    if text is None:
        return False
    return any(reader.sniff(text) for reader in TEXT_READERS) or bool(_PROFILER_LINE.search(text))


def _launches(path: Path, options: LoadOptions) -> tuple[str, list[Launch]]:
    where = str(path)
    if report_file.sniff(read_head(path, len(report_file.MAGIC))):  # a report is read by the library, not here
        return report_file.NAME, report_file.load(path, options)
    limits = TextLimits.for_memory(options.max_memory)
    text = decode(read_bytes(path, limits.max_bytes, "size limit for text exports"))
    if text is None:
        raise AdvisorError(where, "binary data, not an Nsight Compute export")
    limits.check_lines(text, where)
    head = text[:HEAD_CHARACTERS]  # what detection looked at: the readers recognise their format there
    for reader in TEXT_READERS:
        if reader.sniff(head):
            return reader.NAME, reader.parse(text, where)
    errors = _ERROR_LINE.findall(text)
    if errors:
        raise AdvisorError(where, f"ncu reported an error and no results: {errors[0].strip()[:200]}")
    raise AdvisorError(where, "ncu output without results (no CSV block, no `Section:` tables): the launch was "
                              "not profiled")


@dataclass(frozen=True)
class _Failed:
    """A launch ncu could not measure: named in every profile's notes, left out of the run (issue 23)."""

    name: str  # `<ID> <function>`
    why: str


def _failure(launch: Launch, profile: Profile | None, others_timed: bool) -> str | None:
    """Why the launch holds no data to analyse, or None. No usable number at all; or no duration while ncu's
    rules report errors (an incomplete result: NaN values) or the file's other launches have one."""
    if profile is None:
        return "every value is n/a or nan"
    if profile.values.get("total_time") is not None:
        return None
    errors = sum(rule.type == "ERR" for rule in launch.rules)
    if errors:
        return f"no duration, and {errors} of ncu's rule results are errors"
    return "no duration, unlike the other launches" if others_timed else None


def _failure_note(failed: list[_Failed], total: int) -> str:
    named = "; ".join(f"{f.name} has no data ({f.why})" for f in failed[:5])
    more = f"; and {len(failed) - 5} more" if len(failed) > 5 else ""
    return (f"{total - len(failed)} of {total} launches have data: {named}{more}. ncu could not measure "
            f"{'it' if len(failed) == 1 else 'them'}; the run's totals, ranking and Amdahl figures leave "
            f"{'it' if len(failed) == 1 else 'them'} out.")


def load(path: Path, options: LoadOptions) -> list[Profile]:
    """Every kernel launch in the file with data, in file order; failed launches are named in the notes."""
    fmt, launches = _launches(path, options)
    if not launches:
        raise AdvisorError(str(path), "no kernel launches in it")
    seen: set[str] = set()
    for launch in launches:  # two runs in one file reuse IDs: their launches are kept apart, then refused
        if launch.id in seen:
            raise AdvisorError(str(path), f"two launches share the ID {launch.id[:40]}: the file holds more than "
                                          "one ncu run; export one run per file")
        seen.add(launch.id)
    names = [entry_name(launch) for launch in launches]
    shape = f"{len(launches)} kernel launch{'es' if len(launches) != 1 else ''}"
    candidates = [to_profile(launch, str(path), fmt, shape, names) for launch in launches]
    timed = sum(p is not None and p.values.get("total_time") is not None for p in candidates)
    failed: list[_Failed] = []
    kept: list[tuple[Launch, Profile]] = []
    for launch, profile in zip(launches, candidates, strict=True):
        why = _failure(launch, profile, timed > 0)
        if why is None and profile is not None:
            kept.append((launch, profile))
        else:
            failed.append(_Failed(entry_name(launch), why or "no data"))
    if not kept:
        values = sum(len(launch.rows) for launch in launches)
        raise AdvisorError(str(path), f"no usable metric ({values} field{'' if values == 1 else 's'}, none numeric): "
                                      "every value is n/a or nan — the profiler could not measure these launches")
    _refuse_failed_pick(str(path), options, failed, kept)
    if not failed:
        return [profile for _, profile in kept]
    note = _failure_note(failed, len(launches))
    usable = [entry_name(launch) for launch, _ in kept]
    shape = f"{len(kept)} of {shape} with data"
    return [_with_note(launch, profile, note, usable, shape) for launch, profile in kept]


def _with_note(launch: Launch, profile: Profile, note: str, usable: list[str], shape: str) -> Profile:
    many = len(usable) > 1
    source = replace(profile.source, shape=shape, entry=entry_name(launch) if many else None,
                     entries=tuple(usable) if many else ())
    return replace(profile, source=source, notes=(*profile.notes, note))


def _refuse_failed_pick(where: str, options: LoadOptions, failed: list[_Failed],
                        kept: list[tuple[Launch, Profile]]) -> None:
    """`--kernel 4` naming a launch ncu could not measure gets that reason, not "no such entry"."""
    pick = options.option("kernel") or options.entry
    if pick is None or any(pick == entry_name(launch) or pick in entry_name(launch).split(" ", 1)
                           or (not pick.isdigit() and pick in launch.kernel) for launch, _ in kept):
        return  # a launch with data answers to it (as advisor.kinds.entries.choose matches)
    for f in failed:
        if pick == f.name or pick in f.name.split(" ", 1):
            raise AdvisorError(where, f"--kernel {pick}: launch {f.name} has no data ({f.why}); ncu could not "
                                      "measure it, so there is nothing to analyse")
