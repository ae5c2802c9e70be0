"""The occupancy section: ncu's block limits beside advisor's recomputation, and the waves."""

from __future__ import annotations

from typing import Any

from advisor.core import units as fmt
from advisor.profilers.ncu import KIND
from advisor.profilers.ncu.report.common import NO_VALUE, _any, _has, _metric, _value_rows
from advisor.report.document import Paragraph, Section, Table, code, escape
from advisor.report.view import View

# --- occupancy ------------------------------------------------------------------------------------


def _checked(view: View, name: str) -> tuple[str, str, str]:
    """(ncu's value, advisor's value, agreement) for a figure ncu reports and advisor may recompute."""
    metric = _metric(view, name)
    if metric is None or (metric.value is None and metric.source == "reported" and metric.check is None):
        return fmt.UNAVAILABLE, fmt.UNAVAILABLE, NO_VALUE
    if metric.source != "reported":
        ours = fmt.value(metric.value, metric.unit)
        return fmt.UNAVAILABLE, ours, "ncu did not report it" if metric.value is not None else NO_VALUE
    ncu = fmt.value(metric.value, metric.unit)
    check = metric.check
    if check is None and not metric.formula:
        return ncu, NO_VALUE, ("measured" if name.startswith("achieved_") else "no recomputation in the packs")
    if check is None or check.derived_value is None:
        missing = [n for n in metric.inputs if (view.hw(n[3:]) if n.startswith("hw_") else view.raw(n)) is None]
        why = f" (needs {', '.join(code(n) for n in missing[:3])})" if missing else ""
        if missing:
            return ncu, fmt.UNAVAILABLE, f"not recomputed{why}"
        return ncu, fmt.UNAVAILABLE, "not cross-checked (derived from derived figures)"
    ours = fmt.value(check.derived_value, metric.unit)
    if check.agrees:
        return ncu, ours, "agrees"
    apart = (f" ({check.relative_difference * 100:.2g} % apart)" if check.relative_difference is not None else "")
    return ncu, ours, f"**disagrees**{apart}"


def _limit_value(view: View, name: str) -> float | None:
    """The block limit as ncu reports it, else as advisor recomputes it."""
    metric = _metric(view, name)
    if metric is None:
        return None
    if metric.value is not None:
        return metric.value
    return metric.check.derived_value if metric.check else None


def limiters(view: View) -> tuple[list[str], float | None]:
    """The block limits that bind (the smallest; ties all named), and that number of blocks."""
    limits = [(label, _limit_value(view, name)) for name, label, _ in KIND.data("report.yaml")["block_limits"]]
    known = [(label, v) for label, v in limits if v is not None]
    if all(label == "SM" for label, _ in known):  # the SM's limit is the hardware's, not the launch's: alone it
        return [], None  # says nothing of this launch (a failed one has no launch figures; issue 23)
    least = min(v for _, v in known)
    return [label for label, v in known if v == least], least


def _limiter_text(view: View) -> str:
    names, blocks = limiters(view)
    if not names:
        return ""
    what = " and ".join(n.lower() if n != "SM" else "the SM's block limit" for n in names)
    full = view.raw("theoretical_occupancy_percent")
    if full is not None and full >= 0.9999:  # nothing holds occupancy below the maximum
        return f"no limit binds below full occupancy ({what} allow {fmt.value(blocks, 'blocks')} per SM)"
    return f"limited by {what} ({fmt.value(blocks, 'blocks')} per SM)"


