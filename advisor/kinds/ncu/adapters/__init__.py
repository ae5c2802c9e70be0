"""The Nsight Compute kind's inputs, recognised by content: an .ncu-rep report (magic `NVR\\0`), a
details/--metrics CSV, a raw CSV, or the default text output, each with any ==PROF== lines and
application output around it. Every kernel launch in the file is a profile entry.
"""

from __future__ import annotations

import re
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.model import Profile
from advisor.inputs.limits import TextLimits
from advisor.inputs.text import decode, decode_head, read_bytes, read_head
from advisor.kinds.base import LoadOptions
from advisor.kinds.ncu.adapters import details_csv, raw_csv, report_file, text_output
from advisor.kinds.ncu.adapters.launches import Launch, entry_name, to_profile

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


def load(path: Path, options: LoadOptions) -> list[Profile]:
    """Every kernel launch in the file, in file order."""
    fmt, launches = _launches(path, options)
    if not launches:
        raise AdvisorError(str(path), "no kernel launches in it")
    names = [entry_name(launch) for launch in launches]
    seen: set[str] = set()
    for launch in launches:  # two runs in one file reuse IDs: their launches are kept apart, then refused
        if launch.id in seen:
            raise AdvisorError(str(path), f"two launches share the ID {launch.id[:40]}: the file holds more than "
                                          "one ncu run; export one run per file")
        seen.add(launch.id)
    shape = f"{len(launches)} kernel launch{'es' if len(launches) != 1 else ''}"
    profiles = [p for launch in launches if (p := to_profile(launch, str(path), fmt, shape, names)) is not None]
    if not profiles:
        values = sum(len(launch.rows) for launch in launches)
        raise AdvisorError(str(path), f"no usable metric ({values} field{'' if values == 1 else 's'}, none numeric): "
                                      "every value is n/a or nan — the profiler could not measure these launches")
    return profiles
