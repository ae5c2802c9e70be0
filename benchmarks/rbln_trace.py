"""advisor's RBLN Perfetto reader against the naive protobuf pipeline, in one run (issue 13, item 7):
each measurement in a fresh process, with its wall time and peak RSS.

    python benchmarks/rbln_trace.py [--size-mb 500] [--trace /tmp/advisor-rbln-500mb.pb] [--repeat 1]

(a) naive baseline: `Trace.FromString(whole file)` plus a Python loop over `trace.packet` doing the
    reader's own per-packet extraction, resolution and table building. Whole-file decoding needs about
    14× the file in memory, so it runs on a smaller slice of the trace (the first --slice-mb, cut at a
    packet boundary);
(b) advisor's reader (`load_trace`: streaming, worker processes) on the same slice: the speed ratio;
(c) advisor's reader on the whole trace: MB/s and peak RSS;
(d) the whole analysis of the whole trace, as `advisor report trace.pb -o analysis.json` runs it
    (reader, event metrics, rules, the analysis JSON written): MB/s and peak RSS;
(e) the command itself, `advisor report trace.pb -o x.json` and `-o x.md` (charts drawn), in a process of
    its own: wall time and peak RSS (its largest process).

    python benchmarks/rbln_trace.py --size-mb 1000 --analysis-only   # the 1 GB figures: (d) and (e) only

The trace is synthetic (no public RBLN trace exists): `samples/make_rbln_samples.py`'s
`write_large_trace` when present (RBLN-shaped: seven category thread tracks, interned names,
`Slice Arguments` on DMA and Neural Engine slices, flows), else the generator below. It is written
once and reused. Targets: (b) at least 1.5× (a)'s throughput; (d) and (e) peak RSS under 500 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20
MB = 1e6


# --- the trace -------------------------------------------------------------------------------------


def _own_large_trace(path: Path, target_bytes: int, seed: int = 0) -> int:
    """Fallback generator: one ATOM device, seven category thread tracks, per runtime call a host slice,
    an upload, and per command group Task DMA (flow to NE) + Neural DMA + Neural Engine, names interned
    once per call after an incremental-state clear."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent
    from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

    categories = ["Host", "Neural Engine Clusters", "Neural DMA", "Task DMA", "External HDMA", "Device HDMA",
                  "Device Sync"]
    layers = ["fused(conv1+bn1+relu)", "layer1.0.conv2", "avgpool", "fc", "causal_lm.model.0.mlp.down_proj"]
    rng = random.Random(seed)
    written = 0
    with path.open("wb") as f:
        b = StreamingTraceProtoBuilder(f)
        p = b.create_packet()
        p.track_descriptor.uuid, p.track_descriptor.process.pid = 1, 1000
        p.track_descriptor.process.process_name = "rbln0"
        b.write_packet(p)
        for k, name in enumerate(categories):
            p = b.create_packet()
            d = p.track_descriptor
            d.uuid, d.parent_uuid, d.thread.pid, d.thread.tid, d.thread.thread_name = 2 + k, 1, 1000, 1001 + k, name
            b.write_packet(p)
        t, call, flow = 1_000_000, 0, 0
        while f.tell() < target_bytes:
            names = [f"{call}_host_preprocess_0", f"{call}_input_0"] + [
                f"{call}_{layers[g % len(layers)]}_{g}" for g in range(170)]
            first = True

            def emit(track: int, iid: int, start: int, dur: int, args: str | None = None, flows=(), term=(),
                     names=names):
                nonlocal first
                p = TracePacket(timestamp=start, trusted_packet_sequence_id=1, sequence_flags=1 if first else 2)
                if first:
                    for i, n in enumerate(names, 1):
                        p.interned_data.event_names.add(iid=i, name=n)
                    first = False
                te = p.track_event
                te.type, te.track_uuid, te.name_iid = TrackEvent.TYPE_SLICE_BEGIN, track, iid
                if args:
                    te.debug_annotations.add(name="Slice Arguments").string_value = args
                te.flow_ids.extend(flows)
                te.terminating_flow_ids.extend(term)
                b.write_packet(p)
                end = TracePacket(timestamp=start + dur, trusted_packet_sequence_id=1, sequence_flags=2)
                end.track_event.type, end.track_event.track_uuid = TrackEvent.TYPE_SLICE_END, track
                b.write_packet(end)

            emit(2, 1, t, rng.randint(20_000, 60_000))
            t += 70_000
            emit(6, 2, t, 78_000, '{"transfer": [":602112Byte"]}')
            t += 80_000
            for g in range(170):
                flow += 1
                nb, d, dn = rng.randint(4096, 1 << 20), rng.randint(2_000, 12_000), rng.randint(3_000, 20_000)
                emit(5, 3 + g, t, d, f'{{"transfer": [":{nb}Byte"]}}', flows=(flow,))
                emit(4, 3 + g, t + 500, d // 2, f'{{"transfer": [":{nb // 2}Byte"]}}')
                emit(3, 3 + g, t + d, dn, f'{{"comp_cycle": [{dn * 7 // 10}]}}', term=(flow,))
                t += d + dn + 100
            t += 50_000
            call += 1
        written = f.tell()
    return written


def make_trace(path: Path, target_bytes: int) -> str:
    """Write the trace unless a file of about that size is there; returns which generator made it."""
    sys.path.insert(0, str(ROOT / "samples"))
    try:
        from make_rbln_samples import write_large_trace  # the samples' generator, when it is there
    except ImportError:
        write_large_trace = None
    generator = "samples/make_rbln_samples.py write_large_trace" if write_large_trace else "benchmarks/rbln_trace.py"
    if path.is_file() and abs(path.stat().st_size - target_bytes) < target_bytes * 0.1:
        return f"{generator} (reused)"
    started = time.perf_counter()
    (write_large_trace or _own_large_trace)(path, target_bytes, 0)
    print(f"wrote {path} ({path.stat().st_size / MB:.0f} MB) in {time.perf_counter() - started:.0f} s", flush=True)
    return generator


def cut(source: Path, target: Path, size: int) -> None:
    """The first `size` bytes of the trace, ending at a packet boundary."""
    import mmap

    from advisor.inputs.perfetto.packets import Splitter

    if target.is_file() and target.stat().st_mtime >= source.stat().st_mtime and abs(
            target.stat().st_size - size) < 2 * MIB:
        return
    with source.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        splitter = Splitter(buf)
        end = 0
        for _, stop, _ in splitter.chunks(MIB, size):
            end = stop
        target.write_bytes(buf[:end])


# --- the measured runs (each in its own process) --------------------------------------------------


def _peaks() -> dict[str, float]:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return {"rss": own, "worker_rss": children}


def child(mode: str, path: str, workers: int | None) -> None:
    trace = Path(path)
    if mode == "baseline":
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

        from advisor.inputs.perfetto.extract import _feed
        from advisor.inputs.perfetto.reader import ReadResult
        from advisor.inputs.perfetto.resolve import Resolver
        from advisor.inputs.perfetto.rows import Records
        from advisor.profilers.rbln.adapters import ARGUMENTS
        from advisor.profilers.rbln.adapters.trace import build

        started = time.perf_counter()
        data = trace.read_bytes()
        decoded = Trace.FromString(data)
        records = Records()
        _feed(decoded.packet, records, 0, ARGUMENTS)  # the reader's own per-packet extraction, one at a time
        records.close()
        resolver = Resolver(ARGUMENTS)
        resolver.feed(records)
        profile = build(trace, ReadResult(resolver.finish(), len(data), None, False, "", 1))
        used = 1
    elif mode.startswith("cli-"):
        import resource
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / f"report.{mode.removeprefix('cli-')}"
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "advisor", "report", str(trace), "-o", str(out)], check=True,
                           capture_output=True)
            wall = time.perf_counter() - started
        largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # the command's largest process
        print(json.dumps({"wall": wall, "slices": 0, "workers": default_workers_count(), "rss": largest,
                          "worker_rss": 0}))
        return
    elif mode == "analysis":
        from advisor.api import analyze
        from advisor.core.serialize import dumps
        from advisor.inputs.perfetto.reader import default_workers

        started = time.perf_counter()
        analysis = analyze(trace)
        Path(os.devnull).write_text(dumps(analysis))
        print(json.dumps({"wall": time.perf_counter() - started, "slices": int(analysis.value("slice_count") or 0),
                          "workers": default_workers(), **_peaks()}))
        return
    else:
        from advisor.profilers.rbln.adapters import read
        from advisor.profilers.rbln.adapters.trace import build

        started = time.perf_counter()
        result = read(trace, workers)
        profile = build(trace, result)
        used = result.workers
    wall = time.perf_counter() - started
    print(json.dumps({"wall": wall, "slices": profile.trace.extra["quality"].slices, "workers": used, **_peaks()}))


