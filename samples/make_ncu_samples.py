#!/usr/bin/env python3
"""Regenerate the sample Nsight Compute (ncu) exports under samples/ncu_*/.

    python samples/make_ncu_samples.py

Stdlib only and deterministic. Each scenario is a list of kernel launches held ONCE as data (a few
primary inputs per launch); everything else is derived with Nsight Compute's own formulas
(shared/reference/nsight-compute-rules.md sections 4.2-4.7) and written in two formats from the
same rows:

    details.csv / *.csv   `ncu --csv --page details` with rule columns (20-column header; metric rows
                          end with a trailing comma and parse to 16 fields, rule rows to 20)
    output.txt / *.txt    the default text output (sections as aligned tables, rule blocks padded to
                          120 columns, `Est. Speedup: N%` / `Est. Local Speedup: N%` first lines)

Derived here, never typed in:

    warps per block      = ceil(block threads / 32)
    block limits         = registers: floor(floor(regs_SM / schedulers / (ceil(regs*32/256)*256))
                                            * schedulers / warps_per_block)
                           shared mem: floor(config size / (static + dynamic + driver)); warps; SM
    theoretical occ.     = min(limits) * warps_per_block / max warps per SM
    waves per SM         = grid / (min(limits) * SMs);   threads = grid * block
    elapsed cycles       = duration * SM clock;  IPC = issued warps per scheduler * schedulers
    warp cycles / issue  = active warps per scheduler / issued warps per scheduler
    rule results         = ncu's rule conditions, messages and speedups (SOLBottleneck,
                           HighPipeUtilization, IssueSlotUtilization, TheoreticalOccupancy,
                           AchievedOccupancy, CPIStall, LaunchConfiguration, UncoalescedGlobalAccess,
                           SharedMemoryConflicts, MemoryCacheAccessPattern, SOLFPRoofline)

Values are printed as ncu prints them with its default "auto" units: decimal scaling (Kbyte = 1,000
bytes, Mhz, us/ms), thousands separators, two decimals unless the value is integral.
Everything is synthetic except the figures of samples/ncu_seed004, which are those of the Nsight
Compute report page in shared/seeds/004_*.txt (see that folder's README).
"""

from __future__ import annotations

import csv
import io
import math
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# devices (CUDA compute-capability limits; clocks as ncu measures them with --clock-control base)

DEVICES = {
    "orin": {"cc": "8.7", "sms": 8, "max_warps": 48, "max_blocks": 16, "regs": 65536, "schedulers": 4,
             "dram_metrics": False, "fp32_fp64_ratio": 64, "l2_slices": 4, "ffma_per_sm": 128},
    "a100": {"cc": "8.0", "sms": 108, "max_warps": 64, "max_blocks": 32, "regs": 65536, "schedulers": 4,
             "dram_metrics": True, "fp32_fp64_ratio": 2, "l2_slices": 80, "ffma_per_sm": 64,
             "sm_clock": 1.41e9, "dram_clock": 1.215e9, "dram_peak": 1555.2e9, "dram_units": 40, "tpcs": 54},
}

WARP = 32
HEADER = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
          "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value",
          "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup"]
METRICS_SECTION = "Command line profiler metrics"
# section display name -> identifier (rule rows carry the identifier); rule-only sections have no rows
SECTIONS = [
    ("GPU Speed Of Light Throughput", "SpeedOfLight"),
    ("GPU Speed Of Light Roofline Chart", "SpeedOfLight_RooflineChart"),
    ("PM Sampling", "PmSampling"),
    ("Compute Workload Analysis", "ComputeWorkloadAnalysis"),
    ("Memory Workload Analysis", "MemoryWorkloadAnalysis"),
    ("Memory Workload Analysis Chart", "MemoryWorkloadAnalysis_Chart"),
    ("Memory Workload Analysis Tables", "MemoryWorkloadAnalysis_Tables"),
    ("Scheduler Statistics", "SchedulerStats"),
    ("Warp State Statistics", "WarpStateStats"),
    ("Instruction Statistics", "InstructionStats"),
    ("Launch Statistics", "LaunchStats"),
    ("Occupancy", "Occupancy"),
    ("GPU and Memory Workload Distribution", "WorkloadDistribution"),
    ("Source Counters", "SourceCounters"),
]
# rules printed in the text output under another section's block (the roofline chart has no table)
TEXT_HOST = {"SpeedOfLight_RooflineChart": "SpeedOfLight"}

PROFILING_GUIDE = "https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html"
HW_MODEL = f"See the Hardware Model ({PROFILING_GUIDE}#metrics-hw-model) description for more details on launch configurations."
STALLS = {  # CPIStall descriptions (ncu's text, "Warp was stalled " removed)
    "long_scoreboard": "waiting for a scoreboard dependency on a L1TEX (local, global, surface, texture) operation. Find the instruction producing the data being waited upon to identify the culprit. To reduce the number of cycles waiting on L1TEX data accesses verify the memory access patterns are optimal for the target architecture, attempt to increase cache hit rates by increasing data locality (coalescing), or by changing the cache configuration. Consider moving frequently used data to shared memory.",
    "short_scoreboard": "waiting for a scoreboard dependency on a MIO (memory input/output) operation (not to L1TEX). The primary reason for a high number of stalls due to short scoreboards is typically memory operations to shared memory. Other reasons include frequent execution of special math instructions (e.g. MUFU) or dynamic branching (e.g. BRX, JMX). Consult the Memory Workload Analysis section to verify if there are shared memory operations and reduce bank conflicts, if reported. Assigning frequently accessed values to variables can assist the compiler in using low-latency registers instead of direct memory accesses.",
    "mio_throttle": "waiting for the MIO (memory input/output) instruction queue to be not full. This stall reason is high in cases of extreme utilization of the MIO pipelines, which include special math instructions, dynamic branches, as well as shared memory instructions. When caused by shared memory accesses, trying to use fewer but wider loads can reduce pipeline pressure.",
    "math_pipe_throttle": "waiting for the execution pipe to be available. This stall occurs when all active warps execute their next instruction on a specific, oversubscribed math pipeline. Try to increase the number of active warps to hide the existent latency or try changing the instruction mix to utilize all available pipelines in a more balanced way.",
    "barrier": "waiting for sibling warps at a CTA barrier. A high number of warps waiting at a barrier is commonly caused by diverging code paths before a barrier. This causes some warps to wait a long time until other warps reach the synchronization point. Whenever possible, try to divide up the work into blocks of uniform workloads. If the block size is 512 threads or greater, consider splitting it into smaller groups. This can increase eligible warps without affecting occupancy, unless shared memory becomes a new occupancy limiter. Also, try to identify which barrier instruction causes the most stalls, and optimize the code executed before that synchronization point first.",
    "wait": "waiting on a fixed latency execution dependency. Typically, this stall reason should be very low and only shows up as a top contributor in already highly optimized kernels. Try to hide the corresponding instruction latencies by increasing the number of active warps, restructuring the code or unrolling loops. Furthermore, consider switching to lower-latency instructions, e.g. by making use of fast math compiler options.",
    "not_selected": "waiting for the micro scheduler to select the warp to issue. Not selected warps are eligible warps that were not picked by the scheduler to issue that cycle as another warp was selected. A high number of not selected warps typically means you have sufficient warps to cover warp latencies and you may consider reducing the number of active warps to possibly increase cache coherence and data locality.",
    "lg_throttle": "waiting for the L1 instruction queue for local and global (LG) memory operations to be not full. Typically, this stall occurs only when executing local or global memory instructions extremely frequently. Avoid redundant global memory accesses. Try to avoid using thread-local memory by checking if dynamically indexed arrays are declared in local scope, or if the kernel has excessive register pressure causing spills. If applicable, consider combining multiple lower-width memory operations into fewer wider memory operations and try interleaving memory operations and math instructions.",
}
PIPES = {  # HighPipeUtilization names and descriptions
    "fma": ("FMA", "executes 32-bit floating point (FADD, FMUL, FMAD, ...) and integer (IMUL, IMAD) operations"),
    "alu": ("ALU", "executes integer and logic operations"),
    "fp64": ("FP64", "executes 64-bit floating point operations"),
    "tensor": ("Tensor", "is the logical aggregation of individual tensor pipelines. It's dominated by its Tensor (FP) sub-pipeline"),
    "shared": ("Shared", "is the logical sum of several other pipelines which can't achieve full utilization on their own. It executes 64-bit floating point and tensor operations"),
}


