"""The real-trace fidelity suite: advisor's `torch` diagnosis graded against an expert's expectations.

Each file in tests/fidelity/expectations/ names a real trace under ../shared/reference/ and says what a PyTorch
performance engineer concludes from it (written from the trace's own numbers, tests/fidelity/expert_figures.py,
before looking at advisor's output): the acceptable root causes, the findings that must not fire, bounds on
estimates and key figures with tolerances. This module runs `advisor.api.analyze` on every trace that exists and
grades it:

- right: the top root cause (the first root-cause finding above info) is acceptable, or nothing above info fired
  where `none` is acceptable; nothing in must_not_fire fired above info; no estimate above its bound and none
  negative; the verdict's estimate is not 0 %; every figure within its tolerance; no finding uses a word the
  expectation forbids on that vendor (must_not_say);
- partly: the verdict is acceptable but something else above is violated, or an acceptable cause ranks second;
- wrong: otherwise.

    python -m tests.fidelity.run                          # print the scoreboard
    python -m tests.fidelity.run --write docs/fidelity.md # regenerate the document
    python -m tests.fidelity.run --write-baseline         # record today's grades as the floor (review the diff)
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"
EXPECTATIONS = HERE / "expectations"
BASELINE = HERE / "baseline.yaml"
DOC = ROOT / "docs" / "fidelity.md"
RULES = ROOT / "rules" / "torch"  # the torch pack: every yaml file of the folder with a `rules:` list
GRADES = ("wrong", "partly", "right")  # in increasing order
KEYS = {"trace", "verdict", "acceptable_root_causes", "must_not_fire", "max_estimate", "figures", "why",
        "must_not_say"}
EPS = 1e-9


@dataclass
class Graded:
    name: str  # the expectation's stem
    trace: str
    verdict: str  # the expert's
    advisor: str  # advisor's verdict, in words
    grade: str
    problems: list[str] = field(default_factory=list)
    top: str | None = None
    checked_figures: int = 0


def expectation_files() -> list[Path]:
    return sorted(EXPECTATIONS.glob("*.yaml"))


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: not a mapping")
    return data


def torch_rule_names() -> set[str]:
    names = set()
    for path in sorted(RULES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        rules = data.get("rules") if isinstance(data, dict) else None
        names |= {r["name"] for r in rules or [] if isinstance(r, dict) and "name" in r}
    return names


def check_expectation(exp: dict[str, Any], rule_names: set[str]) -> list[str]:
    """What is wrong with an expectations file's shape: unknown keys or rules, missing parts, bad figures."""
    errors = [f"unknown key {k!r}" for k in sorted(set(exp) - KEYS)]
    for key in ("trace", "verdict", "acceptable_root_causes", "why"):
        if not exp.get(key):
            errors.append(f"missing {key}")
    named = [*(exp.get("acceptable_root_causes") or []), *(exp.get("max_estimate") or {})]
    for entry in exp.get("must_not_fire") or []:
        if not isinstance(entry, dict) or not entry.get("rule") or not entry.get("reason"):
            errors.append(f"must_not_fire entry {entry!r} needs a rule and a reason")
        else:
            named.append(entry["rule"])
    errors += [f"unknown rule {n!r}" for n in named if n != "none" and n not in rule_names]
    for rule, bound in (exp.get("max_estimate") or {}).items():
        if not isinstance(bound, (int, float)) or not 0 <= bound <= 1:
            errors.append(f"max_estimate {rule}: {bound!r} is not a fraction 0..1")
    for name, spec in (exp.get("figures") or {}).items():
        if not isinstance(spec, dict) or "value" not in spec:
            errors.append(f"figure {name}: needs a value (and a tolerance)")
        elif spec["value"] is not None and not isinstance(spec.get("tolerance"), (int, float)):
            errors.append(f"figure {name}: needs a numeric tolerance")
    return errors


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _num(x: float | None) -> str:
    return "unavailable" if x is None else f"{x:.6g}"


def _above_info(findings: Iterable[Any]) -> list[Any]:
    return [f for f in findings if f.severity != "info"]


def describe(analysis: Any) -> str:
    """advisor's verdict in a line: its root causes above info, with severity and estimate."""
    roots = [f for f in _above_info(analysis.findings) if f.root_cause]
    if not roots:
        info = [f.name for f in analysis.findings if f.severity == "info"]
        context = f" (info: {', '.join(f'`{n}`' for n in info)})" if info else ""
        others = [f.name for f in _above_info(analysis.findings)]
        symptoms = f"; symptoms: {', '.join(f'`{n}`' for n in others)}" if others else ""
        return f"none above info{context}{symptoms}"
    parts = []
    for f in roots[:3]:
        gain = f", up to {_pct(f.estimated_speedup)}" if f.estimated_speedup is not None else ""
        explains = getattr(f, "explains", ()) or ()
        also = f", explains {', '.join(f'`{n}`' for n in explains)}" if explains else ""
        parts.append(f"`{f.name}` ({f.severity}{gain}{also})")
    more = f" and {len(roots) - 3} more" if len(roots) > 3 else ""
    return "; then ".join(parts) + more


