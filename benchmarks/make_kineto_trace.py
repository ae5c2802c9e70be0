"""Writes a large PyTorch-profiler (Kineto) trace shaped exactly like the real A100 DDP trace of
samples/torch_a100_ddp/ (rank 0 of 2, NCCL 2.17.1): its middle profiler step, copied as many times as the size
asks, streamed to disk one step at a time.

    python benchmarks/make_kineto_trace.py /tmp/kineto1g.json --size-mb 1024

The step is ProfilerStep#5 of the real trace, taken whole: the host events that start in it (cpu_op, among them
record_param_comms with its collective args, user_annotation, cuda_runtime, fwdbwd and ac2g flow starts, on
the main and autograd threads), the device-side annotations that start in it, and the device events its
runtime calls launched (kernel: NCCL all-reduces and broadcasts on stream 40 with their collective args,
compute on stream 7; gpu_memcpy, gpu_memset, ac2g flow ends), which run on past the next step's start as the
real ones do. Each copy is the real file's own text (Kineto's layout: one event over several lines, ts and
dur in µs with three decimals) with its times moved on by one step period (the real ProfilerStep#5 to #6
start: 219,786.430 µs), the step renamed ProfilerStep#N (from #4), its correlation ids (and the ac2g flow ids
equal to them), External ids, fwdbwd flow ids, Record function ids and Sequence numbers moved past the
previous copy's, and "Ev Idx" numbered densely in file order as Kineto does (gaps in those numbers read as a
filtered trace). The real file's header (schemaVersion, deviceProperties, distributedInfo) and ending (the
metadata events, the profiler's span and window markers, INFO, traceName, displayTimeUnit,
baseTimeNanoseconds) frame the copies, the span and the window end stretched to the last copy.

The output is plain JSON, deterministic, within half a step's bytes (≈1.6 MB) of --size-mb MiB (1024: 1,025.5
MiB, 324 steps, 4,377,281 events). The writer holds the real trace (its template) and one step's text at a time:
≈170 MB RSS whatever the size, ≈10 s a GiB. `--stats FILE` writes what was generated (steps, events per
category, bytes). Keep the output out of the repository (under /tmp).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20
SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "torch_a100_ddp" / "a100_ddp_rank0_of2.json.gz"
STEP = 5  # the real trace holds ProfilerStep#4, #5 and #6: the middle one is steady state
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
EVENTS_OPEN = '"traceEvents": ['
SEPARATOR = ",\n  "
# The numbers a copy changes (group 2), by key (group 1); the step's name.
FIELD = re.compile(r'"(ts|dur|id|External id|correlation|Ev Idx|Record function id|Sequence number)": '
                   r'(\d+(?:\.\d{3})?)\b|(?<=ProfilerStep#)\d+')
TS, CORR, EXT, FWDBWD, RECORD, SEQ, EVIDX, STEPNAME = range(8)  # slot kinds
KIND_OF = {"External id": EXT, "correlation": CORR, "Record function id": RECORD, "Sequence number": SEQ,
           "Ev Idx": EVIDX}


def ns(text: str) -> int:
    """Kineto's µs with three decimals as whole ns: exact (a float of a 16-digit µs time is not)."""
    whole, _, frac = text.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def us(value: int) -> str:
    return f"{value // 1000}.{value % 1000:03d}"


@dataclass
class Template:
    """One event's text as literal pieces around the numbers a copy changes, each slot (kind, original value)."""

    pieces: list[str]
    slots: list[tuple[int, int]]
    ts_ns: int
    end_ns: int
    category: str


@dataclass
class Source:
    head: str  # the file up to and including the event list's opening bracket
    step: list[Template]  # the step's events, in file order
    trailing: list[str]  # metadata events, the profiler's span and window markers
    tail: str  # after the event list
    period_ns: int  # ProfilerStep#5 start to #6 start
    shift_ns: int  # copy 0's shift: it starts where ProfilerStep#4 did
    span: dict[int, int]  # id kind -> how far apart copies' ids are
    last_end_ns: int  # the real trace's last event end


def _texts(body: str) -> list[str]:
    """The event list's text, one text per event (Kineto writes `  {` … `  }` for each)."""
    inner = body.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ValueError("unexpected Kineto layout")
    parts = inner[1:-1].split("\n  },\n  {")
    return ["{" + part + ("\n  }" if i < len(parts) - 1 else "}") for i, part in enumerate(parts)]


def _template(text: str, event: dict) -> Template:
    pieces, slots, at = [], [], 0
    ts = end = 0
    for match in FIELD.finditer(text):
        key, value = match.group(1), match.group(2)
        if key == "dur":
            end = ns(value)
            continue
        if key is None:
            kind, original, begin = STEPNAME, 0, match.start()
        else:
            kind = TS if key == "ts" else (CORR if event.get("cat") == "ac2g" else FWDBWD) if key == "id" \
                else KIND_OF[key]
            original, begin = ns(value) if kind == TS else int(value), match.start(2)
            if kind == TS:
                ts = original
        pieces.append(text[at:begin])
        slots.append((kind, original))
        at = match.end()
    pieces.append(text[at:])
    return Template(pieces, slots, ts, ts + end, str(event.get("cat", "")))