# ---------------------------------------------------------------------------------------------
# formatting as ncu prints

def num(v: float | int) -> str:
    """A value as ncu prints it: separators, 2 decimals unless integral."""
    r = round(float(v), 2)
    if r == int(r):
        return f"{int(r):,}"
    return f"{r:,.2f}"


def scaled(v: float, base: str) -> tuple[str, str]:
    """ncu's auto units: decimal scaling of byte, byte/block, byte/s, hz, ns."""
    if base == "ns":
        for unit, f in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
            if v >= f:
                return unit, num(v / f)
        return "ns", num(v)
    if base == "hz":
        for unit, f in (("Ghz", 1e9), ("Mhz", 1e6), ("Khz", 1e3)):
            if v >= f:
                return unit, num(v / f)
        return "hz", num(v)
    stem, _, per = base.partition("/")
    suffix = f"/{per}" if per else ""
    for prefix, f in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if v >= f:
            return f"{prefix}{stem}{suffix}", num(v / f)
    return base, num(v)


def row(label: str, unit: str, value) -> tuple[str, str, str]:
    """(label, printed unit, printed value); base units byte*, hz, ns are scaled like ncu does."""
    if isinstance(value, str):
        return label, unit, value
    if unit in ("ns", "hz", "byte", "byte/block", "byte/s"):
        u, text = scaled(value, unit)
        return label, u, text
    return label, unit, num(value)


def speedup_csv(v: float) -> str:
    """CSV speedups: 4 significant digits (5.818, 14.55, 80.34, 50)."""
    return f"{v:.4g}"


def speedup_text(v: float) -> str:
    """Text speedups: at most 2 decimals, trailing zeros dropped (92.5, 79.63, 25)."""
    return f"{round(v, 2):.2f}".rstrip("0").rstrip(".")


def rule(rule_id, section_id, kind, message, scope="", speedup=None):
    return {"rule": rule_id, "section": section_id, "type": kind, "message": message,
            "scope": scope, "speedup": speedup}


# ---------------------------------------------------------------------------------------------
# ncu's formulas

def occupancy(dev: dict, block: int, regs: int, smem_block: int, config: int) -> dict:
    wpb = math.ceil(block / WARP)
    sched = dev["schedulers"]
    per_warp = math.ceil(regs * WARP / 256) * 256
    lim_regs = math.floor(math.floor(dev["regs"] / sched / per_warp) * sched / wpb) if regs else dev["max_blocks"]
    lim_smem = math.floor(config / smem_block) if smem_block else dev["max_blocks"]
    limits = {"registers": lim_regs, "shared_mem": lim_smem, "warps": dev["max_warps"] // wpb,
              "blocks": dev["max_blocks"]}
    blocks = min(limits.values())
    return {"wpb": wpb, "limits": limits, "blocks_per_sm": blocks, "warps_sm": blocks * wpb,
            "theoretical_pct": 100 * blocks * wpb / dev["max_warps"]}


LIMITER_TEXT = {"blocks": "the number of blocks that can fit on the SM", "registers": "the number of required registers",
                "shared_mem": "the required amount of shared memory", "warps": "the number of warps within each block"}