def grade(name: str, exp: dict[str, Any], analysis: Any) -> Graded:
    """Grade one analysis against its expectations (see the module's docstring)."""
    findings = list(analysis.findings)
    above = _above_info(findings)
    roots = [f for f in above if f.root_cause]
    top = roots[0] if roots else None
    acceptable = set(exp["acceptable_root_causes"])
    verdict_ok = top.name in acceptable if top else "none" in acceptable
    second_ok = not verdict_ok and len(roots) > 1 and roots[1].name in acceptable
    problems: list[str] = []
    if not verdict_ok:
        wanted = " or ".join(f"`{a}`" for a in sorted(acceptable))
        if top is None:
            problems.append(f"no root cause above info, expected {wanted}")
        elif second_ok:
            problems.append(f"top cause `{top.name}`, the acceptable `{roots[1].name}` only second")
        else:
            problems.append(f"top cause `{top.name}` is not acceptable (expected {wanted})")
    for entry in exp.get("must_not_fire") or []:
        hits = [f for f in above if f.name == entry["rule"] and (f.root_cause or not entry.get("as_root_cause_only"))]
        if hits:
            kind = " as a root cause" if entry.get("as_root_cause_only") else ""
            problems.append(f"`{entry['rule']}` fired{kind} ({hits[0].severity}): {entry['reason'].strip()}")
    bounds = exp.get("max_estimate") or {}
    for f in findings:
        est = f.estimated_speedup
        if est is None:
            continue
        if est < 0:
            problems.append(f"`{f.name}` estimates a negative gain ({_pct(est)})")
        if f.name in bounds and est > bounds[f.name] + EPS:
            problems.append(f"`{f.name}` estimates up to {_pct(est)}; the trace allows at most {_pct(bounds[f.name])}")
    if top is not None and top.estimated_speedup == 0:
        problems.append(f"the verdict `{top.name}` estimates a 0 % gain")
    for word in exp.get("must_not_say") or []:
        pattern = re.compile(rf"\b{re.escape(word)}\b")
        said = [f.name for f in findings if pattern.search(" ".join(
            (f.title, f.message, f.recommendation, getattr(f, "root_cause_text", "") or "")))]
        if said:
            problems.append(f"`{said[0]}` says {word!r} on a trace of another vendor")
    checked = 0
    for metric_name, spec in (exp.get("figures") or {}).items():
        metric = analysis.metrics.get(metric_name)
        got = None if metric is None else metric.value
        want = spec["value"]
        checked += 1
        if want is None:
            if got is not None:
                problems.append(f"{metric_name} is {_num(got)}, expected unavailable")
        elif got is None:
            problems.append(f"{metric_name} is {'not reported' if metric is None else 'unavailable'}, "
                            f"expected {_num(want)}")
        elif abs(got - want) > spec["tolerance"] + EPS:
            problems.append(f"{metric_name} is {_num(got)}, expected {_num(want)} ± {_num(spec['tolerance'])}")
    if verdict_ok and not problems:
        result = "right"
    elif verdict_ok or second_ok:
        result = "partly"
    else:
        result = "wrong"
    return Graded(name, exp["trace"], " ".join(exp["verdict"].split()), describe(analysis), result, problems,
                  top.name if top else None, checked)