def read_source(path: Path = SAMPLE) -> Source:
    raw = gzip.decompress(path.read_bytes()).decode("utf-8")
    opened = raw.index(EVENTS_OPEN) + len(EVENTS_OPEN)
    closed = raw.rindex("\n  ],")
    texts = _texts(raw[opened:closed])
    events = [json.loads(text) for text in texts]
    templates = [_template(text, event) for text, event in zip(texts, events, strict=True)]
    steps = {e["name"]: tpl.ts_ns for e, tpl in zip(events, templates, strict=True)
             if str(e.get("name", "")).startswith("ProfilerStep#")}
    start, end = steps[f"ProfilerStep#{STEP}"], steps[f"ProfilerStep#{STEP + 1}"]
    host_pid = next(e["pid"] for e in events if e.get("cat") == "cpu_op")
    launched = {e["args"]["correlation"] for e, tpl in zip(events, templates, strict=True)
                if e.get("cat") == "cuda_runtime" and start <= tpl.ts_ns < end}
    step, trailing, last_end = [], [], 0
    for event, text, tpl in zip(events, texts, templates, strict=True):
        ph, cat = event.get("ph"), event.get("cat")
        if ph in ("M", "i") or cat == "Trace":
            trailing.append(text)
            continue
        last_end = max(last_end, tpl.end_ns)
        if cat in DEVICE_CATS or (cat == "ac2g" and event.get("pid") != host_pid):  # by the call that launched it
            if (event["args"]["correlation"] if cat in DEVICE_CATS else event["id"]) in launched:
                step.append(tpl)
        elif start <= tpl.ts_ns < end:  # host events and device-side annotations by their start
            step.append(tpl)
    span = {EVIDX: sum(1 for tpl in step for kind, _ in tpl.slots if kind == EVIDX)}
    for kind in (CORR, EXT, FWDBWD, RECORD, SEQ):
        values = [v for tpl in step for k, v in tpl.slots if k == kind]
        span[kind] = max(values) - min(values) + 1 if values else 0
    return Source(head=raw[:opened], step=step, trailing=trailing, tail=raw[closed:], period_ns=end - start,
                  shift_ns=steps[f"ProfilerStep#{STEP - 1}"] - start, span=span, last_end_ns=last_end)


def render_copy(source: Source, copy: int, ev_idx: int) -> tuple[str, int]:
    """Copy `copy` of the step (ProfilerStep#4 + copy) as text ending in a separator, and the next Ev Idx."""
    shift = source.shift_ns + copy * source.period_ns
    moved = {kind: copy * span for kind, span in source.span.items()}
    step_name = str(STEP - 1 + copy)
    out: list[str] = []
    for tpl in source.step:
        pieces = tpl.pieces
        out.append(pieces[0])
        for i, (kind, value) in enumerate(tpl.slots, 1):
            if kind == TS:
                out.append(us(value + shift))
            elif kind == EVIDX:
                out.append(str(ev_idx))
                ev_idx += 1
            elif kind == STEPNAME:
                out.append(step_name)
            else:
                out.append(str(value + moved[kind]))
            out.append(pieces[i])
        out.append(SEPARATOR)
    return "".join(out), ev_idx


def ending(source: Source, copies: int) -> str:
    """The metadata events and markers, the profiler's span and the window end moved with the last copy."""
    stretch = source.shift_ns + (copies - 1) * source.period_ns  # as far as the last copy moved ProfilerStep#5
    last_end = max(tpl.end_ns for tpl in source.step) + stretch
    grown = last_end - source.last_end_ns
    out = []
    for text in source.trailing:
        if '"cat": "Trace"' in text:
            text = re.sub(r'"dur": (\d+\.\d{3})', lambda m: f'"dur": {us(ns(m.group(1)) + grown)}', text)
        elif '"Record Window End"' in text:
            text = re.sub(r'"ts": (\d+\.\d{3})', lambda m: f'"ts": {us(ns(m.group(1)) + grown)}', text)
        out.append(text)
    return SEPARATOR.join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mb", type=float, default=1024, help="target size in MiB (default 1024: 1 GiB)")
    parser.add_argument("--stats", type=Path, help="write what was generated here (JSON)")
    args = parser.parse_args()
    started = time.perf_counter()
    source = read_source()
    target = args.size_mb * MIB - len((source.head + "\n  " + ending(source, 1) + source.tail).encode())
    copies = ev_idx = written = 0
    with open(args.out, "w", encoding="utf-8", newline="") as out:
        out.write(source.head + "\n  ")
        while True:  # copies grow as their ids gain digits: stop at the copy that ends nearest the target
            text, next_idx = render_copy(source, copies, ev_idx)
            size = len(text.encode())
            if copies and written + size / 2 > target:
                break
            out.write(text)
            copies, ev_idx, written = copies + 1, next_idx, written + size
        out.write(ending(source, copies) + source.tail)
    size = args.out.stat().st_size
    categories = Counter()
    for tpl in source.step:
        categories[tpl.category] += copies
    stats = {"file": str(args.out), "bytes": size, "steps": copies,
             "events": len(source.step) * copies + len(source.trailing), "events_by_category": dict(categories),
             "period_us": source.period_ns / 1000, "span_us": (source.shift_ns + copies * source.period_ns) / 1000}
    if args.stats:
        args.stats.write_text(json.dumps(stats, indent=1) + "\n")
    steps = f"{copies:,} profiler step" + ("s" if copies != 1 else "")
    print(f"{args.out}: {size / MIB:,.1f} MiB, {steps}, {stats['events']:,} events "
          f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