def rules_for(k: dict) -> list[dict]:
    """The rule results ncu's rules (section 4 of the reference) emit for launch `k`."""
    dev, out = k["dev"], []
    sm, mem = k["sm_pct"], k["mem_pct"]
    # SOLBottleneck
    section = "Compute Workload Analysis" if sm >= mem else "Memory Workload Analysis"
    if sm < 80 and mem < 80:
        if sm < 60 and mem < 60:
            if k["waves"] < 1:
                out.append(rule("SOLBottleneck", "SpeedOfLight", "OPT", f"This kernel grid is too small to fill the available resources on this device, resulting in only {k['waves']:.1f} full waves across all SMs. Look at Launch Statistics for more details."))
            else:
                out.append(rule("SOLBottleneck", "SpeedOfLight", "OPT", "This kernel exhibits low compute throughput and memory bandwidth utilization relative to the peak performance of this device. Achieved compute throughput and/or memory bandwidth below 60.0% of peak typically indicate latency issues. Look at Scheduler Statistics and Warp State Statistics for potential reasons."))
        elif abs(sm - mem) >= 10:
            if sm > mem:
                out.append(rule("SOLBottleneck", "SpeedOfLight", "OPT", f"Compute is more heavily utilized than Memory: Look at the {section} section to see what the compute pipelines are spending their time doing. Also, consider whether any computation is redundant and could be reduced or moved to look-up tables."))
            else:
                out.append(rule("SOLBottleneck", "SpeedOfLight", "OPT", f"Memory is more heavily utilized than Compute: Look at the {section} section to identify the {k['busiest_memory']} bottleneck. Check memory replay (coalescing) metrics to make sure you're efficiently utilizing the bytes transferred. Also consider whether it is possible to do more work per memory access (kernel fusion) or whether there are values you can (re)compute."))
        else:
            out.append(rule("SOLBottleneck", "SpeedOfLight", "INF", "Compute and Memory are well-balanced: To reduce runtime, both computation and memory traffic must be reduced. Check both the Compute Workload Analysis and Memory Workload Analysis sections."))
    else:
        unit = k["busiest_memory"] if mem > sm else "workloads"
        out.append(rule("SOLBottleneck", "SpeedOfLight", "INF", f"This kernel is utilizing greater than 80.0% of the available compute or memory performance of the device. To further improve performance, work will likely need to be shifted from the most utilized to another unit. Start by analyzing {unit} in the {section} section."))
    # SOLFPRoofline (INF unless FP64 dominates; none of our kernels use FP64)
    a32 = k["fp32_peak_frac"] * 100
    a32_text = "close to 0" if 0 < a32 < 1 else f"{a32:.0f}"
    out.append(rule("SOLFPRoofline", "SpeedOfLight_RooflineChart", "INF", f"The ratio of peak float (fp32) to double (fp64) performance on this device is {dev['fp32_fp64_ratio']}:1. The kernel achieved {a32_text}% of this device's fp32 peak performance and 0% of its fp64 peak performance. See the Kernel Profiling Guide ({PROFILING_GUIDE}#roofline) for more details on roofline analysis."))
    # HighPipeUtilization (pipe % by active cycles)
    pipe, util = max(k["pipes"].items(), key=lambda kv: kv[1])
    name, desc = PIPES[pipe]
    if util < 20:
        out.append(rule("HighPipeUtilization", "ComputeWorkloadAnalysis", "OPT", "All compute pipelines are under-utilized. Either this kernel is very small or it doesn't issue enough warps per scheduler. Check the Launch Statistics and Scheduler Statistics sections for further details.", "local", 100 - util))
    else:
        msg = f"{name} is the highest-utilized pipeline ({util:.1f}%) based on active cycles, taking into account the rates of its different instructions. It {desc}."
        if util < 60:
            out.append(rule("HighPipeUtilization", "ComputeWorkloadAnalysis", "INF", msg + " It is well-utilized, but should not be a bottleneck."))
        else:
            msg += (" The pipeline is well-utilized, but might become a bottleneck if more work is added." if util < 80
                    else " The pipeline is over-utilized and likely a performance bottleneck.")
            msg += f" See the Profiling Guide ({PROFILING_GUIDE}#metrics-decoder) or hover over the pipeline name to understand the workloads handled by each pipeline. The Instruction Statistics section shows the mix of executed instructions for this kernel."
            if k["ia"] < 0.8:
                msg += " Check the Warp State Statistics section for which reasons cause warps to stall."
            out.append(rule("HighPipeUtilization", "ComputeWorkloadAnalysis", "OPT", msg))
    # Memory children: MemoryCacheAccessPattern, SharedMemoryConflicts, UncoalescedGlobalAccess
    if k.get("access_pattern_rule"):
        out.append(k["access_pattern_rule"])
    elif 0 < k.get("ld_bytes_per_sector", 32) < 32:
        out.append(access_pattern(k))
    if k.get("smem_ld_requests"):
        conflicts, wavefronts, requests = k["smem_ld_conflicts"], k["smem_ld_wavefronts"], k["smem_ld_requests"]
        pct = 100 * conflicts / wavefronts
        if pct >= 10:
            out.append(rule("SharedMemoryConflicts", "MemoryWorkloadAnalysis_Tables", "OPT", f"The memory access pattern for shared loads might not be optimal and causes on average a {wavefronts / requests:.1f} - way bank conflict across all {requests:.0f} shared load requests.This results in {conflicts:.0f} bank conflicts,  which represent {pct:.2f}% of the overall {wavefronts:.0f} wavefronts for shared loads. Check the Source Counters section for uncoalesced shared loads.", "global", pct * k["l1tex_pct"] / 100))
    out.extend(k.get("extra_rules", []))
    # IssueSlotUtilization -> parent of the occupancy and stall rules
    issue_w = None
    if k["ia"] < 0.6:
        issue_w = min(1 - k["ia"], 1 - max(sm, mem) / 100)
        active, eligible = k["active_per_sched"], k["eligible_per_sched"]
        out.append(rule("IssueSlotUtilization", "SchedulerStats", "OPT", f"Every scheduler is capable of issuing one instruction per cycle, but for this workload each scheduler only issues an instruction every {1 / k['ia']:.1f} cycles. This might leave hardware resources underutilized and may lead to less optimal performance. Out of the maximum of {dev['max_warps'] // dev['schedulers']} warps per scheduler, this workload allocates an average of {active:.2f} active warps per scheduler, but only an average of {eligible:.2f} warps were eligible per cycle. Eligible warps are the subset of active warps that are ready to issue their next instruction. Every cycle with no eligible warp results in no instruction being issued and the issue slot remains unused. To increase the number of eligible warps, reduce the time the active warps are stalled by inspecting the top stall reasons on the Warp State Statistics and Source Counters sections.", "local", 100 * issue_w))

    def scoped(local: float) -> tuple[str, float]:
        return ("global", 100 * min(issue_w, local)) if issue_w is not None else ("local", 100 * local)

    # CPIStall
    stalls = sorted(((r, c) for r, c in k["stalls"].items() if k["ia"] < 0.8 and c / k["cpi"] > 0.3),
                    key=lambda rc: rc[1], reverse=True)
    for reason, cycles in stalls:
        scope, value = scoped(cycles / k["cpi"])
        out.append(rule("CPIStall", "WarpStateStats", "OPT", f"On average, each warp of this kernel spends {cycles:.1f} cycles being stalled {STALLS[reason]} This stall type represents about {100 * cycles / k['cpi']:.1f}% of the total average of {k['cpi']:.1f} cycles between issuing two instructions.", scope, value))
    if stalls:
        out.append(rule("CPIStall", "WarpStateStats", "INF", f"Check the Warp Stall Sampling (All Samples) table for the top stall locations in your source based on sampling data. The Profiling Guide ({PROFILING_GUIDE}#metrics-reference) provides more details on each stall reason."))
    # LaunchConfiguration
    grid, sms = k["grid_size"], dev["sms"]
    if grid < sms:
        out.append(rule("LaunchConfiguration", "LaunchStats", "OPT", f"The grid for this launch is configured to execute only {grid} {'block' if grid == 1 else 'blocks'}, which is less than the GPU's {sms} multiprocessors. This can underutilize some multiprocessors. If you do not intend to execute this kernel concurrently with other workloads, consider reducing the block size to have at least one block per multiprocessor or increase the size of the grid to fully utilize the available hardware resources. {HW_MODEL}", "global", 100 * (sms - grid) / sms))
    elif grid < 2 * sms:
        out.append(rule("LaunchConfiguration", "LaunchStats", "OPT", f"If you execute __syncthreads() to synchronize the threads of a block, it is recommended to have at least two blocks per multiprocessor (compared to the currently executed {grid / sms:.1f} blocks) This way, blocks that aren't waiting for __syncthreads() can keep the hardware busy."))
    partial, whole = math.modf(k["waves"])
    if partial > 0 and whole >= 1 and 100 / (1 + whole) >= 20:
        blocks = math.ceil(grid * (partial / k["waves"]))
        value = 100 / (1 + whole)
        out.append(rule("LaunchConfiguration", "LaunchStats", "OPT", f"A wave of thread blocks is defined as the maximum number of blocks that can be executed in parallel on the target GPU. The number of blocks in a wave depends on the number of multiprocessors and the theoretical occupancy of the kernel. This kernel launch results in {int(whole)} full waves and a partial wave of {blocks} thread blocks. Under the assumption of a uniform execution duration of all thread blocks, this partial wave may account for up to {value:.1f}% of the total runtime of this kernel. Try launching a grid with no partial wave. The overall impact of this tail effect also lessens with the number of full waves executed for a grid. {HW_MODEL}", "global", value))
    # TheoreticalOccupancy / AchievedOccupancy
    mw = dev["max_warps"] // dev["schedulers"]
    tw = k["occ"]["warps_sm"] / dev["schedulers"]
    if 100 * tw / mw < 80:
        low = min(k["occ"]["limits"].values())
        limiter = " and ".join(LIMITER_TEXT[n] for n, v in k["occ"]["limits"].items() if v == low)
        scope, value = scoped(1 - tw / mw)
        out.append(rule("TheoreticalOccupancy", "Occupancy", "OPT", f"The {tw:.2f} theoretical warps per scheduler this kernel can issue according to its occupancy are below the hardware maximum of {mw}. This kernel's theoretical occupancy ({k['occ']['theoretical_pct']:.1f}%) is limited by {limiter}.", scope, value))
    theo, ach = k["occ"]["theoretical_pct"], k["achieved_pct"]
    if theo - ach > 10:
        scope, value = scoped((theo - ach) / theo)
        out.append(rule("AchievedOccupancy", "Occupancy", "OPT", f"The difference between calculated theoretical ({theo:.1f}%) and measured achieved occupancy ({ach:.1f}%) can be the result of warp scheduling overheads or workload imbalances during the kernel execution. Load imbalances can occur between warps within a block as well as across blocks of the same kernel. See the CUDA Best Practices Guide (https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#occupancy) for more details on optimizing occupancy.", scope, value))
    # UncoalescedGlobalAccess
    excess, total = k.get("l2_excess_sectors", 0), k.get("l2_sectors", 0)
    if excess > 0:
        ratio = k["lts_active_sum"] / k["lts_elapsed_sum"]
        out.append(rule("UncoalescedGlobalAccess", "SourceCounters", "OPT", f"This kernel has uncoalesced global accesses resulting in a total of {excess} excessive sectors ({100 * excess / total:.0f}% of the total {total} sectors). Check the L2 Theoretical Sectors Global Excessive table for the primary source locations. The CUDA Programming Guide (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#device-memory-accesses) has additional information on reducing uncoalesced device memory accesses.", "global", 100 * ratio * excess / total))
    return out


