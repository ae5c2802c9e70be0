"""One name's stored attempts -> History -> a document (or JSON): total time per attempt, speedup
against the first and the previous, findings fixed and new, regressions under the noise floor."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.comparing.diff import judge
from advisor.core import units as fmt
from advisor.fleet.attempts import evident, points, records
from advisor.fleet.lookup import attempts as ordered_attempts
from advisor.fleet.summary import Failure, failures, limits, rules_by_hash
from advisor.report.compare_build import VERDICT_MARK
from advisor.report.document import Bullets, Chart, Document, Paragraph, Section, Table, code, escape
from advisor.report.render import Rendered, render_document

if TYPE_CHECKING:
    import pandas as pd

    from advisor.fleet.store import Store

JSON_FORMAT = "advisor-fleet-history"


@dataclass(frozen=True)
class Attempt:
    """One point in time of the name: the profiles a run stored for it (one, or one per rank or core)."""

    label: str  # --label, else capture time, else "run N"
    captured: str | None
    run: int
    paths: tuple[str, ...]
    hashes: tuple[str, ...]
    kind: str
    device: str | None  # when its profiles agree
    total_time: float | None  # seconds; the median over its profiles
    vs_first: float | None  # speedup: the first attempt's time / this one's (× > 1 is faster)
    vs_previous: float | None
    verdict: str  # against the previous attempt: "better" | "worse" | "unchanged" | "n/a"
    findings: tuple[str, ...]  # fired in any of its profiles
    fixed: tuple[str, ...]  # fired in the previous attempt, not in this one
    new: tuple[str, ...]

    @property
    def regression(self) -> bool:
        return self.verdict == "worse"


@dataclass(frozen=True)
class History:
    name: str
    store: str
    noise: float
    attempts: tuple[Attempt, ...]
    failures: tuple[Failure, ...]  # attempts of the name that failed to load


def _speedup(before: float | None, after: float | None) -> float | None:
    return before / after if before and after else None


def build_history(profiles: pd.DataFrame, findings: pd.DataFrame, name: str, store: str,
                  noise: float = 0.02) -> History:
    rows = ordered_attempts(profiles, name, name)
    steps = points(rows, rules_by_hash(records(findings[findings["name"] == name])), captures=True)
    out: list[Attempt] = []
    for i, step in enumerate(steps):
        previous = steps[i - 1] if i else None
        devices = {r["device"] for r in step.rows}
        verdict = judge(previous.total_time, step.total_time, "lower", noise)[1] if previous else "n/a"
        out.append(Attempt(step.label, step.captured, step.run, step.paths, tuple(r["hash"] for r in step.rows),
                           step.rows[0]["kind"], devices.pop() if len(devices) == 1 else None, step.total_time,
                           _speedup(steps[0].total_time, step.total_time) if i else None,
                           _speedup(previous.total_time, step.total_time) if previous else None, verdict, step.rules,
                           tuple(sorted(set(previous.rules) - set(step.rules))) if previous else (),
                           tuple(sorted(set(step.rules) - set(previous.rules))) if previous else ()))
    return History(name, store, noise, tuple(out), failures(records(profiles[profiles["name"] == name])))


def history_json(history: History) -> str:
    data: dict[str, Any] = {"format": JSON_FORMAT, "version": 1, **asdict(history)}
    data["attempts"] = [{**a, "regression": h.regression} for a, h in zip(data["attempts"], history.attempts,
                                                                            strict=True)]
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _rules(names: tuple[str, ...]) -> str:
    return ", ".join(code(n) for n in names) or "—"


def _chart(history: History, labelled: int) -> Chart | None:
    known = [a for a in history.attempts if a.total_time is not None]
    if len(known) < 2:
        return None
    scale, unit = fmt.axis("s", [a.total_time or 0.0 for a in known])
    values = [(a.total_time or 0.0) / scale for a in known]
    if len(known) <= labelled:  # few attempts: each point named and labelled with its time
        spec = {"kind": "series", "labels": [a.label for a in known], "values": values,
                "texts": [fmt.seconds(a.total_time) for a in known], "ylabel": f"total time ({unit})"}
    else:
        spec = {"kind": "line", "values": values, "xlabel": "attempt (in order)", "ylabel": f"total time ({unit})"}
    return Chart("history", "Total time per attempt", spec, alt=f"Total time of each attempt of {history.name}")


def _headline(history: History) -> list[str]:
    first, last = history.attempts[0], history.attempts[-1]
    items = [f"{len(history.attempts)} attempt(s) from {escape(first.label)} to {escape(last.label)}."]
    if len(history.attempts) > 1:
        overall = _speedup(first.total_time, last.total_time)
        items.append(f"Latest against first: {fmt.speedup(overall)} ({fmt.seconds(first.total_time)} → "
                     f"{fmt.seconds(last.total_time)}); latest against previous: {fmt.speedup(last.vs_previous)}.")
    regressions = [a for a in history.attempts if a.regression]
    items.append(f"**{len(regressions)} regression(s)**: " + ", ".join(escape(a.label) for a in regressions) + "."
                 if regressions else f"No regression beyond the {fmt.percent(history.noise)} noise floor.")
    if history.failures:
        items.append(f"{len(history.failures)} attempt(s) failed to load; see Failures.")
    guessed = [b.label for a, b in pairwise(history.attempts) if _order_unknown(a, b)]
    if guessed:
        items.append("The order of " + ", ".join(escape(g) for g in guessed) + " after the attempt before it is not "
                     "known (no capture time, one run, and no before/after or numbered names): they are listed by "
                     "path, so a speedup or regression between them may run the wrong way.")
    return items


def _order_unknown(a: Attempt, b: Attempt) -> bool:
    """Two attempts one run stored, without a capture time, whose paths say nothing of which came first."""
    if a.captured or b.captured or a.run != b.run:
        return False
    ranks = {evident(p)[0] for p in (*a.paths, *b.paths)}
    numbered = any(any(isinstance(part, int) for part in evident(p)[1]) for p in (*a.paths, *b.paths))
    return ranks == {1} and not numbered


def _inputs(name: str, a: Attempt) -> str:
    where = f"({escape(a.kind)}{', ' + escape(a.device) if a.device else ''})"
    if len(a.paths) == 1:
        # a label shared with another capture of the run names neither: the path is how to give it
        spec = "" if a.label.endswith(f" ({a.paths[0]})") else f", {code(f'store:{name}@{a.label}')}"
        return f"{escape(a.label)}: {code(a.paths[0])} {where}{spec}"
    return (f"{escape(a.label)}: {len(a.paths)} profiles {where}, median time {fmt.seconds(a.total_time)}: "
            + ", ".join(code(p) for p in a.paths))


def history_document(history: History, config: dict[str, Any]) -> Document:
    rows = tuple((str(i), escape(a.label), fmt.seconds(a.total_time), fmt.speedup(a.vs_first) if i > 1 else "—",
                  fmt.speedup(a.vs_previous) if i > 1 else "—",
                  "**regression**" if a.regression else VERDICT_MARK.get(a.verdict, escape(a.verdict)),
                  _rules(a.fixed), _rules(a.new)) for i, a in enumerate(history.attempts, 1))
    blocks: list[Any] = [
        Paragraph(f"Attempts in order of capture time, else run, else the order their paths make evident ("
                  "`before` ahead of `after`, `attempt_2` ahead of `attempt_10`), else path; an attempt of several "
                  "profiles (the ranks or cores of one capture: paths that differ only by a number) has their median "
                  "time, and "
                  "two captures stored by one run are two attempts. Speedups are the other attempt's time over this "
                  f"one's (above 1× is faster); changes within ±{fmt.percent(history.noise)} are unchanged "
                  "(`--noise`), as in `advisor compare`."),
        Table(("#", "Attempt", "Total time", "vs first", "vs previous", "Verdict", "Fixed", "New"), rows,
              align=("right", "left", "right", "right", "right", "left", "left", "left"))]
    chart = _chart(history, config["history"]["labelled_points"])
    if chart:
        blocks.append(chart)
    stored = tuple(_inputs(history.name, a) for a in history.attempts)
    sections = [Section("Summary", (Bullets(tuple(_headline(history))),), "summary"),
                Section("Attempts", tuple(blocks), "attempts"),
                Section("Inputs", (Paragraph("Each attempt's profile, and how `advisor compare --store` names it:"),
                                   Bullets(stored)), "inputs")]
    if history.failures:
        sections.append(Section("Failures", (Table(("Path", "Message"), tuple(
            (code(f.path), escape(f.message)) for f in history.failures)),), "failures"))
    return Document(f"History: {escape(history.name)}", (f"Store: {code(history.store)}",), tuple(sections))


def stored_history(store: Store, name: str, noise: float = 0.02) -> History:
    """The name's attempts as the store holds them now."""
    profiles = store.profiles()
    return build_history(profiles, store.findings(profiles), name, str(store.folder), noise)


def render_history(store: Store, name: str, fmt_: str, output: Path | None, page_size: str = "a4",
                   noise: float = 0.02, history: History | None = None) -> Rendered:
    """`history`: the attempts when the caller has them already (`stored_history`)."""
    history = history or stored_history(store, name, noise)
    if fmt_ == "json":
        return Rendered(history_json(history).encode("utf-8"))
    return render_document(history_document(history, limits()), fmt_, output, page_size)