def default_workers_count() -> int:
    from advisor.inputs.perfetto.reader import default_workers

    return default_workers()


def run(mode: str, path: Path, workers: int | None) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, str(path)] + (["--workers", str(workers)] if workers else [])
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise SystemExit(f"{mode} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def best(mode: str, path: Path, workers: int | None, repeat: int) -> dict:
    runs = [run(mode, path, workers) for _ in range(repeat)]
    wall = statistics.median(r["wall"] for r in runs)
    return {**runs[0], "wall": wall, "rss": max(r["rss"] for r in runs),
            "worker_rss": max(r["worker_rss"] for r in runs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=500, help="size of the synthetic trace (MB)")
    parser.add_argument("--slice-mb", type=float, default=60, help="size of the slice the baseline reads (MB)")
    parser.add_argument("--trace", type=Path,
                        help="the trace to write or reuse (default /tmp/advisor-rbln-<size>mb.pb)")
    parser.add_argument("--workers", type=int, help="reader worker processes (default: the reader's own)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement (median wall, max RSS)")
    parser.add_argument("--analysis-only", action="store_true", help="only (d) and (e): the whole analysis")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.workers)
        return 0
    from google.protobuf.internal import api_implementation

    backend = api_implementation.Type()
    print(f"protobuf backend: {backend}")
    if backend == "python":
        print("the protobuf backend is the pure-Python one: every figure below is 10–40× slower than with upb")
    size = int(args.size_mb * MB)
    trace = args.trace or Path(f"/tmp/advisor-rbln-{args.size_mb:g}mb.pb")
    generator = make_trace(trace, size)
    part = trace.with_name(f"{trace.stem}.first{args.slice_mb:g}mb.pb")
    cut(trace, part, int(args.slice_mb * MB))
    full_mb, part_mb = trace.stat().st_size / MB, part.stat().st_size / MB
    print(f"trace: {trace} ({full_mb:.0f} MB, synthetic: {generator}); slice: {part} ({part_mb:.1f} MB)\n")

    whole = best("analysis", trace, None, args.repeat)
    as_json = best("cli-json", trace, None, args.repeat)
    as_md = best("cli-md", trace, None, args.repeat)
    rows = [("(d) whole analysis (analyze + the JSON)", full_mb, whole),
            ("(e) advisor report trace.pb -o x.json", full_mb, {**as_json, "slices": whole["slices"]}),
            ("(e) advisor report trace.pb -o x.md", full_mb, {**as_md, "slices": whole["slices"]})]
    if not args.analysis_only:
        base = best("baseline", part, None, args.repeat)
        ours = best("reader", part, args.workers, args.repeat)
        full = best("reader", trace, args.workers, args.repeat)
        rows[:0] = [("(a) naive: Trace.FromString + per-packet loop", part_mb, base),
                    ("(b) advisor reader", part_mb, ours), ("(c) advisor reader, whole trace", full_mb, full)]
    print("| run | file MB | slices | workers | wall s | MB/s | peak RSS MiB (main) | largest worker MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, mb, r in rows:
        worker = f"{r['worker_rss'] / MIB:.0f}" if r["workers"] != 1 and r["worker_rss"] else "–"
        print(f"| {name} | {mb:.1f} | {r['slices']:,} | {r['workers']} | {r['wall']:.2f} | {mb / r['wall']:.1f} | "
              f"{r['rss'] / MIB:.0f} | {worker} |")
    print(f"\n(d): {full_mb / whole['wall']:.1f} MB/s for the whole analysis, peak RSS {whole['rss'] / MIB:.0f} MiB "
          "in the main process (target < 500 MiB)")
    print(f"(e): advisor report -o x.json {as_json['wall']:.1f} s, {as_json['rss'] / MIB:.0f} MiB; -o x.md "
          f"{as_md['wall']:.1f} s, {as_md['rss'] / MIB:.0f} MiB (its largest process; target < 500 MiB)")
    if args.analysis_only:
        return 0
    ratio = (part_mb / ours["wall"]) / (part_mb / base["wall"])
    print(f"\n(b) vs (a): {ratio:.2f}× the throughput (target ≥ 1.5×); (a) peaks at "
          f"{base['rss'] / MIB / part_mb:.1f} MiB per MB of trace, which is why it reads only the slice")
    total = full["rss"] + (full["worker_rss"] * full["workers"] if full["workers"] > 1 else 0)
    print(f"(c): {full_mb / full['wall']:.1f} MB/s, peak RSS {full['rss'] / MIB:.0f} MiB in the main process"
          f"; with its {full['workers']} workers at most {total / MIB:.0f} MiB together")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