def access_pattern(k: dict) -> dict:
    """MemoryCacheAccessPattern for global loads: the cache level with the largest estimate."""
    b = k["ld_bytes_per_sector"]
    l1_miss, l2_miss = 1 - k["l1_ld_hit_pct"] / 100, 1 - k["l2_ld_hit_pct"] / 100
    levels = {"L1TEX": (1 - b / 32) * k["l1tex_elapsed_pct"],
              "L2": (1 - b / 32) * l1_miss * k["l2_pct"],
              "DRAM": (1 - b / 32) * l1_miss * l2_miss * k["dram_pct"]}
    level = max(levels, key=levels.get)
    extra = {"L1TEX": "", "L2": f"This applies to the {100 * l1_miss:.1f}% of sectors missed in L1TEX. ",
             "DRAM": f"This applies to the {100 * l2_miss:.1f}% of sectors missed in L2. "}[level]
    return rule("MemoryCacheAccessPattern", "MemoryWorkloadAnalysis_Tables", "OPT", f"The memory access pattern for global loads from {level} might not be optimal. On average, only {b:.1f} of the 32 bytes transmitted per sector are utilized by each thread. {extra}This could possibly be caused by a stride between threads. Check the Source Counters section for uncoalesced global loads.", "global", levels[level])


# ---------------------------------------------------------------------------------------------
# a launch from primary inputs