def _occupancy(view: View) -> Section | None:
    limit_names = [name for name, _, _ in KIND.data("report.yaml")["block_limits"]]
    occ_names = [name for name, _ in KIND.data("report.yaml")["occupancy"]]
    wave_names = [name for name, _ in KIND.data("report.yaml")["waves"]]
    if not _any(view, limit_names + occ_names + wave_names) and not any(
            (m := _metric(view, n)) is not None and m.check is not None for n in limit_names):
        return None
    blocks: list[Any] = []
    sentence = _occupancy_sentence(view)
    if sentence:
        blocks.append(Paragraph(sentence))
    names, _ = limiters(view)
    rows = []
    for name, label, basis in KIND.data("report.yaml")["block_limits"]:
        ncu, ours, agreement = _checked(view, name)
        shown = f"**{escape(label)}** (smallest)" if label in names else escape(label)
        rows.append((shown, ncu, ours, agreement, escape(basis)))
    blocks.append(Table(("Block limit", "Nsight Compute", "advisor", "Agreement", "advisor recomputes from"),
                        tuple(rows), align=("left", "right", "right", "left", "left"),
                        caption="Blocks per SM each resource allows; the smallest binds"))
    occupancy_rows = []
    for name, label in KIND.data("report.yaml")["occupancy"]:
        ncu, ours, agreement = _checked(view, name)
        occupancy_rows.append((escape(label), ncu, ours, agreement))
    if _any(view, occ_names) or any(r[2] != fmt.UNAVAILABLE for r in occupancy_rows):
        blocks.append(Table(("Occupancy", "Nsight Compute", "advisor", "Agreement"), tuple(occupancy_rows),
                            align=("left", "right", "right", "left")))
    if _any(view, wave_names):
        if _has(view, "waves_per_sm"):
            blocks.append(Paragraph(_waves_sentence(view)))
        blocks.append(Table(("Launch", "Value", "Source"), _value_rows(view, KIND.data("report.yaml")["waves"]),
                            align=("left", "right", "left")))
    return Section("Occupancy", tuple(blocks), "occupancy")


def _occupancy_sentence(view: View) -> str:
    theoretical, achieved = view.raw("theoretical_occupancy_percent"), view.raw("achieved_occupancy_percent")
    limiter = _limiter_text(view)
    if theoretical is None and achieved is None:
        return f"Occupancy is unavailable; the block limits say it is {limiter}." if limiter else ""
    text = (f"Theoretical occupancy **{view.show('theoretical_occupancy_percent')}**, achieved "
            f"**{view.show('achieved_occupancy_percent')}**")
    if limiter:
        text += f"; {limiter}"
    if theoretical is not None and achieved is not None and theoretical > 0:
        text += (f". The achieved occupancy is {fmt.percent(achieved / theoretical)} of what the launch allows: "
                 + ("the gap is scheduling overhead or imbalance (blocks finishing at different times, a partial "
                    "last wave), not a resource limit" if achieved / theoretical < 0.8 else
                    "no resource limit binds, so what gap there is comes from scheduling or imbalance"
                    if theoretical >= 0.999 else
                    "the resource limits, not imbalance, set the occupancy"))
    return text + "."


def _waves_sentence(view: View) -> str:
    waves = view.raw("waves_per_sm")
    if waves is None:
        return "Launch figures:"
    if waves < 1:
        blocks, sms = view.raw("grid_size"), view.raw("sm_count")
        if blocks is not None and sms is not None and blocks < sms:
            return (f"**{fmt.ratio(waves)} waves per SM**: {fmt.count(blocks)} blocks on {fmt.count(sms)} SMs, "
                    f"so {fmt.count(sms - blocks)} SMs stay idle for the whole kernel.")
        spread = (f" ({fmt.count(blocks)} blocks on {fmt.count(sms)} SMs)" if blocks is not None and sms is not None
                  else "")
        return (f"**{fmt.ratio(waves)} waves per SM**: the grid does not fill the GPU's block slots once{spread}, "
                "so part of each SM's capacity stays unused for the whole kernel.")
    fill = view.raw("tail_wave_fraction")
    tail = ("" if fill is None else " The waves divide evenly: no partial last wave." if fill == 0
            else f" The last wave is {view.show('tail_wave_fraction')} full.")
    return f"{fmt.ratio(waves)} waves per SM.{tail}"


