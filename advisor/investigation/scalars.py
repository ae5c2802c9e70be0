"""A context's date written as text (`date: "2026-02-30"`), held to the calendar as an unquoted one is (an
unquoted one is a YAML timestamp: core/yamlsafe.py refuses one no calendar holds, naming its line and field).
"""

from __future__ import annotations

import datetime
import re

from advisor.core.errors import AdvisorError

_ISO_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")  # bounded repeats only: linear on any text


def checked_date(where: str, text: str) -> str:
    """A date written as text (`date: "2026-02-30"`) is held to the calendar as the unquoted one is."""
    match = _ISO_DATE.match(text)
    if match:
        try:
            datetime.date(*map(int, match.groups()))
        except ValueError as exc:
            raise AdvisorError(where, f"date: {text} is not a valid date ({exc})") from None
    return text