def build(p: dict) -> dict:
    """Sections, metric rows and rule results of one launch from its primary inputs `p`."""
    dev = DEVICES[p["device"]]
    sms, sched = dev["sms"], dev["schedulers"]
    k = dict(p, dev=dev)
    grid, block = p["grid"][0] * p["grid"][1] * p["grid"][2], p["block"][0] * p["block"][1] * p["block"][2]
    k["grid_size"] = grid
    driver = 1024  # reserved per block by the driver on cc >= 8.0
    smem_block = p.get("smem_static", 0) + p.get("smem_dynamic", 0) + driver
    occ = occupancy(dev, block, p["regs"], smem_block, p["smem_config"])
    k["occ"] = occ
    k["waves"] = grid / (occ["blocks_per_sm"] * sms)
    for name, want in p.get("expect", {}).items():  # the seed's printed figures, recomputed
        got = {"waves": round(k["waves"], 2), "theoretical": round(occ["theoretical_pct"], 2),
               **{f"limit_{n}": v for n, v in occ["limits"].items()}}[name]
        assert got == want, (p["name"], name, got, want)
    clock = p.get("sm_clock", dev.get("sm_clock"))
    elapsed = p.get("elapsed_cycles") or round(p["duration_us"] * 1e-6 * clock)
    duration_ns = elapsed / clock * 1e9
    k["duration_ns"] = duration_ns
    sm_active = p.get("sm_active_cycles") or elapsed * p.get("active_frac", 0.985)
    ia = p["ia"]
    k["ia"] = ia
    achieved_warps = p.get("achieved_warps") or occ["warps_sm"] * p["achieved_frac"]
    k["achieved_pct"] = 100 * achieved_warps / dev["max_warps"]
    k["active_per_sched"] = p.get("active_per_sched") or achieved_warps / sched
    k["eligible_per_sched"] = p["eligible_per_sched"]
    k["cpi"] = p.get("cpi") or k["active_per_sched"] / ia
    ipc = p.get("ipc_active") or ia * sched
    executed = p.get("executed_inst") or round(ipc * sm_active * sms)
    issued = p.get("issued_inst") or round(executed * 1.00003)
    l1tex_elapsed = p["l1tex_pct"] * sm_active / elapsed
    k["l1tex_elapsed_pct"] = l1tex_elapsed
    dram_pct = p.get("dram_pct", 0.0)
    k["dram_pct"] = dram_pct
    mem_busy = p.get("mem_busy_pct") or max(l1tex_elapsed, p["l2_pct"])
    max_bw = p.get("max_bandwidth_pct") or max(p["l2_pct"], dram_pct) * 0.97
    mem = p.get("mem_pct") or max(mem_busy, max_bw, dram_pct)
    k["mem_pct"] = mem
    k["busiest_memory"] = max((("DRAM", dram_pct), ("L2", p["l2_pct"]), ("L1", l1tex_elapsed)), key=lambda u: u[1])[0]
    l2_cycles = elapsed * dev["l2_slices"]
    l2_active_avg = p.get("l2_active_avg") or elapsed * p.get("l2_active_frac", 0.97)
    k["lts_active_sum"] = l2_active_avg * dev["l2_slices"]
    k["lts_elapsed_sum"] = p.get("l2_elapsed_total") or l2_cycles
    # FP32 roofline: (fadd + fmul + 2 ffma) / (2 * ffma peak per cycle * elapsed cycles)
    peak = dev["ffma_per_sm"] * sms
    if "fp32_frac" in p:  # FFMA-only SIMT kernel: the FFMA count giving that share of the FP32 peak
        p = dict(p, fp32=(0, 0, round(p["fp32_frac"] * peak * elapsed)))
        k["fp32"] = p["fp32"]
    if "fp32_peak_frac" not in p:
        fp = p.get("fp32", (0, 0, 0))
        k["fp32_peak_frac"] = (fp[0] + fp[1] + 2 * fp[2]) / (2 * peak * elapsed)

    sec: dict[str, list] = {}
    sol = []
    if dev["dram_metrics"]:
        sol.append(row("DRAM Frequency", "hz", dev["dram_clock"]))
    sol += [row("SM Frequency", "hz", clock), row("Elapsed Cycles", "cycle", elapsed),
            row("Memory Throughput", "%", mem)]
    if dev["dram_metrics"]:
        sol.append(row("DRAM Throughput", "%", dram_pct))
    sol += [row("Duration", "ns", duration_ns), row("L1/TEX Cache Throughput", "%", p["l1tex_pct"]),
            row("L2 Cache Throughput", "%", p["l2_pct"]), row("SM Active Cycles", "cycle", sm_active),
            row("Compute (SM) Throughput", "%", p["sm_pct"])]
    sec["GPU Speed Of Light Throughput"] = sol
    if "pm_sampling" in p:
        sec["PM Sampling"] = [row(*r) for r in p["pm_sampling"]]
    ipc_elapsed = p.get("ipc_elapsed") or ipc * sm_active / elapsed
    issue_busy = p.get("issue_slots_busy") or 100 * ia
    sec["Compute Workload Analysis"] = [
        row("Executed Ipc Active", "inst/cycle", ipc), row("Executed Ipc Elapsed", "inst/cycle", ipc_elapsed),
        row("Issue Slots Busy", "%", issue_busy), row("Issued Ipc Active", "inst/cycle", p.get("issued_ipc") or ipc),
        row("SM Busy", "%", p.get("sm_busy") or max(issue_busy, max(p["pipes"].values())))]
    mwa = []
    if dev["dram_metrics"]:
        dram_bytes = dram_pct / 100 * dev["dram_peak"] * duration_ns * 1e-9
        k["dram_bytes"] = dram_bytes
        mwa.append(row("Memory Throughput", "byte/s", dram_bytes / (duration_ns * 1e-9)))
    mwa += [row("Mem Busy", "%", mem_busy), row("Max Bandwidth", "%", max_bw),
            row("L1/TEX Hit Rate", "%", p["l1_hit_pct"]), row("L2 Compression Success Rate", "%", 0),
            row("L2 Compression Ratio", "", 0), row("L2 Hit Rate", "%", p["l2_hit_pct"]),
            row("Mem Pipes Busy", "%", p.get("mem_pipes_pct") or mem_busy * 0.66)]
    sec["Memory Workload Analysis"] = mwa
    sec["Scheduler Statistics"] = [
        row("One or More Eligible", "%", p.get("one_or_more_pct") or 100 * ia), row("Issued Warp Per Scheduler", "", ia),
        row("No Eligible", "%", p.get("no_eligible_pct") or 100 - 100 * ia),
        row("Active Warps Per Scheduler", "warp", k["active_per_sched"]),
        row("Eligible Warps Per Scheduler", "warp", k["eligible_per_sched"])]
    sec["Warp State Statistics"] = [
        row("Warp Cycles Per Issued Instruction", "cycle", k["cpi"]),
        row("Warp Cycles Per Executed Instruction", "cycle", p.get("cpi_executed") or k["cpi"] * issued / executed),
        row("Avg. Active Threads Per Warp", "", p.get("threads_per_warp", 32)),
        row("Avg. Not Predicated Off Threads Per Warp", "", p.get("threads_pred_on", 31.2))]
    per_sched = sms * sched
    sec["Instruction Statistics"] = [
        row("Avg. Executed Instructions Per Scheduler", "inst", p.get("executed_per_sched") or executed / per_sched),
        row("Executed Instructions", "inst", executed),
        row("Avg. Issued Instructions Per Scheduler", "inst", p.get("issued_per_sched") or issued / per_sched),
        row("Issued Instructions", "inst", issued)]
    launch = [row("Block Size", "", block), row("Function Cache Configuration", "", "CachePreferNone"),
              row("Grid Size", "", grid), row("Registers Per Thread", "register/thread", p["regs"]),
              row("Shared Memory Configuration Size", "byte", p["smem_config"]),
              row("Driver Shared Memory Per Block", "byte/block", driver),
              row("Dynamic Shared Memory Per Block", "byte/block", p.get("smem_dynamic", 0)),
              row("Static Shared Memory Per Block", "byte/block", p.get("smem_static", 0)),
              row("# SMs", "SM", sms)]
    if "tpcs" in dev:
        launch += [row("Stack Size", "", 1024), row("Threads", "thread", grid * block),
                   row("# TPCs", "", dev["tpcs"]), row("Enabled TPC IDs", "", "all")]
    else:
        launch.append(row("Threads", "thread", grid * block))
    launch += [row("Uses Green Context", "", 0), row("Waves Per SM", "", k["waves"])]
    sec["Launch Statistics"] = launch
    lim = occ["limits"]
    sec["Occupancy"] = [
        row("Block Limit SM", "block", lim["blocks"]), row("Block Limit Registers", "block", lim["registers"]),
        row("Block Limit Shared Mem", "block", lim["shared_mem"]), row("Block Limit Warps", "block", lim["warps"]),
        row("Theoretical Active Warps per SM", "warp", occ["warps_sm"]),
        row("Theoretical Occupancy", "%", occ["theoretical_pct"]),
        row("Achieved Occupancy", "%", k["achieved_pct"]), row("Achieved Active Warps Per SM", "warp", achieved_warps)]
    wd = []
    if dev["dram_metrics"]:
        dram_elapsed = duration_ns * 1e-9 * dev["dram_clock"]
        wd += [row("Average DRAM Active Cycles", "cycle", dram_elapsed * dram_pct / 100),
               row("Total DRAM Elapsed Cycles", "cycle", round(dram_elapsed) * dev["dram_units"])]
    smsp_active = p.get("smsp_active_avg") or sm_active * 0.9995
    wd += [row("Average L1 Active Cycles", "cycle", sm_active), row("Total L1 Elapsed Cycles", "cycle", elapsed * sms),
           row("Average L2 Active Cycles", "cycle", l2_active_avg), row("Total L2 Elapsed Cycles", "cycle", k["lts_elapsed_sum"]),
           row("Average SM Active Cycles", "cycle", sm_active), row("Total SM Elapsed Cycles", "cycle", elapsed * sms),
           row("Average SMSP Active Cycles", "cycle", smsp_active),
           row("Total SMSP Elapsed Cycles", "cycle", elapsed * sms * sched)]
    sec["GPU and Memory Workload Distribution"] = wd
    branches = p.get("branch_inst") or round(executed * p.get("branch_ratio", 0.04))
    sec["Source Counters"] = [
        row("Branch Instructions Ratio", "%", p.get("branch_ratio_pct") or 100 * branches / executed),
        row("Branch Instructions", "inst", branches), row("Branch Efficiency", "%", p.get("branch_efficiency", 100)),
        row("Avg. Divergent Branches", "", p.get("divergent_branches", 0))]

    # --metrics rows: the figures no section prints
    metrics = []
    for pipe, value in p["pipes"].items():
        metrics.append(row(f"sm__pipe_{pipe}_cycles_active.avg.pct_of_peak_sustained_active", "%", value))
    for reason, cycles in p.get("stalls", {}).items():
        metrics.append(row(f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio", "inst", cycles))
    if "l2_sectors" in p:
        metrics += [row("memory_l2_theoretical_sectors_global", "sector", p["l2_sectors"]),
                    row("derived__memory_l2_theoretical_sectors_global_excessive", "sector", p.get("l2_excess_sectors", 0))]
        if p.get("lts_counters", True):
            metrics += [row("lts__cycles_active.sum", "cycle", k["lts_active_sum"]),
                        row("lts__cycles_elapsed.sum", "cycle", k["lts_elapsed_sum"])]
    if "ld_bytes_per_sector" in p:
        metrics += [row("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", "byte", p["ld_bytes_per_sector"]),
                    row("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "%", p["l1_ld_hit_pct"]),
                    row("lts__t_sector_op_read_hit_rate.pct", "%", p["l2_ld_hit_pct"])]
    if "smem_ld_requests" in p:
        metrics += [row("smsp__sass_inst_executed_op_shared_ld.sum", "inst", p["smem_ld_requests"]),
                    row("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "", p["smem_ld_wavefronts"]),
                    row("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", p["smem_ld_conflicts"])]
    if "fp32" in p:
        names = ("fadd", "fmul", "ffma")
        for op, count in zip(names, p["fp32"], strict=True):
            metrics.append(row(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum", "inst", count))
        for op, count in zip(("hadd", "hmul", "hfma"), p.get("fp16", (0, 0, 0)), strict=True):
            metrics.append(row(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum", "inst", count))
        metrics.append(row("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "inst/cycle", peak))
    if dev["dram_metrics"]:
        read = k["dram_bytes"] * p.get("dram_read_share", 0.7)
        metrics += [row("dram__bytes_read.sum", "byte", read), row("dram__bytes_write.sum", "byte", k["dram_bytes"] - read)]
    metrics.sort(key=lambda r: r[0])
    k["sections"], k["metrics"] = sec, metrics
    k["rules"] = p["rules"] if "rules" in p else rules_for(k)
    return k


# ---------------------------------------------------------------------------------------------
# writers

def identity(k: dict) -> list[str]:
    g, b = k["grid"], k["block"]
    return [str(k["id"]), str(k["pid"]), k["process"], "127.0.0.1", k["name"], "1", str(k.get("stream", 7)),
            f"({b[0]}, {b[1]}, {b[2]})", f"({g[0]}, {g[1]}, {g[2]})", "0", k["dev"]["cc"]]


def write_csv(launches: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(HEADER)
    for k in launches:
        ident = identity(k)
        for label, unit, value in k["metrics"]:
            buf.write(",".join(f'"{c}"' for c in ident + [METRICS_SECTION, label, unit, value]) + ",\n")
        for display, ident_id in SECTIONS:
            for label, unit, value in k["sections"].get(display, []):
                buf.write(",".join(f'"{c}"' for c in ident + [display, label, unit, value]) + ",\n")
            for r in k["rules"]:
                if r["section"] == ident_id:
                    value = "" if r["speedup"] is None else speedup_csv(r["speedup"])
                    w.writerow(ident + [r["section"], "", "", "", r["rule"], r["type"], r["message"], r["scope"], value])
    return buf.getvalue()


def table(title: str, rows: list[tuple[str, str, str]]) -> list[str]:
    w1 = max([len("Metric Name")] + [len(r[0]) for r in rows])
    w2 = max([len("Metric Unit")] + [len(r[1]) for r in rows])
    w3 = max([len("Metric Value")] + [len(r[2]) for r in rows])
    dash = f"    {'-' * w1} {'-' * w2} {'-' * w3}"
    out = [f"    Section: {title}", dash, f"    {'Metric Name'.ljust(w1)} {'Metric Unit'.rjust(w2)} {'Metric Value'.rjust(w3)}", dash]
    out += [f"    {a.ljust(w1)} {b.rjust(w2)} {c.rjust(w3)}" for a, b, c in rows]
    return out + [dash]


def rule_block(r: dict) -> list[str]:
    text = []
    if r["speedup"] is not None:
        text.append(f"Est. {'Local ' if r['scope'] == 'local' else ''}Speedup: {speedup_text(r['speedup'])}%")
    text += textwrap.wrap(r["message"], width=109, break_long_words=False, break_on_hyphens=False)
    lines = [(f"    {r['type']}   " if i == 0 else " " * 10) + t for i, t in enumerate(text)]
    return [line.ljust(120) for line in lines]


def write_text(launches: list[dict], preamble: list[str], postamble: list[str]) -> str:
    out = list(preamble)
    for i, k in enumerate(launches):
        if i == 0 or launches[i - 1]["pid"] != k["pid"]:
            out.append(f"[{k['pid']}] {k['process']}@127.0.0.1")
        g, b = k["grid"], k["block"]
        out.append(f"  {k['name']} ({g[0]}, {g[1]}, {g[2]})x({b[0]}, {b[1]}, {b[2]}), Context 1, "
                   f"Stream {k.get('stream', 7)}, Device 0, CC {k['dev']['cc']}")
        if k["metrics"]:
            out += table(METRICS_SECTION, k["metrics"]) + [""]
        for display, ident_id in SECTIONS:
            if ident_id in TEXT_HOST:
                continue
            hosted = [r for r in k["rules"] if TEXT_HOST.get(r["section"], r["section"]) == ident_id]
            rows = k["sections"].get(display, [])
            if not rows and not hosted:
                continue
            if rows:
                out += table(display, rows) + [""]
            else:  # a section that prints only rule results (ncu prints no table for it)
                out.append(f"    Section: {display}")
            for j, r in enumerate(hosted):
                if j:
                    out.append("    ----- " + "-" * 110)
                out += rule_block(r)
            if hosted:
                out.append("")
    return "\n".join(out + postamble) + "\n"


def prof_lines(launches: list[dict], app: str) -> tuple[list[str], list[str]]:
    pid = launches[0]["pid"]
    pre = [f"==PROF== Connected to process {pid} ({app})"]
    for i, k in enumerate(launches):
        short = k["name"].split("(")[0].split("<")[0].split()[-1].split("::")[-1]
        pre.append(f'==PROF== Profiling "{short}" - {i} ({i + 1}/{len(launches)}): 0%....50%....100% - {k.get("passes", 38)} passes')
    return pre, [f"==PROF== Disconnected from process {pid}"]


# ---------------------------------------------------------------------------------------------
# scenarios

def seed004() -> list[dict]:
    """The seed page's kernel: every printed figure as the page shows it (primary inputs), the
    occupancy, waves and rule speedups recomputed and asserted against it."""
    name = "_5x_cudnn_ampere_fp16_scudnn_fp16_128x64_relu_small_nn_v1"
    p = {
        "name": name, "id": 38096, "pid": 50, "process": "python3.10", "device": "orin", "passes": 40,
        "grid": (2747, 1, 1), "block": (128, 1, 1), "regs": 128, "smem_static": 16384, "smem_dynamic": 0,
        "smem_config": 102400, "sm_clock": 914.54e6, "elapsed_cycles": 3103434, "sm_active_cycles": 3085837.12,
        "sm_pct": 74.04, "mem_pct": 46.14, "l1tex_pct": 46.24, "l2_pct": 16.59, "mem_busy_pct": 46.14,
        "max_bandwidth_pct": 33.76, "mem_pipes_pct": 30.60, "l1_hit_pct": 2.63, "l2_hit_pct": 32.40,
        "ipc_active": 2.97, "ipc_elapsed": 2.96, "issued_ipc": 2.97, "sm_busy": 74.20, "issue_slots_busy": 74.20,
        "ia": 0.74, "active_per_sched": 3.97, "eligible_per_sched": 1.65, "no_eligible_pct": 25.79,
        "one_or_more_pct": 74.21, "cpi": 5.34, "cpi_executed": 5.34, "threads_per_warp": 32, "threads_pred_on": 31.37,
        "executed_inst": 73267984, "issued_inst": 73270031, "executed_per_sched": 2289624.50,
        "issued_per_sched": 2289688.47, "achieved_warps": 15.86,
        "l2_active_avg": 3074449.25, "l2_elapsed_total": 12413564, "smsp_active_avg": 3085287.12,
        "branch_inst": 516436, "branch_ratio_pct": 0.01,
        "pm_sampling": [("Maximum Buffer Size", "byte", 8.39e6), ("Dropped Samples", "sample", 256),
                        ("Maximum Sampling Interval", "ns", 1000), ("# Pass Groups", "", 2)],
        "pipes": {"fma": 47.40}, "fp32_peak_frac": 0.46,
        "l2_sectors": 1527265, "l2_excess_sectors": 10987, "lts_counters": False,
        "expect": {"waves": 85.84, "theoretical": 33.33, "limit_registers": 4, "limit_shared_mem": 5,
                   "limit_warps": 12, "limit_blocks": 16},
        # the page does not show the bytes per sector or hit rates behind it; its own figure, kept
        "access_pattern_rule": rule("MemoryCacheAccessPattern", "MemoryWorkloadAnalysis_Tables", "OPT", "The memory access pattern for global loads from DRAM might not be optimal. On average, only 31.5 of the 32 bytes transmitted per sector are utilized by each thread. This applies to the 68.6% of sectors missed in L2. This could possibly be caused by a stride between threads. Check the Source Counters section for uncoalesced global loads.", "local", 0.98),
        "extra_rules": [
            rule("MemoryL2Compression", "MemoryWorkloadAnalysis_Chart", "WRN", "The optional metric dram__bytes_read.sum.pct_of_peak_sustained_elapsed could not be found. Collecting it as an additional metric could enable the rule to provide more guidance."),
            rule("WorkloadImbalance", "WorkloadDistribution", "WRN", "The optional metric dram__cycles_active.avg could not be found. Collecting it as an additional metric could enable the rule to provide more guidance."),
        ],
        "stalls": {},
    }
    k = build(p)
    got = {r["rule"]: r for r in k["rules"]}
    assert list(got) == ["SOLBottleneck", "SOLFPRoofline", "HighPipeUtilization", "MemoryCacheAccessPattern",
                         "MemoryL2Compression", "WorkloadImbalance", "TheoreticalOccupancy",
                         "UncoalescedGlobalAccess"], list(got)
    assert speedup_text(got["TheoreticalOccupancy"]["speedup"]) == "66.67"
    assert got["TheoreticalOccupancy"]["scope"] == "local"
    assert speedup_text(got["UncoalescedGlobalAccess"]["speedup"]) == "0.71"
    return [k]


A100 = {"device": "a100", "pid": 2417, "process": "python3.10"}


def multi_kernel() -> list[dict]:
    """One inference step on an A100: 7 launches, the tensor-core GEMM twice (~56 % of the run)."""
    gemm = {
        **A100, "name": "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_tn", "grid": (16, 27, 1),
        "block": (256, 1, 1), "regs": 232, "smem_dynamic": 147456, "smem_config": 167936, "duration_us": 410.4,
        "sm_pct": 86.12, "l1tex_pct": 58.30, "l2_pct": 41.75, "dram_pct": 33.10, "l1_hit_pct": 1.12, "l2_hit_pct": 71.40,
        "ia": 0.31, "achieved_frac": 0.985, "eligible_per_sched": 0.42, "pipes": {"tensor": 86.40, "fma": 9.80, "alu": 6.10},
        "stalls": {"math_pipe_throttle": 1.10, "long_scoreboard": 0.42, "barrier": 0.35},
        "fp16": (0, 0, 0), "fp32": (0, 0, 0), "dram_read_share": 0.82, "branch_ratio": 0.02, "threads_pred_on": 31.9,
    }
    launches = [
        {**A100, "name": "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, float, const T1 *, const T1 *, const T1 *, float *, float *, T1 *)",
         "grid": (4320, 1, 1), "block": (256, 1, 1), "regs": 30,
         "smem_config": 16384, "duration_us": 95.2, "sm_pct": 31.40, "l1tex_pct": 27.80, "l2_pct": 38.60,
         "dram_pct": 89.75, "l1_hit_pct": 0.02, "l2_hit_pct": 3.10, "ia": 0.27, "achieved_frac": 0.93,
         "eligible_per_sched": 0.39, "pipes": {"fma": 14.20, "alu": 18.60},
         "stalls": {"long_scoreboard": 17.40}, "fp32": (33554432, 50331648, 67108864), "dram_read_share": 0.5,
         "branch_ratio": 0.05},
        {**gemm, "name": gemm["name"]},
        {**A100, "name": "void attention_softmax_kernel<__half, 64>(const __half *, __half *, int, int, float)",
         "grid": (2048, 1, 1), "block": (128, 1, 1), "regs": 40, "smem_static": 33280, "smem_config": 135168,
         "duration_us": 260.1, "sm_pct": 44.30, "l1tex_pct": 61.20, "l2_pct": 68.90, "dram_pct": 22.40,
         "l1_hit_pct": 12.40, "l2_hit_pct": 78.20, "ia": 0.36, "achieved_frac": 0.91, "eligible_per_sched": 0.52,
         "pipes": {"fma": 21.30, "alu": 24.70, "shared": 18.90}, "stalls": {"short_scoreboard": 6.10, "mio_throttle": 3.20},
         "smem_ld_requests": 1572864, "smem_ld_wavefronts": 25165824, "smem_ld_conflicts": 23592960,
         "fp32": (98304000, 98304000, 196608000), "branch_ratio": 0.03},
        {**gemm, "name": gemm["name"], "duration_us": 409.8},
        {**A100, "name": "void add_bias_residual_kernel<__half>(__half *, const __half *, const __half *, int)",
         "grid": (1037, 1, 1), "block": (256, 1, 1), "regs": 32, "smem_config": 16384, "duration_us": 48.3,
         "sm_pct": 18.60, "l1tex_pct": 21.40, "l2_pct": 35.90, "dram_pct": 64.20, "l1_hit_pct": 0, "l2_hit_pct": 33.30,
         "ia": 0.22, "achieved_frac": 0.84, "eligible_per_sched": 0.31, "pipes": {"alu": 9.40, "fma": 7.80},
         "stalls": {"long_scoreboard": 15.30}, "fp16": (4247552, 0, 0), "fp32": (0, 0, 0), "dram_read_share": 0.67},
        {**A100, "name": "ampere_sgemm_128x64_nn", "grid": (16, 54, 1), "block": (128, 1, 1), "regs": 128,
         "smem_static": 12544, "smem_config": 102400, "duration_us": 230.5, "sm_pct": 71.80, "l1tex_pct": 58.10,
         "l2_pct": 31.20, "dram_pct": 14.70, "l1_hit_pct": 1.80, "l2_hit_pct": 86.60, "ia": 0.69, "achieved_frac": 0.94,
         "eligible_per_sched": 1.21, "pipes": {"fma": 68.40, "alu": 9.20, "tensor": 0.0},
         "stalls": {"not_selected": 0.71, "math_pipe_throttle": 0.95, "long_scoreboard": 0.64},
         "fp32_frac": 0.655, "branch_ratio": 0.01, "threads_pred_on": 31.8},
        {**A100, "name": "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(c10::Half) (instance 1)], at::detail::Array<char *, 2>>(int, T2, T3)",
         "grid": (64, 1, 1), "block": (128, 1, 1), "regs": 26, "smem_config": 16384, "duration_us": 4.22,
         "sm_pct": 2.10, "l1tex_pct": 6.40, "l2_pct": 4.80, "dram_pct": 3.90, "l1_hit_pct": 0, "l2_hit_pct": 41.20,
         "ia": 0.08, "achieved_frac": 0.061, "active_frac": 0.42, "eligible_per_sched": 0.09,
         "pipes": {"fma": 1.90, "alu": 2.40}, "stalls": {"long_scoreboard": 8.10},
         "fp32": (32768, 65536, 98304), "branch_ratio": 0.06},
    ]
    out = []
    for i, p in enumerate(launches):
        k = build({**p, "id": i})
        out.append(k)
    total = sum(k["duration_ns"] for k in out)
    share = sum(k["duration_ns"] for k in out if k["name"] == gemm["name"]) / total
    assert 0.53 < share < 0.58, share
    return out


def before_after() -> tuple[list[dict], list[dict]]:
    """A register-limited, latency-bound gather kernel, then the same launch after __launch_bounds__
    (64 registers) and coalesced loads: 1.6x faster; the softmax kernel beside it unchanged (<1 %)."""
    target = {**A100, "name": "void gather_scale_kernel<float>(const float *, const int *, const float *, float *, int, int)",
              "grid": (4320, 1, 1), "block": (256, 1, 1), "smem_config": 16384, "branch_ratio": 0.03}
    before = {**target, "regs": 168, "duration_us": 820.0, "sm_pct": 22.40, "l1tex_pct": 38.20, "l2_pct": 36.90,
              "dram_pct": 58.00, "l1_hit_pct": 9.80, "l2_hit_pct": 44.10, "ia": 0.18, "achieved_frac": 0.94,
              "eligible_per_sched": 0.21, "pipes": {"alu": 12.10, "fma": 8.60},
              "stalls": {"long_scoreboard": 7.20, "lg_throttle": 0.90},
              "l2_sectors": 48234496, "l2_excess_sectors": 26529472, "l2_active_frac": 0.93,
              "ld_bytes_per_sector": 8.0, "l1_ld_hit_pct": 9.80, "l2_ld_hit_pct": 44.10,
              "fp32": (0, 17694720, 0)}
    after = {**target, "regs": 64, "duration_us": 512.5, "sm_pct": 41.30, "l1tex_pct": 52.70, "l2_pct": 47.60,
             "dram_pct": 62.00, "l1_hit_pct": 2.10, "l2_hit_pct": 38.70, "ia": 0.46, "achieved_frac": 0.92,
             "eligible_per_sched": 0.71, "pipes": {"alu": 19.40, "fma": 13.80},
             "stalls": {"long_scoreboard": 9.60}, "l2_sectors": 21704960, "l2_excess_sectors": 0, "l2_active_frac": 0.96,
             "ld_bytes_per_sector": 32.0, "l1_ld_hit_pct": 2.10, "l2_ld_hit_pct": 38.70, "fp32": (0, 17694720, 0)}
    other = {**A100, "name": "void softmax_rows_kernel<float>(const float *, float *, int)", "grid": (8640, 1, 1),
             "block": (128, 1, 1), "regs": 28, "smem_static": 512, "smem_config": 32768, "sm_pct": 46.80,
             "l1tex_pct": 33.10, "l2_pct": 29.40, "dram_pct": 74.60, "l1_hit_pct": 0.40, "l2_hit_pct": 5.20,
             "ia": 0.41, "achieved_frac": 0.83, "eligible_per_sched": 0.66, "pipes": {"fma": 24.60, "alu": 19.10},
             "stalls": {"long_scoreboard": 11.80}, "fp32": (67108864, 33554432, 33554432), "branch_ratio": 0.04}
    runs = []
    for attempt, (t, o_dur) in enumerate(((before, 140.0), (after, 140.9))):
        runs.append([build({**t, "id": 0, "pid": 2417 + attempt}), build({**other, "id": 1, "pid": 2417 + attempt, "duration_us": o_dur})])
    b, a = runs
    assert abs(b[0]["duration_ns"] / a[0]["duration_ns"] - 1.6) < 0.005
    assert abs(a[1]["duration_ns"] / b[1]["duration_ns"] - 1) < 0.01
    return b, a


def write(folder: str, stem: str, launches: list[dict], app: str) -> None:
    path = HERE / folder
    path.mkdir(parents=True, exist_ok=True)
    pre, post = prof_lines(launches, app)
    (path / f"{stem}.csv").write_text(write_csv(launches), encoding="utf-8")
    (path / f"{stem.replace('details', 'output')}.txt").write_text(write_text(launches, pre, post), encoding="utf-8")


def main() -> None:
    write("ncu_seed004", "details", seed004(), "/usr/bin/python3.10")
    write("ncu_multi_kernel", "details", multi_kernel(), "/usr/bin/python3.10")
    b, a = before_after()
    write("ncu_before_after", "before", b, "/usr/bin/python3.10")
    write("ncu_before_after", "after", a, "/usr/bin/python3.10")
    for k in seed004() + multi_kernel() + b + a:
        rules = ", ".join(f"{r['rule']} {r['type']}" + (f" {r['scope']} {speedup_text(r['speedup'])}" if r["speedup"] is not None else "") for r in k["rules"])
        print(f"{k['id']:>5} {k['name'][:60]:60} {k['duration_ns'] / 1e3:9.2f} us  {rules}")


if __name__ == "__main__":
    main()