def run(names: Sequence[str] | None = None, reference: Path = REFERENCE) -> list[Graded]:
    """Every expectation whose trace exists (or those named), analysed and graded, in file-name order."""
    from advisor.api import analyze
    from advisor.core.errors import AdvisorError
    from advisor.packs.load import PackCache

    packs = PackCache()
    out = []
    for path in expectation_files():
        if names and path.stem not in names:
            continue
        exp = load(path)
        trace = reference / exp["trace"]
        if not trace.exists():
            continue
        try:
            analysis = analyze(trace, jobs=1, packs=packs)
        except AdvisorError as exc:
            out.append(Graded(path.stem, exp["trace"], " ".join(exp["verdict"].split()), f"error: {exc}", "wrong",
                              [f"advisor refused the trace: {exc}"]))
            continue
        out.append(grade(path.stem, exp, analysis))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(results: Sequence[Graded]) -> str:
    """docs/fidelity.md: the scoreboard, a summary line, the problems per trace and how to add a trace."""
    counts = {g: sum(r.grade == g for r in results) for g in GRADES}
    lines = [
        "# Fidelity: advisor's torch diagnosis on real traces",
        "",
        "<!-- Generated by `python -m tests.fidelity.run --write docs/fidelity.md`; do not edit by hand. -->",
        "",
        "Each real PyTorch-profiler trace in `../shared/reference/torch-traces/` has an expert's expectations in",
        "`tests/fidelity/expectations/` (written from the trace's own numbers, `tests/fidelity/expert_figures.py`,",
        "before looking at advisor's output). The runner (`tests/fidelity/run.py`) analyses each trace with",
        "`advisor.api.analyze` and grades advisor's verdict: **right** (the top root cause, the first root-cause",
        "finding above info, is acceptable, or nothing above info fired where `none` is expected, and nothing else",
        "is violated), **partly** (the verdict is acceptable but a must-not-fire finding fired, an estimate exceeds",
        "its bound, a figure is out of tolerance or a finding uses another vendor's terms; or an acceptable cause",
        "ranks second), **wrong** (otherwise). `tests/fidelity/test_fidelity.py` fails when a trace grades below",
        "`tests/fidelity/baseline.yaml` or when this page is out of date.",
        "",
        f"**Summary: {counts['right']} right, {counts['partly']} partly, {counts['wrong']} wrong of "
        f"{len(results)} traces.**",
        "",
        "| Trace | Expected verdict | advisor's verdict | Grade | Why |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        why = "; ".join(r.problems[:2]) + (f"; {len(r.problems) - 2} more below" if len(r.problems) > 2 else "")
        if not r.problems:
            why = f"acceptable verdict; {r.checked_figures} figures within tolerance"
        lines.append(f"| `{r.name}` | {_cell(r.verdict)} | {_cell(r.advisor)} | **{r.grade}** | {_cell(why)} |")
    lines += ["", "## Problems per trace", ""]
    for r in results:
        if r.problems:
            lines.append(f"- `{r.name}` ({r.grade}, `{r.trace}`):")
            lines += [f"  - {p}" for p in r.problems]
    if not any(r.problems for r in results):
        lines.append("None.")
    lines += [
        "",
        "## How to add a trace",
        "",
        "1. Put the trace where the suite finds it: under `../shared/reference/` (with its provenance and licence",
        "   in that folder's README), or a small one under `samples/` if its licence allows shipping it.",
        "2. Read it as an expert before running advisor on it: `python tests/fidelity/expert_figures.py TRACE`",
        "   prints the window and its complete steps, device busy and idle (host wait, kernel wait, other), kernel",
        "   classes, communication overlap, launch statistics and queue depth, the host's blocking calls, the",
        "   DataLoader's time and the Ev Idx coverage. Add to the script what the trace needs and it lacks.",
        "3. Write `tests/fidelity/expectations/<trace-stem>.yaml`: `trace` (relative to the reference folder; a",
        "   folder of ranks works too), `verdict` (one line), `acceptable_root_causes` (torch rule names, or `none`:",
        "   no finding above info should fire), `must_not_fire` (each with `rule`, `reason`, and",
        "   `as_root_cause_only: true` where the finding is right as a symptom another explains), `max_estimate`",
        "   (per rule, a fraction of the window), `figures` (advisor's metric names with your `value` and",
        "   `tolerance`; `value: null` for unavailable), optionally `must_not_say` (another vendor's terms), and",
        "   `why`: the numbers that make the verdict right. Never tune an expectation to advisor's output.",
        "4. Run `python -m tests.fidelity.run --write docs/fidelity.md`, add the trace's grade to",
        "   `tests/fidelity/baseline.yaml` (or `--write-baseline` and review the diff), and run",
        "   `pytest tests/fidelity`.",
        "",
    ]
    return "\n".join(lines)


def read_baseline(path: Path = BASELINE) -> dict[str, str]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    return {str(k): str(v) for k, v in (data or {}).items()}


def write_baseline(results: Sequence[Graded], path: Path = BASELINE) -> None:
    head = ("# The grade each real trace reaches today (tests/fidelity/run.py). tests/fidelity/test_fidelity.py fails\n"
            "# when a trace grades below its entry: raise an entry when a change improves a trace, and never lower\n"
            "# one without saying why in the change.\n")
    path.write_text(head + "".join(f"{r.name}: {r.grade}\n" for r in results), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fidelity.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="expectation stems to run (default: all)")
    parser.add_argument("--write", type=Path, metavar="PATH", help="write the scoreboard document to PATH")
    parser.add_argument("--write-baseline", action="store_true", help="record the grades in baseline.yaml")
    ns = parser.parse_args(argv)
    if not REFERENCE.is_dir():
        print(f"no reference traces at {REFERENCE}", file=sys.stderr)
        return 1
    results = run(ns.names or None)
    text = render(results)
    if ns.write:
        ns.write.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if ns.write_baseline:
        write_baseline(results)
    for r in results:
        print(f"{r.grade:7} {r.name}: {r.advisor}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if str(ROOT) not in sys.path:  # run as a script: advisor and the tests' root importable
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
