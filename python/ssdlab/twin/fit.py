"""``ssdlab fit --probe DIR``: a drive file fitted to what a probe measured.

The twin is a generic 2011-2013 SATA drive (controller profile
``generic-2011``, NAND part ``imft-25nm-l74a``) with:

- *measured* values, set from the probe's features: the capacity, the host
  link, the write buffer, data reduction and its stored fractions, read-ahead
  and its queue-depth threshold, the spare area (from the GC onset), whether
  idle time cleans blocks, tPROG when the flushed writes measured it (the
  time per program unit less the unit's transfer at the fitted channel rate),
  and a performance mode when the fill showed one (the clean stage's tPROG is
  then that mode's; the standard one follows from the fill's final rate);
- *fitted* values: the free parameters below, moved jointly by Optuna
  (:mod:`ssdlab.fit.study`, trials in parallel on the Dask runner) so that
  the simulated ``clean`` stage of the probe reproduces the measured one (the
  root mean square of each job's rate error over a 10% tolerance), after a
  scan of structures (dies, page size, channels, dies kept idle) at the
  starts' times, and the structure weighed again at the fitted times
  (:func:`recheck_structure`: dies kept idle, the raw NAND's layouts, page
  size against channel rate, RAISE parity);
- *assumed* values: everything else, from the generic profile and part.

``DIR/twin.toml`` is the drive file, with where every value came from in its
comments; ``DIR/twin.json`` records, for every value, ``measured``,
``fitted`` (with the residual of the fit) or ``assumed``, and the residual of
every probe job once the whole probe is simulated on the twin.
"""

from __future__ import annotations

import functools
import json
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ..cluster import Runner
from ..drive import Drive
from ..errors import SsdlabError
from ..fit.evaluate import Evaluation
from ..fit.output import toml_value
from ..fit.params import FreeParameter, Target, library_values
from ..fit.polish import polish
from ..outputs import write_text
from ..suite.calibrate import Published
from .features import ASSUMED_PROGRAM_UNIT_BYTES, SATA_LINKS, extract, steady_iops
from .probe import CLEAN, FILL, apply_power_log, capacity_of, figures_of, load_probe, probe_jobs, run_probe_simulated

__all__ = ["BASE_PROFILE", "BASE_PART", "free_parameters", "start_candidates", "scan_starts", "build_doc", "probe_rows",
           "twin_target", "fit_twin",
           "evaluate_twin", "simulate_probe_figures"]

BASE_PROFILE = "generic-2011"
BASE_PART = "imft-25nm-l74a"
CHANNELS = 8
#: The size assumed for a write buffer the probe could not see.
ASSUMED_BUFFER_BYTES = 4 * 1024 * 1024
#: The read-ahead window assumed when the probe sees a read-ahead.
ASSUMED_READAHEAD_BYTES = 1024 * 1024
#: Spare area assumed when the torture shows no GC onset.
ASSUMED_SPARE_FRACTION = 0.07
#: The MLC parts of the era (docs/model.md's datasheet table and the library's parts: IMFT 34/25/20nm,
#: Intel 25nm HET, Hynix 32nm, Toshiba 24/19nm, Samsung 21/2x nm, SanDisk 19nm) read a page in 50-100 us
#: and program one in 0.9-1.5 ms (typical); the fit moves tR and tPROG within these ranges, widened, a
#: prior that keeps the die count and the program time apart (the sequential write rate fixes only
#: their ratio).
TR_RANGE_NS = (30_000, 100_000)
TPROG_RANGE_NS = (700_000, 2_000_000)
#: CMA-ES's initial step for a twin (share of each parameter's range, on a log scale for most): the features
#: put the start near the answer, and Optuna's default (1/6) leaves it at once for a distant compromise.
#: Measured on seven presets' probes (80 trials, seed 1; objective at 1/6 -> 0.07 -> 0.035): m4 1.47 -> 1.10
#: -> 1.63, Neutron 0.41 -> 0.32 -> 0.27, DC S3700 0.82 -> 0.35 -> 0.48, 840 Pro 0.45 -> 0.45 -> 0.40, Extreme II
#: 1.02 -> 0.58 -> 0.58, Force F120 1.88 -> 1.20 -> 1.95, Vertex 4 1.16 -> 1.22 (sum 7.2 -> 5.2).
TWIN_SIGMA0: Optional[float] = 0.07
#: Evaluations of the pattern search after the sampler (the DC S3700 200GB's twin: 0.316 after CMA-ES's 80
#: trials, 0.066 after 60 of these).
POLISH_EVALUATIONS = 80
#: The longest firmware time per command the fit tries: a 2010 controller with one command slot at its
#: 4KB random write ceiling of 5-10K IOPS (SF-1200 client firmware: 10K) spends 100-200 us per write.
COMMAND_COST_MAX_NS = 250_000
#: The most packages per channel a twin gets (16 x 8 channels: 128 dies).
MAX_PACKAGES_PER_CHANNEL = 16
#: The channel counts a twin may have: 8, the era's common layout, or 10 (Intel's PC29AS21BA0 in the X25-M G2 and
#: the 320), chosen by the scan (:func:`refine_candidates`) where the raw NAND's dies divide among them.
CHANNEL_CHOICES = (8, 10)
#: The key of the channel count in a twin's values, when the scan chose other than :data:`CHANNELS`.
CHANNELS_KEY = "nand.channels"
#: The key of the active-die cap the scan may give a twin (:func:`refine_candidates`).
ACTIVE_DIES_KEY = "controller.max_active_dies"
#: The key of the program buffer the scan may give a twin instead (:func:`refine_candidates`): the controller's
#: memory for the data of the programs in flight, which holds programs, not reads, to the dies it has room for
#: (SF-1200 on 25nm NAND: 192 KiB, twelve 16 KiB units on 16 dies that all read).
PROGRAM_BUFFER_KEY = "controller.program_buffer_bytes"
#: The keys of the two ways a twin keeps dies idle (a cap, in the scan's words).
CAP_KEYS = (ACTIVE_DIES_KEY, PROGRAM_BUFFER_KEY)
#: How much lower the scan's objective must be with an active-die cap than without for the twin to get one:
#: a cap is one more mechanism, and with half its dies idle a twin can absorb other errors. On the clean
#: probes of the 26 presets the best capped start's objective over the best uncapped one was 0.52 on the
#: Samsung 830 (64 dies, 32 active: the scan finds exactly that) and 0.59 on the Vertex 3 480GB (64/32;
#: the scan gives 80/40), and 0.71 or more on every other preset (DC S3700 0.71 with 32 dies and no cap;
#: the SF-1200 drives and the x25m, capped in truth, 0.89-0.99).
ACTIVE_DIES_EVIDENCE = 0.6
#: Where the per-request die cap starts when the probe shows one.
DIE_CAP_START = 8
#: Free blocks per die the generic profile keeps (ftl.gc_threshold_blocks + 1 open block).
_RESERVE_BLOCKS = 5
#: The user-data area of one NAND die: dies come in power-of-two densities, and the era's MLC parts hold 32, 64
#: or 128 Gbit (the library's parts: IMFT L63B, Hynix 32nm and Samsung 2x-nm 32 Gbit; IMFT L74A, Intel HET,
#: Toshiba, Samsung 21nm and SanDisk 19nm 64 Gbit; docs/model.md). A drive's raw NAND therefore holds one of three
#: die counts, where the write rates leave a continuum open: on the round trip of 946555e (rt15) the twins took
#: 24, 40, 48, 56, 72 and 80 dies, counts no raw NAND of these densities gives (the truths: 32, 32, 32, 64, 64, 63).
DIE_BYTES = (4 << 30, 8 << 30, 16 << 30)
#: The engine's default for ``ftl.perf_mode_reorg_units_per_host_unit`` (units the performance mode's
#: reorganisation moves per host unit), where the base profile leaves it unset.
REORG_UNITS_PER_HOST_UNIT = 2


def _fv(features: Mapping[str, Any], name: str) -> Any:
    f = features.get(name) or {}
    return f.get("value")


def raw_nand_dies(probe_doc: Mapping[str, Any]) -> List[int]:
    """The die counts (multiples of the twin's channels) the probed drive's
    raw NAND allows, one per density of :data:`DIE_BYTES`: the raw NAND is
    the capacity and the bytes the torture wrote past it before garbage
    collection bit (``gc_onset_bytes``). Empty where the onset was not
    measured, on a file target (the drive's raw NAND is not the file's),
    and where the densities give fewer than three counts (a target too
    small to tell them apart)."""
    features = probe_doc["features"]
    onset, cap = _fv(features, "gc_onset_bytes"), _fv(features, "capacity_bytes")
    if probe_doc.get("target", {}).get("kind") == "file" or not onset or not cap:
        return []
    raw = float(cap) + float(onset)
    dies = sorted({CHANNELS * max(1, round(raw / d / CHANNELS)) for d in DIE_BYTES})
    return dies if len(dies) == len(DIE_BYTES) and dies[-1] <= CHANNELS * MAX_PACKAGES_PER_CHANNEL else []


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


#: Channel rates of the era's NAND interfaces (ONFI 1 async 40-50 MB/s to toggle/ONFI 2.x 400 MB/s).
CHANNEL_RANGE_BYTES_PER_S = (40_000_000, 400_000_000)
#: The channel rate of the generic profile (the twin's when the fit does not move it).
GENERIC_CHANNEL_BYTES_PER_S = 200_000_000
#: The read decodes a twin may get (an ECC engine slower than the channel, down to half an async one)...
DECODE_RANGE_BYTES_PER_S = (25_000_000, 1_000_000_000)
#: ... when the second 8KB of a unit takes this much longer than its transfers (8KB at 200 MB/s).
DECODE_MIN_EXCESS_NS = 40_000
#: Planes per die of the generic part: a program unit is this many pages.
PLANES = 2
#: The least program time a twin gets from a flush measurement (MIN_FLUSH_PROGRAM_NS of the features).
MIN_TPROG_NS = 200_000
#: The generic profile's per-command FIS exchange on the link (host.command_overhead_ns of generic-2011).
GENERIC_COMMAND_OVERHEAD_NS = 3_000
#: The generic profile's time per command outside the slots (controller.command_latency_ns of generic-2011).
GENERIC_COMMAND_LATENCY_NS = 5_000


def _buffer_bytes(b: float) -> int:
    """A buffer size for the drive file: at least 256 KiB, in whole 4KB units."""
    return int(max(b, 256 * 1024)) // 4096 * 4096


#: A write buffer is a region of the controller's SRAM or DRAM, and firmware carves those in powers of two (every
#: buffer in docs/presets.md: 256 KiB to 64 MiB). A buffer estimated within this share of a power of two is taken as
#: that power of two. The estimates scatter that far: the bursts after idle measured 8.33 MB for 8 MiB, 16.65 MB for
#: 16 MiB, 67.05 MB for 64 MiB (the drain rate of the line through the bursts, a percent off, moves the intercept),
#: the flush after the torture, timed to 1%, 58.0-72.6 MB for 64 MiB (its time is not proportional to the buffer:
#: garbage collection drains it). The drive's buffer to the byte matters where a test reads what it has just written:
#: on the Vertex 4 256GB, ATTO's QD2 16KB reads ran 94.7 MB/s with 64 MiB and 123.8 with 64 MiB - 56 KiB (which
#: dies hold the data the buffer flushed last depends on where its flushes began).
BUFFER_POW2_SHARE = 0.2


def _buffer_pow2(b: float) -> Tuple[int, str]:
    """``b`` as the power of two it lies within :data:`BUFFER_POW2_SHARE` of (and why), else in 4KB units."""
    p = 1 << max(0, round(math.log2(max(b, 1.0))))
    if abs(b / p - 1) <= BUFFER_POW2_SHARE:
        return _buffer_bytes(p), (f"; estimated at {int(b):,} B, within {BUFFER_POW2_SHARE:.0%} of {p / 2**20:g} MiB: "
                                  "buffers are powers of two")
    return _buffer_bytes(b), ""


def _tprog_measured(features: Mapping[str, Any]) -> Optional[float]:
    """transfer + tPROG from the flushed writes, when the probe measured it."""
    f = features.get("tprog_ns") or {}
    v = f.get("value")
    return float(v) if v and f.get("confidence") in ("high", "medium") else None


def free_parameters(features: Mapping[str, Any], dies_choices: Sequence[int] = ()) -> List[FreeParameter]:
    """The twin's free parameters, each starting where the features point
    (the dies within ``dies_choices``, the counts the raw NAND allows, when
    given: :func:`raw_nand_dies`)."""
    dies = _fv(features, "dies") or 16
    flush_ns = _tprog_measured(features)
    r1 = _fv(features, "read_latency_4k_us")
    u1 = _fv(features, "unwritten_read_latency_us")
    from_map = _fv(features, "unwritten_reads_from_map")
    r_iops = _fv(features, "read_command_iops") or _fv(features, "read_iops_4k_qd32") or 40_000
    w_iops = _fv(features, "write_command_iops") or _fv(features, "write_iops_4k_qd32") or 40_000
    # an unwritten LBA answered from the map costs the command's time and no die read:
    # about command latency + read cost + 10 us of link and FIS exchange
    cmd_read = (u1 - 10.0) * 1e3 - GENERIC_COMMAND_LATENCY_NS if u1 and from_map else 2e9 / r_iops
    cmd_read = _clamp(cmd_read, 1_000, COMMAND_COST_MAX_NS)
    # the channel rate (fitted when the flushes measured the program time): sequential reads at depth well
    # below the link are bound by the NAND, so start where the channels carry that rate (Marvell 9174 drives:
    # 440 MB/s over 8 channels of 55 MB/s)
    seq_r, link_r = _fv(features, "seq_read_bytes_per_s"), _fv(features, "link_bytes_per_s")
    ch_start = GENERIC_CHANNEL_BYTES_PER_S
    nand_r = _fv(features, "nand_read_bytes_per_s")
    step_us = _fv(features, "second_page_read_us")
    if flush_ns is not None and seq_r and link_r and seq_r < 0.9 * link_r and not (
            step_us and (8192 / _clamp(seq_r / CHANNELS, *CHANNEL_RANGE_BYTES_PER_S) + 8192 / link_r) * 1e6
            > 1.1 * step_us):
        # (unless channels that slow would make a unit's second 8KB at QD1 cost more than it does: then the dies
        # bind the sequential reads, through a decode or tR, and the channels are faster; Everest 2 fw1.5: 466 MB/s
        # at depth on a 540 MB/s link, where 58 MB/s channels would take 156 us for the 130 us measured)
        ch_start = int(_clamp(seq_r / CHANNELS, *CHANNEL_RANGE_BYTES_PER_S))
    elif flush_ns is not None and nand_r and nand_r < CHANNELS * GENERIC_CHANNEL_BYTES_PER_S:
        # link-bound at depth, but a QD1 request's NAND share is visible (SATA 3Gbps drives on 40-50 MB/s
        # asynchronous channels): the channels carry about that rate (a floor: the dies' page reads are in it)
        ch_start = int(_clamp(nand_r / CHANNELS, *CHANNEL_RANGE_BYTES_PER_S))
    # the die's read (tR, then the data on the channel): a mapped read beyond an unwritten one answered from
    # the map, else beyond the command's path at the start's command times (latency, FIS exchange, firmware
    # time, 4KB on the link)
    if r1 and u1 and from_map:
        die_read_ns: Optional[float] = (r1 - u1) * 1e3
    elif r1:
        die_read_ns = r1 * 1e3 - (GENERIC_COMMAND_LATENCY_NS + GENERIC_COMMAND_OVERHEAD_NS + cmd_read
                                  + 4096 / (link_r or 550e6) * 1e9)
    else:
        die_read_ns = None
    # sequential reads of data written at random below 85% of those of data written in order: either the data
    # is striped over the dies in chunks (a 4KB read holds several dies) or the firmware reads a request from a
    # few dies at a time (a request of units scattered over many dies then takes several rounds)
    layout = _fv(features, "random_layout_seqread_ratio")
    stripe: Optional[float] = None
    die_cap = False
    if layout is not None and layout < 0.85:
        # a 4KB read striped over k dies holds all of them for a die read, so the dies give dies / k such reads
        # at once: k from the QD32 rate, the chunk from k. Striping shows as k of 3 or more (chunks of 1KB or
        # less; the SandForce drives' probes give 3.9-9.0); below it a 4KB read holds about one die and the QD32
        # rate is bound by the dies or the controller (Everest 2: 0.8-2.7), so the cap is what is offered
        iops32 = _fv(features, "read_iops_4k_qd32")
        k = dies * 1e9 / (iops32 * (die_read_ns or 91_000)) if iops32 else 0.0
        # a drive that reads ahead serves 512 B sequential reads without a die: their QD32 rate is the
        # controller's ceiling, and a 4KB random read rate at it says nothing of how many dies a read holds
        # (Everest 2 fw1.3: 98% of it, where k reads 3.3 once the QD1 read is taken after idle)
        cmd = _fv(features, "read_command_iops")
        at_ceiling = bool(_fv(features, "readahead")) and bool(iops32 and cmd and iops32 >= 0.9 * cmd)
        if k >= 3.0 and not at_ceiling:
            stripe = _clamp(4096 / k, 512, 16384)
        else:
            die_cap = True
    # a read decode that holds the die per byte (Everest 2: 110 MB/s): the second 8KB of a unit costs more than
    # its transfers on the channel and the link (Everest 2 probes: 130 us where 56 is transfer; other drives
    # within 31 us of theirs); offered only beyond 40 us (8KB at 200 MB/s), starting at 8KB / the excess
    decode: Optional[float] = None
    if step_us and link_r:
        excess_ns = step_us * 1e3 - 8192 / link_r * 1e9 - 8192 / ch_start * 1e9
        if excess_ns > DECODE_MIN_EXCESS_NS:
            decode = _clamp(8192 / excess_ns * 1e9, *DECODE_RANGE_BYTES_PER_S)
    # tR: the die's read less its share of the 4KB on the channel (a chunk when striped) and its decode. (A QD1
    # read also waits now and then behind a program the writes before it left on its die, about 10% more on
    # the generic twin; the measured drive's reads wait the same way, so the start leaves that in tR.)
    xfer_ns = min(4096.0, stripe or 4096.0) / ch_start * 1e9 + (4096 / decode * 1e9 if decode else 0.0)
    tr = die_read_ns - xfer_ns if die_read_ns and die_read_ns > xfer_ns else 50_000
    slots = int(_clamp(round(cmd_read * r_iops / 1e9), 1, 4))
    ppc = int(_clamp(round(dies / CHANNELS), 1, 16))
    if flush_ns is not None:
        # the die count from the sequential rate and the measured time per unit, within the factor the
        # page size leaves open (4KB pages: twice the dies, 16KB: half), and more when the write is bound
        # elsewhere (the link, the controller)
        ppc_range = (max(1, math.floor(dies / 2 / CHANNELS)),
                     min(MAX_PACKAGES_PER_CHANNEL, max(2, math.ceil(dies * 2.5 / CHANNELS))))
        ppc_why = (f"dies = {CHANNELS} channels x this, from the sequential write rate x the measured flush time per unit "
                   "(a narrow range: the page size halves or doubles it)")
    else:
        ppc_range = (1, MAX_PACKAGES_PER_CHANNEL)
        ppc_why = f"dies = {CHANNELS} channels x this: read and write parallelism"
    if dies_choices:
        # one of the counts the raw NAND allows, the nearest to the rates' estimate to start; the scan chooses
        ppc_range = (dies_choices[0] // CHANNELS, dies_choices[-1] // CHANNELS)
        ppc = min(dies_choices, key=lambda d: abs(math.log(d / dies))) // CHANNELS
        ppc_why = (f"dies = {CHANNELS} channels x this: one of the counts the raw NAND (the capacity and the bytes "
                   f"written past it before garbage collection bit) holds in dies of 32, 64 or 128 Gbit "
                   f"({', '.join(str(d) for d in dies_choices)}), chosen by the scan over page size and dies")
    params = [
        FreeParameter("nand.packages_per_channel", ppc_range[0], ppc_range[1], int(_clamp(ppc, *ppc_range)), True, 1, ppc_why),
        FreeParameter("nand.page_size_log2", 12, 14, 13, False, 1, "page size 2^this bytes (4, 8 or 16 KiB)"),
        FreeParameter("nand.tr_ns", TR_RANGE_NS[0], TR_RANGE_NS[1], int(_clamp(tr, *TR_RANGE_NS)), True, 1000,
                      "page read time: QD1 read latency beyond the controller's (within the MLC datasheets' range)"),
        FreeParameter("controller.command_cost_read_ns", 1_000, COMMAND_COST_MAX_NS,
                      int(cmd_read), True, 500, "firmware time per read: the QD32 read ceiling"),
        FreeParameter("controller.command_cost_write_ns", 1_000, COMMAND_COST_MAX_NS,
                      int(_clamp(slots * 1e9 / w_iops, 1_000, COMMAND_COST_MAX_NS)), True, 500,
                      "firmware time per write: the QD32 write ceiling"),
        FreeParameter("controller.command_slots", 1, 4, slots, False, 1, "commands processed at once: QD1 against QD32"),
        FreeParameter("controller.command_latency_ns", 1_000, 100_000, GENERIC_COMMAND_LATENCY_NS, True, 500,
                      "time per command outside the slots: QD1 latency"),
        # the write path starts at the fastest write measured: where a controller caps writes that is its rate,
        # and where the dies or the link do, a path no slower than them moves nothing
        FreeParameter("controller.max_write_bytes_per_s", 100_000_000, 2_000_000_000,
                      int(_clamp(_fv(features, "fastest_write_bytes_per_s") or 1e9, 100_000_000, 2_000_000_000)), True,
                      1_000_000, "the controller's write data path: a sequential write below the dies' rate"),
    ]
    if flush_ns is not None:
        # tPROG is then the measured flush time less the unit's transfer at this rate (build_doc)
        params.append(FreeParameter("nand.channel_bytes_per_s", CHANNEL_RANGE_BYTES_PER_S[0], CHANNEL_RANGE_BYTES_PER_S[1],
                                    ch_start, True, 1_000_000,
                                    "NAND channel rate: page transfers on reads and programs; tPROG is the measured flush "
                                    "time less the program unit's transfer at this rate"))
    else:
        params.append(FreeParameter("nand.tprog_ns", TPROG_RANGE_NS[0], TPROG_RANGE_NS[1], 1_300_000, True, 10_000,
                                    "page program time: the sustained write rate with the dies and page size (within the "
                                    "MLC datasheets' range)"))
    if stripe is not None:
        params.append(FreeParameter("controller.die_stripe_bytes", 512, 16384, int(stripe), True, 512,
                                    "stripe chunk across dies: sequential reads of data written at random are slower"))
    if _fv(features, "data_reduction") and _fv(features, "seq_write_bytes_per_s"):
        # a reducing controller's ECC encoder works on the bytes it stores: incompressible writes can be bound by
        # it while compressible ones reach the link (SF-2281: 235 MB/s stored); it starts at the incompressible
        # sequential write, and the dies the write rate gave are then a floor
        params.append(FreeParameter("controller.encode_bytes_per_s", 50_000_000, 2_000_000_000,
                                    int(_clamp(_fv(features, "seq_write_bytes_per_s"), 50_000_000, 2_000_000_000)), True,
                                    1_000_000, "the encoder's rate on stored bytes: incompressible writes below the "
                                    "dies' rate on a reducing controller"))
    if decode is not None:
        params.append(FreeParameter("controller.read_decode_bytes_per_s", DECODE_RANGE_BYTES_PER_S[0],
                                    DECODE_RANGE_BYTES_PER_S[1], int(decode), True, 1_000_000,
                                    "the controller's read decode, holding the die per byte read: the second 8KB of a "
                                    "unit read at QD1 costs more than its transfers"))
    if die_cap:
        params.append(FreeParameter("controller.seq_read_max_dies", 2, 64, DIE_CAP_START, True, 1,
                                    "dies one request reads at once: sequential reads of data written at random are "
                                    "slower, and a 4KB read holds one die"))
    # each start on the parameter's grid: the fit's first trial is then the start itself, so the fitted
    # objective is never worse than the start's
    return [replace(p, value=p.snap(p.value)) for p in params]


@functools.lru_cache(maxsize=None)
def _base_profile_ftl() -> Dict[str, Any]:
    """The base profile's [ftl] values (read once: build_doc runs for every trial)."""
    ftl: Dict[str, Any] = library_values("profile", BASE_PROFILE).get("ftl", {})
    return ftl


def build_doc(features: Mapping[str, Any], values: Mapping[str, Any], drive_id: str, name: str = ""
              ) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]:
    """The twin's drive description (a dict for :meth:`Drive.load`) and the
    provenance of every value it sets: ``{dotted key: {value, source, why}}``."""
    prov: Dict[str, Dict[str, Any]] = {}

    def put(doc: Dict[str, Any], key: str, value: Any, source: str, why: str) -> None:
        section, field = key.split(".", 1)
        doc.setdefault(section, {})[field] = value
        prov[key] = {"value": value, "source": source, "why": why}

    cap = int(_fv(features, "capacity_bytes"))
    doc: Dict[str, Any] = {"drive": {"id": drive_id, "name": name or f"Twin of {drive_id}",
                                     "description": "a digital twin fitted by ssdlab to a probe (ssdlab probe, ssdlab fit --probe)",
                                     "controller": BASE_PROFILE, "nand_part": BASE_PART}}
    put(doc, "drive.user_capacity_bytes", cap - cap % 512, "measured", "the size of the probed target")
    link, iface = _fv(features, "link_bytes_per_s"), _fv(features, "host_interface")
    sata = {name: (rate, fis) for name, rate, fis in SATA_LINKS}
    if iface in sata:
        why = str(features["host_interface"]["how"])
        put(doc, "host.link_bytes_per_s", sata[iface][0], "measured", why)
        put(doc, "host.command_overhead_ns", sata[iface][1], "measured", f"{iface}'s FIS time per command: {why}")
    elif link:
        put(doc, "host.link_bytes_per_s", int(link * 1.02), "measured",
            "2% above the fastest large transfer measured (the link is never quite saturated)")
    buf = _fv(features, "write_buffer_bytes")
    if buf:
        size, snapped = _buffer_pow2(buf)
        put(doc, "controller.write_buffer_bytes", size, "measured", features["write_buffer_bytes"]["how"] + snapped)
    else:
        put(doc, "controller.write_buffer_bytes", ASSUMED_BUFFER_BYTES, "assumed",
            "the probe could not see the buffer: " + (features.get("write_buffer_bytes") or {}).get("how", ""))
    if _fv(features, "readahead"):
        put(doc, "controller.readahead_bytes", ASSUMED_READAHEAD_BYTES, "assumed", "read-ahead seen; its window assumed 1 MiB")
        put(doc, "controller.readahead_min_qd", int(_fv(features, "readahead_min_qd") or 1), "measured",
            "the lowest depth at which sequential 4KB reads beat random ones")
    if _fv(features, "data_reduction"):
        doc.setdefault("data_reduction", {})["enabled"] = True
        prov["data_reduction.enabled"] = {"value": True, "source": "measured", "why": features["data_reduction"]["how"]}
        put(doc, "data_reduction.metadata_bytes_per_unit", 64, "assumed", "SandForce-like metadata per 4KB")
        link_bound = (features.get("compressible_stored_fraction") or {}).get("confidence") == "low"
        for pattern in ("compressible", "repeated", "zeros"):
            f = features.get(f"{pattern}_stored_fraction") or {}
            v = f.get("value")
            if v is None:
                continue
            if f.get("confidence") == "low" or (pattern != "compressible" and link_bound and v < 0.5):
                # the write reached the link: the drive stores at most this share; take the best case (one
                # 1KB granule per 4KB unit for compressed data, nothing beyond metadata for duplicates)
                best = 0.2 if pattern == "compressible" else 0.0
                put(doc, f"data_reduction.{pattern}_stored_fraction", best, "assumed",
                    f"at most {v} (the write ran at the link); the best case assumed (one 1KB granule per unit)")
            else:
                # the measured share includes the original's metadata and granule rounding: just below it
                # the twin stores the same whole granules
                put(doc, f"data_reduction.{pattern}_stored_fraction", round(max(0.0, float(v) - 80 / 4096), 4),
                    "measured", f.get("how", ""))
    map_unit = _fv(features, "map_unit_bytes")
    if map_unit and int(map_unit) > 4096:
        # entries that leave the drive's LBA space exactly this map unit (ceil(units / m) < units / (m / 2))
        units = -(-int(doc["drive"]["user_capacity_bytes"]) // 4096)
        put(doc, "ftl.max_map_entries", -(-units // (int(map_unit) // 4096)), "measured",
            f"a {int(map_unit) // 1024}KB map unit: " + features["map_unit_bytes"]["how"])
    idle = _fv(features, "idle_recovery_ratio")
    if idle is not None and (features.get("idle_recovery_ratio") or {}).get("confidence") != "low":
        put(doc, "ftl.bg_gc_threshold_blocks", 16 if idle > 1.5 else 0, "measured",
            f"IOPS after idle / steady state = {idle:.2f}: " + ("idle time cleans blocks" if idle > 1.5 else "no idle-time GC"))
    trim_ratio = _fv(features, "trim_recovery_ratio")
    after_trim = _fv(features, "after_trim_write_bytes_per_s")
    if trim_ratio is not None and trim_ratio < 0.8 and after_trim:
        put(doc, "ftl.recycle_bytes_per_s", int(after_trim), "measured",
            f"right after a full TRIM the drive writes at {trim_ratio:.0%} of its clean rate: it still passes every "
            "victim block through a recycling path of this rate")
    # the fitted values, then what they imply
    for k, v in values.items():
        if k == "nand.page_size_log2":
            put(doc, "nand.page_size_bytes", 1 << int(v), "fitted", "page size")
        else:
            put(doc, k, v, "fitted", "")
    if CHANNELS_KEY not in values:
        put(doc, CHANNELS_KEY, CHANNELS, "assumed", "8 channels, the common layout of the era")
    put(doc, "nand.dies_per_package", 1, "assumed", "one die per package (dies = channels x packages)")
    dies = int(doc["nand"]["channels"]) * int(doc["nand"].get("packages_per_channel", 2))
    page = int(doc["nand"].get("page_size_bytes", 8192))
    flush_ns = _tprog_measured(features)
    if flush_ns is not None and "nand.tprog_ns" not in values:
        # flush latency - write latency = the flush's own command time (a write's, less its 4KB on the
        # link) + the padded unit's transfer on the channel + tPROG
        ch = float(doc["nand"].get("channel_bytes_per_s", GENERIC_CHANNEL_BYTES_PER_S))
        link_ns = 4096 / float(link) * 1e9 if link else 0.0
        unit = PLANES * page
        tprog = max(MIN_TPROG_NS, flush_ns - unit / ch * 1e9 + link_ns)
        put(doc, "nand.tprog_ns", int(round(tprog, -3)), "measured",
            f"the flushed writes' time per program unit ({flush_ns / 1e3:.0f} us: median flush latency - write latency) "
            f"less the {unit // 1024} KiB unit's transfer at {ch / 1e6:.0f} MB/s, plus the write's 4KB on the link")
    std_rate = _fv(features, "standard_write_bytes_per_s")
    dip_rate = _fv(features, "perf_mode_dip_bytes_per_s")
    if _fv(features, "perf_mode") and (std_rate or dip_rate) and "tprog_ns" in doc["nand"]:
        # the clean stage ran in the faster mode: its program time is that mode's; the standard one follows
        # from the fill's final rate, die-bound: dies x unit / (transfer + tPROG)
        ch = float(doc["nand"].get("channel_bytes_per_s", GENERIC_CHANNEL_BYTES_PER_S))
        unit = PLANES * page
        xfer_ns = unit / ch * 1e9
        fast_tprog = int(doc["nand"]["tprog_ns"])
        pct = int(_fv(features, "perf_mode_fill_percent"))
        put(doc, "ftl.perf_mode_tprog_ns", fast_tprog, prov["nand.tprog_ns"]["source"],
            f"program time while fewer than {pct}% of the LBAs hold data (the clean stage ran in this mode)")
        put(doc, "ftl.perf_mode_fill_percent", pct, "measured", features["perf_mode_fill_percent"]["how"])
        if std_rate:
            std = dies * unit / float(std_rate) * 1e9 - xfer_ns
            why = (f"the standard mode's program time: {dies} dies x {unit // 1024} KiB per (transfer + tPROG) at the "
                   f"fill's final {float(std_rate) / 1e6:.0f} MB/s")
        else:
            # the fill ended at the link's rate: the standard mode shows only in the fall, where each die
            # programs the host's unit and r reorganised ones (each read first): per host unit
            # (1 + r) x (transfer + tPROG) + r x (tR + transfer)
            r = int(_base_profile_ftl().get("perf_mode_reorg_units_per_host_unit", REORG_UNITS_PER_HOST_UNIT))
            tr = float(doc["nand"].get("tr_ns", library_values("part", BASE_PART)["nand"]["tr_ns"]))
            per_unit_ns = dies * unit / float(dip_rate) * 1e9
            std = (per_unit_ns - r * (tr + xfer_ns)) / (1 + r) - xfer_ns
            why = (f"the standard mode's program time, from the fill's fall to {float(dip_rate) / 1e6:.0f} MB/s (its "
                   f"end ran at the link's rate): {dies} dies x {unit // 1024} KiB per host unit, each with {r} "
                   "reorganised units read and programmed beside it")
        put(doc, "nand.tprog_ns", int(round(max(fast_tprog + 10_000, std), -3)), "measured", why)
    u1 = _fv(features, "unwritten_read_latency_us")
    if _fv(features, "unwritten_reads_from_map") is False and u1:
        # a read of an unwritten LBA: the command's path (latency, FIS exchange, firmware time, 4KB on the
        # link), then the drive's own time to answer it; the rest of the measured latency is that time
        c = doc["controller"]
        rate = float(doc.get("host", {}).get("link_bytes_per_s") or 550_000_000)
        fis_ns = float(doc.get("host", {}).get("command_overhead_ns") or GENERIC_COMMAND_OVERHEAD_NS)
        path_ns = (float(c.get("command_latency_ns", GENERIC_COMMAND_LATENCY_NS)) + fis_ns
                   + float(c.get("command_cost_read_ns", 24_000)) + 4096 / rate * 1e9)
        put(doc, "controller.unmapped_read_ns", int(round(max(1_000.0, float(u1) * 1e3 - path_ns), -3)), "measured",
            f"the unwritten-LBA read's QD1 latency ({float(u1):.0f} us) less the command's path at the fitted "
            f"command times ({path_ns / 1e3:.0f} us)")
    planes, ppb = 2, 256
    block = planes * ppb * page
    onset = _fv(features, "gc_onset_bytes")
    floor = _fv(features, "gc_onset_at_least_bytes")
    if onset:
        spare_bytes, source = float(onset), "measured"
        why = "raw NAND = capacity + the bytes written past it before GC bit (the GC onset) + the free blocks the FTL keeps"
    elif floor and floor > cap * ASSUMED_SPARE_FRACTION:
        # no onset over the whole torture: the least spare that agrees with that (a twin with less would fall
        # where the drive did not)
        spare_bytes, source = float(floor), "measured"
        why = ("raw NAND = capacity + at least the bytes the torture wrote past it with no GC onset (the least spare "
               "consistent with the probe) + the free blocks the FTL keeps")
    else:
        spare_bytes, source = cap * ASSUMED_SPARE_FRACTION, "assumed"
        why = f"no GC onset seen: {ASSUMED_SPARE_FRACTION:.0%} spare assumed"
    # the dies that hold data: with parity (RAISE), one die's worth holds none
    data_dies = dies - (1 if doc["nand"].get("raise") else 0)
    raw = cap + spare_bytes + data_dies * _RESERVE_BLOCKS * block
    # at least twice the blocks the FTL keeps free (its GC threshold must stay below half a die's blocks: a
    # small test file with many dies leaves few)
    bpp = max(2 * _RESERVE_BLOCKS, math.ceil(raw / (data_dies * block)))
    put(doc, "nand.blocks_per_plane", int(bpp), source, why)
    spare_blocks = bpp - math.ceil(cap / (data_dies * block))
    bg = doc.get("ftl", {}).get("bg_gc_threshold_blocks")
    if bg is None:
        bg = _base_profile_ftl().get("bg_gc_threshold_blocks")
    if bg and bg > spare_blocks:
        # idle GC cannot clean more blocks than a die has spare (a small test file)
        old = prov.get("ftl.bg_gc_threshold_blocks", {"source": "assumed", "why": f"{BASE_PROFILE}'s {bg}"})
        put(doc, "ftl.bg_gc_threshold_blocks", max(0, spare_blocks), old["source"],
            old["why"] + f"; at most the {spare_blocks} spare blocks a die has")
    return doc, prov


def probe_rows(doc: Mapping[str, Any], twin_id: str, stages: Sequence[str] = (CLEAN,)) -> List[Published]:
    """The measured probe jobs of ``stages`` as rows to fit (each job's MB/s,
    10% tolerance). TRIM jobs are left out (their rate is not the drive's)."""
    stage_of = {j["name"]: j for j in doc["jobs"]}
    rows = []
    for i, (name, f) in enumerate(figures_of(doc).items()):
        j = stage_of[name]
        if j["stage"] not in stages or j["direction"] == "trim" or not f.get("mbps"):
            continue
        o = j["options"]
        rows.append(Published(line=i + 1, drive_id=twin_id, published_drive=str(doc["target"].get("drive_id", "")),
                              test=name, state=j["stage"], data_pattern="-", iodepth=str(o.get("iodepth", 1)),
                              value=float(f["mbps"]), unit="MB/s", kind="measured", source="probe",
                              suite_test="probe", measure="mbps", note=j["feature"]))
    return rows


def simulate_probe_figures(item: Tuple[Dict[str, Any], int, float, Tuple[str, ...]]) -> Dict[str, Dict[str, Any]]:
    """(drive dict, seed, budget, stages) -> the simulated probe's figures by
    job (a module-level function: the runner's workers import it)."""
    doc, seed, budget, stages = item
    run = run_probe_simulated(Drive.load(doc), None, stages=stages, budget=budget, seed=seed)
    return run.figures


def evaluate_twin(jobs: Sequence[Tuple[Target, Mapping[str, Any]]], runner: Runner, seed: int = 1) -> List[Evaluation]:
    """A batch of twins (target, values): each twin's probe simulated on the
    runner, compared job by job (an evaluator for :func:`ssdlab.fit.fit_many`)."""
    out: List[Evaluation] = []
    items: List[Tuple[Dict[str, Any], int, float, Tuple[str, ...]]] = []
    index: List[int] = []
    for k, (target, values) in enumerate(jobs):
        ev = Evaluation(dict(values), list(target.rows), [None] * len(target.rows))
        out.append(ev)
        ctx = target.drives[target.id]
        try:
            doc, _ = build_doc(ctx.features, values, target.id)  # type: ignore[attr-defined]
            Drive.load(doc)
        except SsdlabError as e:
            ev.error = str(e)
            continue
        items.append((doc, seed, ctx.budget, (CLEAN,)))  # type: ignore[attr-defined]
        index.append(k)
    for i, figs in runner.map(simulate_probe_figures, items, what="twin probes"):
        ev = out[index[i]]
        for n, r in enumerate(ev.rows):
            f = figs.get(r.test)
            ev.simulated[n] = None if f is None else float(f["mbps"])
    return out


class _Context:
    """What the evaluator needs of a twin target (kept where Target keeps drives)."""

    def __init__(self, features: Mapping[str, Any], budget: float) -> None:
        self.features = dict(features)
        self.budget = budget


def twin_target(probe_doc: Mapping[str, Any], twin_id: str) -> Target:
    features = probe_doc["features"]
    params = free_parameters(features, raw_nand_dies(probe_doc))
    rows = probe_rows(probe_doc, twin_id)
    if not rows:
        raise SsdlabError("the probe measured none of the clean-stage jobs a twin is fitted to (was it interrupted at once?)")
    _, budget = capacity_of(probe_doc)
    ctx = _Context(features, budget)
    return Target("twin", twin_id, params, rows, {twin_id: ctx}, {twin_id: [p.key for p in params]},  # type: ignore[dict-item]
                  sigma0=TWIN_SIGMA0)


def _toml_text(doc: Mapping[str, Any], prov: Mapping[str, Dict[str, Any]], header: Sequence[str]) -> str:
    lines = [f"# {h}" for h in header] + [""]
    for section in ("drive", "host", "controller", "nand", "ftl", "data_reduction", "power"):
        if section not in doc:
            continue
        lines.append(f"[{section}]")
        for k, v in doc[section].items():
            p = prov.get(f"{section}.{k}")
            if p is not None:
                why = f" ({p['why']})" if p.get("why") else ""
                resid = f", residual {p['residual']}" if "residual" in p else ""
                lines.append(f"# {p['source']}{resid}{why}")
            lines.append(f"{k} = {toml_value(v)}")
        lines.append("")
    return "\n".join(lines)


#: The NAND energies of the drive file's [power] section that the fitted NAND scale multiplies.
NAND_ENERGY_KEYS = ("read_uj_per_page", "program_uj_per_unit", "erase_uj_per_block", "transfer_pj_per_byte")


def fit_power(measured: Mapping[str, Mapping[str, Any]], idle_w: float, twin: Mapping[str, Mapping[str, Any]],
              base: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """The twin's power model from the probe's power readings: the idle draw
    is the idle window's average; every job's average watts is then
    ``idle + active x busy share + scale x the twin's NAND watts`` (its NAND
    energy with the part's energies in ``base``, over the job's duration), so
    the controller's active draw and one scale on the NAND's energies follow
    by least squares on the relative error (both kept at 0 or above).
    Reads, which spend little NAND energy, set the active draw; writes, whose
    programs dominate, set the scale. Returns the [power] values, their
    provenance and the fit (jobs used, RMS relative error)."""
    import numpy as np

    rows = []
    for name, f in measured.items():
        t = twin.get(name) or {}
        if f.get("avg_w") is None or not t.get("power_s"):
            continue
        w, dur = float(f["avg_w"]), float(t["power_s"])
        rows.append((w, float(t["power_busy_s"]) / dur, float(t["nand_energy_j"]) / dur))
    if not rows:
        raise SsdlabError("the probe's power readings match none of the twin's jobs")
    a = np.array([[b / w, n / w] for w, b, n in rows])
    y = np.array([(w - idle_w) / w for w, _, _ in rows])
    sol = np.linalg.lstsq(a, y, rcond=None)[0]
    if sol.min() < 0:  # one of the two at 0: the other alone
        best = None
        for i in (0, 1):
            col = a[:, i]
            x = max(0.0, float(col @ y / (col @ col))) if col @ col > 0 else 0.0
            v = np.zeros(2)
            v[i] = x
            err = float(np.sum((a @ v - y) ** 2))
            if best is None or err < best[0]:
                best = (err, v)
        assert best is not None
        sol = best[1]
    active_w, scale = float(sol[0]), float(sol[1])
    rms = float(np.sqrt(np.mean((a @ sol - y) ** 2)))
    n = len(rows)
    values: Dict[str, Any] = {"idle_mw": int(round(idle_w * 1e3)), "active_mw": int(round(active_w * 1e3))}
    for k in NAND_ENERGY_KEYS:
        values[k] = round(float(base[k]) * scale, 4)
    why = f"least squares over {n} probe jobs' average watts (RMS error {rms:.1%})"
    prov = {"power.idle_mw": {"value": values["idle_mw"], "source": "measured",
                              "why": "the probe's idle window: the draw with nothing outstanding"},
            "power.active_mw": {"value": values["active_mw"], "source": "fitted",
                                "why": "the controller's draw while I/O is outstanding, " + why}}
    for k in NAND_ENERGY_KEYS:
        prov[f"power.{k}"] = {"value": values[k], "source": "fitted",
                              "why": f"the part's {base[k]} x {scale:.3f}, one scale on the NAND's energies, " + why}
    return values, prov, {"jobs": n, "rms_relative_error": rms, "active_w": active_w, "nand_scale": scale}


def start_candidates(features: Mapping[str, Any], dies_choices: Sequence[int] = ()) -> List[Dict[str, Any]]:
    """Starts to try before the fit, over the two internals the rates leave
    most open: the page size (4, 8, 16 KiB) and, for each, the dies it implies
    from the features' estimate (made for 8KB pages: twice as many dies at
    4KB, half at 16KB) times 1/2, 1/sqrt(2), 1, sqrt(2) and 2, within the
    dies' range; or, given ``dies_choices`` (the counts the raw NAND allows:
    :func:`raw_nand_dies`), each of those with each page size. The other
    values start where they would for those dies (the
    stripe chunk depends on them). The features' own start comes first.
    Where the QD1 reads' NAND share set the channel's start (link-bound
    drives on slow channels), the same grid is tried with the generic
    channel too, and where a per-request die cap is
    offered, without it."""
    base = free_parameters(features, dies_choices)
    by_key = {p.key: p for p in base}
    ppc_p = by_key["nand.packages_per_channel"]
    dies = float(_fv(features, "dies") or 16)
    out: List[Dict[str, Any]] = [{p.key: p.value for p in base}]

    def add(feats: Mapping[str, Any], log2: int, ppc: int, **fixed: Any) -> None:
        f2 = {**feats, "dies": {**(feats.get("dies") or {}), "value": ppc * CHANNELS}}
        vals = {p.key: p.value for p in free_parameters(f2, dies_choices)}
        cand = {p.key: p.snap(float(vals.get(p.key, p.value))) for p in base}
        cand["nand.packages_per_channel"] = ppc
        cand["nand.page_size_log2"] = log2
        cand.update(fixed)
        if cand not in out:
            out.append(cand)

    def grid(feats: Mapping[str, Any]) -> None:
        for log2 in (12, 13, 14):
            if dies_choices:
                for d in dies_choices:
                    add(feats, log2, d // CHANNELS)
                continue
            implied = dies * 8192 / (1 << log2)
            for m in (0.5, 2 ** -0.5, 1.0, 2 ** 0.5, 2.0):
                add(feats, log2, ppc_p.snap(implied * m / CHANNELS))

    grid(features)
    # where the QD1 reads' NAND share moved the channel's start, the same grid at the generic channel: that share
    # holds whatever else the die spends per byte read (the SF-2281's decode per stripe chunk: 83 MB/s per
    # channel where the truth is 166)
    if "nand.channel_bytes_per_s" in by_key and by_key["nand.channel_bytes_per_s"].value != GENERIC_CHANNEL_BYTES_PER_S:
        plain = {k: v for k, v in features.items() if k != "nand_read_bytes_per_s"}
        if {p.key: p.value for p in free_parameters(plain, dies_choices)}.get("nand.channel_bytes_per_s") == GENERIC_CHANNEL_BYTES_PER_S:
            grid(plain)
    # a per-request die cap is offered where reads of data written at random are slow, which a decode or the
    # layout can explain too: the page sizes at the implied dies without the cap (its top: more dies than any
    # request spans), so that large requests choose
    cap = by_key.get("controller.seq_read_max_dies")
    if cap is not None:
        for log2 in (12, 13, 14):
            ppc = (min(dies_choices, key=lambda d: abs(math.log(d / (dies * 8192 / (1 << log2))))) // CHANNELS
                   if dies_choices else ppc_p.snap(dies * 8192 / (1 << log2) / CHANNELS))
            add(features, log2, ppc, **{cap.key: int(cap.high)})
    return out


#: Where the probe did not see the raw NAND (no garbage collection onset: SF-1200 drives, whose firmware holds
#: random writes to 10K IOPS, below what their garbage collection keeps up with), the dies kept idle are tried up
#: to this many times the dies the write rate needs: the era's controllers kept from half (Samsung MCX 32 of 64,
#: SF-1200 16 of 32) to about a third (Intel X25-M G2, 14 of 40) of their dies working.
UNSEEN_RAW_DIES_SPAN = 4


def _channel_moved(values: Mapping[str, Any], ch_p: FreeParameter, tr_p: FreeParameter, m: float) -> Dict[str, Any]:
    """The channel rate at ``m`` times ``values``', tR moved so that a read's
    first chunk on the channel (the stripe chunk, at most 4KB) keeps its time."""
    chunk = float(min(4096, int(values.get("controller.die_stripe_bytes", 4096))))
    ch0 = float(values[ch_p.key])
    ch = ch_p.snap(ch0 * m)
    return {ch_p.key: ch, tr_p.key: tr_p.snap(float(values[tr_p.key]) + chunk / ch0 * 1e9 - chunk / ch * 1e9)}


def refine_candidates(start: Mapping[str, Any], params: Sequence[FreeParameter], dies_choices: Sequence[int] = (),
                      features: Optional[Mapping[str, Any]] = None) -> List[Dict[str, Any]]:
    """Starts around the grid's best, over what the rates trade against each
    other there: the channel rate at 1/2, 2/3 and 3/2 of its start (tR moved
    by the 4KB's transfer so that the die's read keeps the measured time),
    each also with twice the dies of which only the start's work at once
    (``controller.max_active_dies``: a controller that keeps some of its dies
    busy, Samsung MCX 32 of 64, SF-1200 16 of 32). The rates alone leave
    these open; the reads of the probe's ATTO pair, right after its writes,
    tell them apart (Samsung 830: a read waits for one of the 32 dies the
    flush of its buffer holds, over 133 MB/s channels). Given
    ``dies_choices``, twice the dies only where the raw NAND allows them.

    Given ``features`` and ``dies_choices`` too: every count the raw NAND
    allows with only the dies the write rate implies working (the features'
    estimate at each page size's program unit), where the NAND holds more.
    A drive whose write rate needs fewer dies than its NAND holds has either
    a slow write path or dies kept idle, and the two differ in what its reads
    see (Intel X25-M G2: 104 MB/s, 14 dies of 8 KiB units at 1.09 ms, of 40;
    a 128KB read at QD1 gets 14 dies, not 40, so 129 MB/s, not 142).

    Each such count comes in two structures: a cap on the dies at work
    (``controller.max_active_dies``: reads are held to them too) and a
    program buffer with room for the working dies' units
    (``controller.program_buffer_bytes``: programs are held, reads use every
    die; OCZ Vertex 2 on 25nm NAND: 192 KiB, twelve 16 KiB units on 16 dies).
    Both leave every write path the features gave (the controller's, and a
    reducing controller's encoder) no slower than the link, so that the dies
    alone explain the write rate; so does one start with every die at work,
    on the fewest dies that hold the working ones, which a cap must beat.
    Without ``dies_choices`` (no garbage
    collection onset in the probe, so no raw NAND: SF-1200 drives held to
    10K random writes) the counts on each layout's channels go up to
    :data:`UNSEEN_RAW_DIES_SPAN` times the working dies."""
    by_key = {p.key: p for p in params}
    ch_p, tr_p, ppc_p = by_key.get("nand.channel_bytes_per_s"), by_key["nand.tr_ns"], by_key["nand.packages_per_channel"]

    def channel_times(m: float) -> Dict[str, Any]:
        # the channel rate at m times the start's, tR moved so that the die's read keeps its measured time
        return {} if ch_p is None else _channel_moved(start, ch_p, tr_p, m)

    variants: List[Dict[str, Any]] = [{}]
    if ch_p is not None:
        for m in (0.5, 2 / 3, 1.5):
            v = channel_times(m)
            if v[ch_p.key] != start[ch_p.key]:
                variants.append(v)
    out: List[Dict[str, Any]] = []
    ppc = int(start[ppc_p.key])
    doubled = 2 * ppc <= MAX_PACKAGES_PER_CHANNEL and (not dies_choices or 2 * ppc * CHANNELS in dies_choices)
    for v in variants:
        for capped in (False, True) if doubled else (False,):
            cand = {**start, **v}
            if capped:
                cand[ppc_p.key] = 2 * ppc
                cand[ACTIVE_DIES_KEY] = ppc * CHANNELS
            if cand != start and cand not in out:
                out.append(cand)
    # twice the dies at the other page sizes too: with half of them working, the page that fits differs (the Vertex 3
    # 480GB's probe, 64 dies with 32 working: objective 0.627 at its 8 KiB pages, 0.656 at the 16 KiB the grid's
    # best of 32 dies had)
    if doubled and "nand.page_size_log2" in start:
        for log2 in (12, 13, 14):
            cand = {**start, ppc_p.key: 2 * ppc, ACTIVE_DIES_KEY: ppc * CHANNELS, "nand.page_size_log2": log2}
            if cand not in out:
                out.append(cand)
    # the raw NAND's dies on other channel counts where they divide (the dies a request reads at once, and the
    # channel each waits on, differ: Intel X25-M G2, 40 dies on 10 channels: objective 0.18 against 0.67 on 8 with
    # every other value its own), each also with the write rate's dies working (below)
    here = int(start.get(CHANNELS_KEY, CHANNELS))
    others = [(c, d) for c in CHANNEL_CHOICES if c != here for d in dies_choices
              if d % c == 0 and d // c <= MAX_PACKAGES_PER_CHANNEL]
    layouts: List[Tuple[int, Optional[int]]] = [(here, None), *others]
    for c, d in others:
        # the c channels carry the start's total rate
        cand = {**start, CHANNELS_KEY: c, ppc_p.key: d // c, **channel_times(here / c)}
        if cand not in out:
            out.append(cand)
    implied = _fv(features, "dies") if features is not None else None
    if implied and "nand.page_size_log2" in start:
        # the write paths a rate below the dies' could be instead: the controller's, and a reducing controller's encoder
        paths = [by_key[k] for k in ("controller.max_write_bytes_per_s", "controller.encode_bytes_per_s") if k in by_key]

        def add_open(d: int, c: int, log2: int, cap: Mapping[str, Any]) -> None:
            # d dies on c channels at 2^log2 B pages, the write paths no slower than the link, with the cap if any
            cand = {**start, ppc_p.key: d // c, **cap, "nand.page_size_log2": log2}
            if c != here or CHANNELS_KEY in start:
                cand.update({CHANNELS_KEY: c, **channel_times(here / c)})
            cand.update({w.key: int(w.high) for w in paths})
            if cand not in out:
                out.append(cand)

        for log2 in (12, 13, 14):
            working = int(round(implied * ASSUMED_PROGRAM_UNIT_BYTES / (PLANES << log2)))
            for c, only in layouts:
                # where the probe did not see the raw NAND, the counts on these channels up to a few times the
                # working dies
                counts = (only,) if only is not None else dies_choices or [
                    k * c for k in range(1, MAX_PACKAGES_PER_CHANNEL + 1) if k * c <= UNSEEN_RAW_DIES_SPAN * working]
                if working < 4:
                    continue
                # the same open paths with every die at work, on the fewest dies that hold the working ones: a cap
                # must beat that, not a start whose write path the features set below the dies' rate
                fewest = min((d for d in counts if d >= working and not d % c), default=None)
                if fewest is not None:
                    add_open(fewest, c, log2, {})
                for d in counts:
                    if d < 1.25 * working or d % c:
                        continue
                    # the dies explain the write rate: the write paths are left no slower than the link; the
                    # idle dies are kept so by a cap on the dies at work, or on the programs alone (a program
                    # buffer with room for the working dies' units)
                    for cap in ({ACTIVE_DIES_KEY: working}, {PROGRAM_BUFFER_KEY: working * PLANES << log2}):
                        add_open(d, c, log2, cap)
    return out


def with_active_dies(params: Sequence[FreeParameter], start: Mapping[str, Any]) -> List[FreeParameter]:
    """The free parameters of a start with an active-die cap: the cap is
    free too, and the dies may reach the start's (twice what the rates
    gave, beyond their range)."""
    out = [replace(p, high=max(p.high, int(start[p.key]))) if p.key == "nand.packages_per_channel" else p
           for p in params if p.key != ACTIVE_DIES_KEY]
    return out + [FreeParameter(ACTIVE_DIES_KEY, 4, MAX_PACKAGES_PER_CHANNEL * CHANNELS,
                                int(start.get(ACTIVE_DIES_KEY, CHANNELS)), True, 1,
                                "dies programming or reading at once, of all the dies: chosen by the scan where twice "
                                "the dies with the rates' count working at once reproduce the probe better")]


def with_program_buffer(params: Sequence[FreeParameter], start: Mapping[str, Any]) -> List[FreeParameter]:
    """The free parameters of a start with a program buffer: the buffer is
    free too, in steps of the smallest program unit."""
    unit = PLANES << 12
    out = [replace(p, high=max(p.high, int(start[p.key]))) if p.key == "nand.packages_per_channel" else p
           for p in params if p.key != PROGRAM_BUFFER_KEY]
    return out + [FreeParameter(
        PROGRAM_BUFFER_KEY, 2 * unit, MAX_PACKAGES_PER_CHANNEL * CHANNELS * unit * 4,
        int(start.get(PROGRAM_BUFFER_KEY, 16 * unit)), True, unit,
        "the controller's memory for programs in flight: it holds the programs, not the reads, to the dies it has "
        "room for; chosen by the scan where all the dies reading and fewer programming reproduce the probe better")]


def cap_of(values: Mapping[str, Any]) -> Optional[str]:
    """Which way a twin's values keep dies idle (:data:`CAP_KEYS`), if any."""
    return next((k for k in CAP_KEYS if k in values), None)


def _target_for(target: Target, values: Mapping[str, Any]) -> Target:
    """``target`` with the parameters a start's structure adds: a free active-die cap or program buffer, a fixed
    channel count."""
    params = with_active_dies(target.params, values) if ACTIVE_DIES_KEY in values else list(target.params)
    if PROGRAM_BUFFER_KEY in values:
        params = with_program_buffer(params, values)
    if CHANNELS_KEY in values:
        c = int(values[CHANNELS_KEY])
        params = [p for p in params if p.key != CHANNELS_KEY] + [FreeParameter(
            CHANNELS_KEY, c, c, c, False, 1, f"channels: the scan's choice among {CHANNEL_CHOICES} for the dies the "
            "raw NAND holds (which dies a request reads at once, and the channel each waits on)")]
    return replace(target, params=params)


#: Structures (channel count, active-die cap or not) whose best start comes within this factor of the best
#: start's objective are each polished before one is chosen: at the starts' times they score alike (Intel X25-M
#: G2: 0.71-0.83 for 8 or 10 channels, capped or not), their own times tell them apart.
CONTEST_WINDOW = 1.3
#: Pattern-search evaluations each contending structure gets (about one sweep of the times).
CONTEST_EVALUATIONS = 32
#: After the contest's polish a cap must still explain the probe this much better than the dies all working.
CONTEST_CAP_EVIDENCE = 0.85


def scan_starts(target: Target, features: Mapping[str, Any], runner: Runner, seed: int = 1,
                dies_choices: Sequence[int] = ()) -> Tuple[Dict[str, Any], List[Tuple[Dict[str, Any], float]]]:
    """Every :func:`start_candidates` simulated (one batch on the runner),
    then the :func:`refine_candidates` around the best of them (a second
    batch); the best start and every (start, objective). CMA-ES's steps are
    small (``TWIN_SIGMA0``): it cannot move an integer like the dies by half
    or double, nor leave a start whose channel and tR trade against each
    other, so those moves are tried here first. ``dies_choices``: the die
    counts the raw NAND allows (:func:`raw_nand_dies`), the only ones tried.

    Where several structures (channels, an active-die cap) come close, the
    best start of each is polished a little (:data:`CONTEST_EVALUATIONS`)
    and the best polished one is the start; a cap must beat the dies all
    working by :data:`CONTEST_CAP_EVIDENCE` (before any polish, by
    :data:`ACTIVE_DIES_EVIDENCE`)."""
    cands = start_candidates(features, dies_choices)
    evs = evaluate_twin([(target, c) for c in cands], runner, seed)
    evaluated = list(zip(cands, evs))
    best = min(evaluated, key=lambda x: x[1].objective)[0]
    more = [c for c in refine_candidates(best, target.params, dies_choices, features) if c not in cands]
    if more:
        evs = evaluate_twin([(_target_for(target, c), c) for c in more], runner, seed)
        evaluated += list(zip(more, evs))
        groups: Dict[Tuple[int, Optional[str]], Tuple[Dict[str, Any], Evaluation]] = {}
        for c, ev in evaluated:
            key = (int(c.get(CHANNELS_KEY, CHANNELS)), cap_of(c))
            if key not in groups or ev.objective < groups[key][1].objective:
                groups[key] = (c, ev)
        low = min(ev.objective for _, ev in groups.values())
        contenders = [g for g in groups.values() if g[1].objective <= CONTEST_WINDOW * low]
        evidence = ACTIVE_DIES_EVIDENCE
        if len(contenders) > 1:
            polished = []
            for c, ev in contenders:
                res = polish(_target_for(target, c), ev, evaluate_twin, runner, seed, budget=CONTEST_EVALUATIONS,
                             stream=None)
                polished.append((dict(res.best.values), res.best))
            evaluated += polished
            contenders, evidence = polished, CONTEST_CAP_EVIDENCE
        plain = min((x for x in contenders if cap_of(x[0]) is None), key=lambda x: x[1].objective, default=None)
        capped = min((x for x in contenders if cap_of(x[0])), key=lambda x: x[1].objective, default=None)
        if plain is None:
            plain = min((x for x in evaluated if cap_of(x[0]) is None), key=lambda x: x[1].objective)
        # a cap is one more mechanism: it must explain the probe clearly better than the dies all working
        best = capped[0] if capped is not None and capped[1].objective < evidence * plain[1].objective else plain[0]
    return best, [(c, ev.objective) for c, ev in evaluated]


#: After the fit, the twin's structure is tried again against others the scan weighed (and parity, which it does
#: not), at the fitted times
#: (:func:`recheck_structure`), and another is taken where it explains the probe with this share of the twin's error
#: or less. The scan compares structures at its starts' times, where the command costs and the write path are not
#: yet fitted: Force F120, 0.795 for 48 dies with 24 at work, 0.878 for 24 all working, 0.836 for its truth (32 with
#: 16); Intel SSD 320, 0.094 for 72 dies on 8 channels, 0.337 for its truth (40 on 10). At the fitted times they
#: are far apart. On the round trip's fitted twins (rt27-rt31, each preset's latest), the clean probe's RMS log error
#: with another structure over the twin's own: twice the dies with the fitted ones at work, Force F120 0.33 (its 8
#: and 16KB reads at QD1, its mixed QD4), every other preset 1.05 (Intel 510) to 95 (DC S3700); with a program
#: buffer for their units instead, 1.06 or more everywhere (Force F120 2.0: its reads wait for the dies kept idle,
#: not only its programs); the other layouts of the raw NAND's die counts on 8 or 10 channels, Intel SSD 320 0.26
#: for 40 dies on 10 channels (0.79 on 8), every other preset 1.2 (X25-M G2, 40 dies on 8) or more; half the dies
#: of twice the page on a channel twice as fast (or the reverse), tR moved so a 4KB read keeps its time, Samsung 840
#: Pro 0.48 (32 dies of 8 KiB pages for 64 of 4 KiB: its truth), every other preset 2.4 (Vertex 3 480GB) or more.
STRUCTURE_EVIDENCE = 0.6
#: ... and those within this share of the twin's error at its fitted times get a short polish first
#: (:data:`CONTEST_EVALUATIONS`): their times were fitted for another structure. Parity on one die of every stripe
#: (RAISE), on the same twins: the Vertex 3 120GB 0.78 (with its write paths as much faster), the 240GB and Pro 0.84
#: (as fitted), every other preset 0.97 or more (Vertex 3 480GB 0.99, SanDisk Extreme II 1.00, Vector 1.02).
STRUCTURE_CONTEST_WINDOW = 0.9
#: The channel rates tried along the valley tR and the channel share, as multiples of the fitted one (tR moved so
#: that a read's first chunk keeps its time). On the same twins: Vertex 2 Hynix 0.49 of its error with 1.25x (51
#: MB/s and tR 59 us for its fitted 41 and 57; its truth 50 and 60), every other preset 1.01 (Vertex 3 480GB) or more.
VALLEY_CHANNEL_STEPS = (1.25, 0.8)
#: The structure is weighed again from each one kept, at most this many times (each round keeps one change).
STRUCTURE_ROUNDS = 3


def recheck_structure(target: Target, best: Evaluation, runner: Runner, seed: int, dies_choices: Sequence[int],
                      polish_evaluations: int, stream: Optional[TextIO] = None
                      ) -> Tuple[Target, Evaluation, Optional[Dict[str, Any]]]:
    """The fitted twin (every die at work) against, at its fitted times:
    twice its dies with the fitted ones at work, held by a cap on the dies
    at work (reads too) or by a program buffer with room for their units
    (programs alone); and every other layout of the die counts the raw NAND
    allows (``dies_choices``) on :data:`CHANNEL_CHOICES` channels, all at
    work; half the dies of twice the page on channels twice as fast (and
    the reverse); and parity on one die of every stripe (RAISE). Where one
    explains the probe clearly better (:data:`STRUCTURE_EVIDENCE`; those
    within :data:`STRUCTURE_CONTEST_WINDOW` after a short polish) it is
    polished (the times move, the structure stays) and returned with its
    target; else the twin as it was. The record of what was compared comes
    third (``kept``: the structure taken, or None), ``None`` where there
    was nothing to compare. A twin that already keeps dies idle (a cap or a
    program buffer) keeps its dies, layout and page: only the channel's
    valley and parity are weighed for it."""
    vals = dict(best.values)
    # a twin that already keeps dies idle keeps its dies, layout and page (the cap was chosen for them): only the
    # channel's valley and parity are weighed
    capped = cap_of(vals) is not None
    ppc, channels = int(vals["nand.packages_per_channel"]), int(vals.get(CHANNELS_KEY, CHANNELS))
    dies = ppc * channels
    log2 = int(vals.get("nand.page_size_log2", 13))
    by_key = {p.key: p for p in target.params}
    ch_p, tr_p = by_key.get("nand.channel_bytes_per_s"), by_key.get("nand.tr_ns")
    cands: List[Tuple[str, Dict[str, Any]]] = []
    if not capped and 2 * ppc <= MAX_PACKAGES_PER_CHANNEL and (not dies_choices or 2 * dies in dies_choices):
        cands += [(f"{2 * dies} dies, {dies} at work", {**vals, "nand.packages_per_channel": 2 * ppc, ACTIVE_DIES_KEY: dies}),
                  (f"{2 * dies} dies, a program buffer for {dies} dies' units",
                   {**vals, "nand.packages_per_channel": 2 * ppc, PROGRAM_BUFFER_KEY: dies * PLANES << log2})]
    for d in () if capped else dies_choices:
        for c in CHANNEL_CHOICES:
            if d % c == 0 and d // c <= MAX_PACKAGES_PER_CHANNEL and (d, c) != (dies, channels):
                cands.append((f"{d} dies on {c} channels", {**vals, "nand.packages_per_channel": d // c, CHANNELS_KEY: c}))
    # half the dies of twice the page, the channel twice as fast (and the reverse): the same bytes per program
    # and per page transfer time, tR moved so that a 4KB read keeps its time
    if not capped and ch_p is not None and tr_p is not None and "nand.page_size_log2" in vals:
        for step in (1, -1):
            d = dies // 2 if step == 1 else dies * 2
            if not (12 <= log2 + step <= 14 and (step == -1 or dies % 2 == 0) and d % channels == 0 and 1 <= d // channels <= MAX_PACKAGES_PER_CHANNEL
                    and (not dies_choices or d in dies_choices)):
                continue
            moved = _channel_moved(vals, ch_p, tr_p, 2.0 ** step)
            cands.append((f"{d} dies of {(1 << (log2 + step)) // 1024} KiB pages on {moved[ch_p.key] / 1e6:.0f} MB/s "
                          "channels", {**vals, "nand.packages_per_channel": d // channels,
                                       "nand.page_size_log2": log2 + step, **moved}))
    # along the valley tR and the channel rate share (a read's first chunk keeps its time): a quarter faster or a
    # fifth slower channel, farther than the polish's 8% steps reach where the objective is rugged (Vertex 2 Hynix:
    # 41 MB/s and 57 us fitted, 50 and 60 its truth; its file-copy reads jump between 41 and 44 MB/s); tPROG, where
    # measured, follows the channel in build_doc (the flushed unit keeps its time)
    if ch_p is not None and tr_p is not None:
        ch0 = float(vals[ch_p.key])
        for m in VALLEY_CHANNEL_STEPS:
            moved = _channel_moved(vals, ch_p, tr_p, m)
            ch = moved[ch_p.key]
            if ch == ch0:
                continue
            tp_p = by_key.get("nand.tprog_ns")
            if tp_p is not None and tp_p.key in vals:
                unit = float(PLANES << log2)
                moved[tp_p.key] = tp_p.snap(float(vals[tp_p.key]) + unit / ch0 * 1e9 - unit / ch * 1e9)
            cands.append((f"channels at {ch / 1e6:.0f} MB/s, tR {moved[tr_p.key] / 1e3:.0f} us", {**vals, **moved}))
    # parity across the dies (SandForce's RAISE, the Intel 320's): one die of every stripe holds parity, so the
    # dies program a unit more per stripe; the write paths as fitted, or as much faster (where the fit slowed them
    # to stand in for the parity's programs: the Vertex 3 120GB's encoder, 181 MB/s for its 235)
    if not vals.get("nand.raise") and dies > 2:
        paths = {k: by_key[k] for k in ("controller.max_write_bytes_per_s", "controller.encode_bytes_per_s")
                 if k in by_key and k in vals}
        cands.append(("parity on one die of every stripe (RAISE)", {**vals, "nand.raise": True}))
        if paths:
            cands.append(("parity on one die, the write paths as much faster", {
                **vals, "nand.raise": True, **{k: p.snap(float(vals[k]) * dies / (dies - 1)) for k, p in paths.items()}}))
    if not cands:
        return target, best, None
    targets = [_fixed_dies(_target_for(target, c), int(c["nand.packages_per_channel"])) for _, c in cands]
    evs = evaluate_twin(list(zip(targets, [c for _, c in cands])), runner, seed)
    here = (f"{dies} dies on {channels} channels, " + (f"{vals[ACTIVE_DIES_KEY]} at work" if ACTIVE_DIES_KEY in vals
                                                           else "a program buffer" if capped else "all at work")
            + (", parity on one" if vals.get("nand.raise") else ""))
    record: Dict[str, Any] = {"fitted": here, "objective": round(best.objective, 4), "kept": None,
                              "others": {name: round(ev.objective, 4) for (name, _), ev in zip(cands, evs)}}
    if stream is not None:
        stream.write(f"ssdlab fit: the structure at the fitted times: {here} {best.objective:.3f}; "
                     + ", ".join(f"{name} {ev.objective:.3f}" for (name, _), ev in zip(cands, evs)) + "\n")
    k = min(range(len(cands)), key=lambda i: evs[i].objective)
    if not evs[k].objective < STRUCTURE_EVIDENCE * best.objective:
        # structures that come close at times fitted for another: a short polish each, then the same test
        close = [i for i in range(len(cands)) if evs[i].objective < STRUCTURE_CONTEST_WINDOW * best.objective]
        if not close:
            return target, best, record
        for i in close:
            evs[i] = polish(targets[i], evs[i], evaluate_twin, runner, seed, budget=CONTEST_EVALUATIONS, stream=None).best
        record["contest"] = {cands[i][0]: round(evs[i].objective, 4) for i in close}
        if stream is not None:
            stream.write("ssdlab fit: polished a little: " + ", ".join(
                f"{cands[i][0]} {evs[i].objective:.3f}" for i in close) + "\n")
        k = min(close, key=lambda i: evs[i].objective)
        if not evs[k].objective < STRUCTURE_EVIDENCE * best.objective:
            return target, best, record
    res = polish(targets[k], evs[k], evaluate_twin, runner, seed, budget=polish_evaluations, stream=stream)
    changed = sorted(key for key, v in cands[k][1].items() if vals.get(key) != v)
    return targets[k], res.best, {**record, "kept": cands[k][0], "changed": changed,
                                  "polished": round(res.best.objective, 4)}


def _fixed_dies(target: Target, ppc: int) -> Target:
    """``target`` with its packages per channel fixed at ``ppc`` (the polish keeps the structure anyway)."""
    return replace(target, params=[replace(p, low=ppc, high=ppc, value=ppc) if p.key == "nand.packages_per_channel"
                                   else p for p in target.params])


def _fill_error(measured: Mapping[str, Mapping[str, Any]], twin: Mapping[str, Mapping[str, Any]],
                jobs: Sequence[str]) -> float:
    errs = [math.log(float(twin[j]["mbps"]) / float(measured[j]["mbps"])) for j in jobs
            if (measured.get(j) or {}).get("mbps") and (twin.get(j) or {}).get("mbps")]
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else math.inf


#: The most the torture's per-second variability may exceed the twin's for the flush after it to give the buffer:
#: a paced garbage collection drains the buffer at the torture's steady pace (probes: Vector 0.090 against the
#: twin's 0.096, Vertex 4 fw1.4 0.121 against 0.106), where one that cleans whole blocks when it needs one (Crucial
#: m4: 0.183 against 0.117) or recycles through the controller (SF-2281: 0.418) makes the flush wait for that work.
PACED_CV_EVIDENCE = 1.3
#: ... and the most the twin's steady state may differ from the drive's: the flush drains the buffer at the pace of
#: the twin's garbage collection (SF-2500: the twin's torture runs 24% fast, its flush 35x short with the true 2 MiB).
PACE_TOLERANCE = 0.10
#: A buffer the clean bursts measured is tried against the flush's only where the flush gives more than this times
#: it. Bursts see a buffer only as far as the link outruns the NAND: the Vertex 4 128GB fw1.4/1.5, in performance
#: mode, show 21-27 MiB of their 64, the flush 58-61 (2.3-2.8x). The flush's own estimate is rough (its confidence
#: is low): on the paced presets' probes it came within 0.87-1.18x of the truth, and at the quick budget the generic
#: drive's gave 6.5 MB where its bursts measured the right 4.2 (1.55x).
BURST_DOUBT = 2.0
#: ... and replaced only where the flush's buffer at least halves the fill stage's error.
BURST_EVIDENCE = 0.5
#: The twin's flush after the torture is close enough to the measured one within this (log ratio, 2%).
FLUSH_TOLERANCE = 0.02


def _torture_steady(figs: Mapping[str, Mapping[str, Any]]) -> Tuple[Optional[float], Optional[float]]:
    """The torture's steady state: the median of its per-second IOPS over the last 20%, and their coefficient of
    variation over its second half."""
    series = [float(x) for x in (figs.get("torture") or {}).get("iops_series") or []]
    half = series[len(series) // 2:]
    if len(half) < 10 or not statistics.fmean(half):
        return None, None
    return steady_iops(series), statistics.pstdev(half) / statistics.fmean(half)


def _flush_s(figs: Mapping[str, Mapping[str, Any]]) -> Optional[float]:
    us = (figs.get("tortured-flush") or {}).get("sync_mean_us")
    return None if not us else float(us) / 1e6


#: Lazy foreground GC is one more mechanism than the generic profile's paced GC. A drive that cleans a whole victim
#: when it needs a block makes the flush after the torture wait for that cleaning, and its torture's per-second
#: rate comes in deeper valleys; lazy is taken when both say so: the fill stage's RMS log error below this share of
#: the paced twin's, and the torture's per-second coefficient of variation not against it (farther from the drive's
#: than the paced twin's and by more than :data:`PACED_CV_EVIDENCE`). (Round-trip probes: the fill error alone gives
#: 0.11-0.57 on the drives that clean whole blocks and 2.1-156 on the paced ones, but also 0.16-0.29 on the Vertex 4
#: 128GB fw1.4/1.5, whose flush is long for a buffer the twin lacks: their torture varies 0.13-0.14 per second as
#: their paced twins do, 0.59-1.02 lazy.)
GC_MODE_EVIDENCE = 0.7


def _rate_jobs(features: Mapping[str, Any], measured: Mapping[str, Mapping[str, Any]], budget: float) -> List[str]:
    """The fill stage's measured rate jobs (not its TRIM)."""
    rate = {j.name for j in probe_jobs(int(_fv(features, "capacity_bytes")), budget)
            if j.stage == FILL and j.direction != "trim"}
    return [n for n, f in measured.items() if f.get("mbps") and n in rate]


def _simulate_docs(docs: Sequence[Dict[str, Any]], runner: Runner, seed: int, budget: float
                   ) -> List[Dict[str, Dict[str, Any]]]:
    """Each drive's whole probe (clean and fill stages), at once on the runner."""
    items = [(d, seed, budget, (CLEAN, FILL)) for d in docs]
    return [f for _, f in sorted(runner.map(simulate_probe_figures, items, what="twin probes"), key=lambda x: x[0])]


def _recycling(drive_doc: Dict[str, Any], features: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The twin with lazy GC through a recycling path at the rate the drive
    wrote right after a full TRIM, where the probe measured data reduction
    (and no path was set already): see :data:`RECYCLE_NEEDS`."""
    rate = _fv(features, "after_trim_write_bytes_per_s")
    ftl = drive_doc.get("ftl", {})
    if not (drive_doc.get("data_reduction") or {}).get("enabled") or not rate or ftl.get("recycle_bytes_per_s"):
        return None
    return {**drive_doc, "ftl": {**ftl, "gc_mode": "lazy", "recycle_bytes_per_s": int(rate)}}


#: A controller that stores data reduced (SandForce's DuraWrite: compressed, deduplicated, encrypted) cannot copy a
#: victim's pages from die to die: every block on its way back to the free pool passes through the controller's
#: reduction engine, one recycling path for the whole drive, at about the rate a write into recycled blocks runs
#: (docs/model.md). Where the probe measured data reduction, that is the third garbage collection tried: lazy, through
#: a path at the rate of the sequential write right after the full TRIM (a TRIM frees no pre-erased block). Its rate
#: is measured, not fitted, so it is taken when it beats both others on the fill stage's error, its torture's
#: variability not against it (see :data:`GC_MODE_EVIDENCE`), without that constant's margin. (Round-trip probes,
#: SF-2281 and SF-2500: the torture's steady state within 1.5% of the drive's and its variability 0.30/0.48/0.36/0.08 against
#: 0.29/0.42/0.33/0.09, where paced and lazy twins ran 1.9-2.8x fast on the 240/480GB and Pro, or varied 3x too much.)
RECYCLE_NEEDS = "data reduction measured"


def choose_gc_mode(drive_doc: Dict[str, Any], features: Mapping[str, Any], measured: Mapping[str, Mapping[str, Any]],
                   runner: Runner, seed: int, budget: float
                   ) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """When the twin's foreground garbage collection works: the whole probe
    simulated with paced GC (the base profile's: a little before every host
    program once a die is short of blocks), lazy GC (whole victims when a
    block is needed) and, on a drive that reduces data, lazy GC through a
    recycling path (:func:`_recycling`), all at once on the runner; the mode
    whose fill stage (the fill, the torture, the flush after it, the dirty and
    trimmed writes) comes closer to the drive's, lazy only with clear evidence
    in the error and in the torture's variability (:data:`GC_MODE_EVIDENCE`).
    The clean stage, which the parameters were fitted to, runs before any
    garbage collection. Returns the drive, its probe's figures and the mode's
    provenance."""
    jobs = _rate_jobs(features, measured, budget)
    lazy = {**drive_doc, "ftl": {**drive_doc.get("ftl", {}), "gc_mode": "lazy"}}
    recycling = _recycling(drive_doc, features)
    docs = [drive_doc, lazy] + ([recycling] if recycling is not None else [])
    all_figs = _simulate_docs(docs, runner, seed, budget)
    errs = [_fill_error(measured, f, jobs) for f in all_figs]
    cv = [_torture_steady(f)[1] for f in [dict(measured)] + all_figs]
    e_paced, e_lazy = errs[0], errs[1]
    errors = (f"the fill stage's RMS log error {e_lazy:.3f} with lazy GC against {e_paced:.3f} paced"
              + (f" and {errs[2]:.3f} lazy through a recycling path at the after-TRIM rate "
                 f"({recycling['ftl']['recycle_bytes_per_s'] / 1e6:.0f} MB/s)" if recycling is not None else "")
              + f", over {len(jobs)} jobs; the torture's per-second coefficient of variation "
              + ("not logged" if cv[0] is None else f"{cv[0]:.3f}, " + ", ".join(
                  f"{c or 0:.3f} {n}" for c, n in zip(cv[1:], ("paced", "lazy", "recycling")))))
    if cv[0] and all(c is not None for c in cv[1:]):
        c_meas = max(float(cv[0]), 1e-3)
        cv_dist = [abs(math.log(max(float(c or 0.0), 1e-3) / c_meas)) for c in cv[1:]]
    else:
        cv_dist = [0.0] * len(docs)  # a torture without variability (or unlogged) says nothing either way

    def cv_against(k: int, j: int) -> bool:
        """The torture's variability speaks against mode k beside mode j: k's is farther from the drive's than
        j's, and by more than PACED_CV_EVIDENCE (closer than that, the per-second variability of one probe does
        not tell the modes apart: Vertex 3 Pro, 0.087 measured, 0.098 paced, 0.091 lazy, 0.075 recycling)."""
        return cv_dist[k] > max(cv_dist[j], math.log(PACED_CV_EVIDENCE))

    # the recycling candidate: lazy through a path at the after-TRIM rate, or, where build_doc set that path already
    # (the write after a full TRIM ran slow) on a drive that reduces data, lazy through it; taken without the margin
    measured_path = (recycling is None and (drive_doc.get("data_reduction") or {}).get("enabled")
                     and drive_doc.get("ftl", {}).get("recycle_bytes_per_s"))
    path = 2 if recycling is not None else 1 if measured_path else None
    if path is not None and math.isfinite(errs[path]) and all(
            errs[path] < errs[k] and not cv_against(path, k) for k in range(len(docs)) if k != path):
        return docs[path], all_figs[path], {
            "value": "lazy", "source": "fitted", "residual": round(errs[path], 4),
            "why": "whole victims cleaned when a block is needed, every block through "
                   + ("the controller's recycling path" if path == 2 else
                      "the recycling path the write after the full TRIM measured")
                   + f" ({RECYCLE_NEEDS}): {errors}"}
    if math.isfinite(e_lazy) and e_lazy < GC_MODE_EVIDENCE * e_paced and not cv_against(1, 0):
        return lazy, all_figs[1], {"value": "lazy", "source": "fitted", "residual": round(e_lazy, 4),
                                   "why": f"whole victims cleaned when a block is needed: {errors}"}
    return drive_doc, all_figs[0], {"value": "paced", "source": "fitted" if math.isfinite(e_paced) else "assumed",
                                    "residual": round(e_paced, 4) if math.isfinite(e_paced) else None,
                                    "why": f"{BASE_PROFILE}'s paced GC: {errors} (lazy needs below {GC_MODE_EVIDENCE} "
                                           "of paced, and the variability not farther)"}


#: The recycling path's rate tried above the write after the full TRIM (x this): that write passes every victim
#: through the path and waits for it, so it runs at most at the path's rate, and below it where the dies or the
#: encoder bind as well (SF-2281, path 213 MB/s: the 240GB wrote 201 MB/s after TRIM, the 120GB, die-bound, 162).
#: Taken as the path, 201 left the 240GB twin's first interval-by-interval pass after a 20-minute torture 26%
#: slower at its slowest second (25.2 MB/s against 33.8; 32.2 with 213).
RECYCLE_PATH_STEPS = (1.06, 1.12, 1.19, 1.26, 1.34, 1.42)

#: The path is the slowest at which the twin's own write after the full TRIM comes within this of the drive's (one
#: fit of the 240GB: 3.4% short with 201 MB/s, 0.6% with 213; the 80-trial fit of the round trip: +1.4% with 201,
#: which it keeps). Not the fill stage's best: it samples lazy GC's stalls
#: and the path would stand in for what else the twin gets wrong (Vertex 2 25nm's twin, path 71 MB/s as its truth:
#: RMS log error 0.281 at 71, 0.106 at 80, 0.932 at 85).
RECYCLE_PATH_TOLERANCE = 0.02


def choose_recycle_path(drive_doc: Dict[str, Any], figs0: Dict[str, Dict[str, Any]], assumed: Dict[str, Any],
                        features: Mapping[str, Any], measured: Mapping[str, Mapping[str, Any]], runner: Runner,
                        seed: int, budget: float) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """The rate of a twin's recycling path (``ftl.recycle_bytes_per_s``, set
    from the write after the full TRIM, a lower bound: see
    :data:`RECYCLE_PATH_STEPS`): where the twin's own write after the TRIM
    falls short of the drive's by more than :data:`RECYCLE_PATH_TOLERANCE`,
    each step above it is simulated on the whole probe at once on the
    runner, and the slowest whose write after the TRIM comes within it is
    kept (if its fill stage is no worse). ``figs0``: the whole probe on
    ``drive_doc``; ``assumed``: the rate's provenance so far. Returns the
    drive, its probe's figures and the rate's provenance."""
    ftl = drive_doc.get("ftl", {})
    r0 = ftl.get("recycle_bytes_per_s")
    job = "after-trim-seqwrite"
    meas = (measured.get(job) or {}).get("mbps")
    if not r0 or ftl.get("gc_mode") != "lazy" or not meas:
        return drive_doc, figs0, assumed

    def short(figs: Mapping[str, Mapping[str, Any]]) -> float:
        got = (figs.get(job) or {}).get("mbps")
        return float(got) / float(meas) - 1 if got else -1.0

    if short(figs0) >= -RECYCLE_PATH_TOLERANCE:
        return drive_doc, figs0, {**assumed, "why": assumed.get("why", "") + f"; the twin's own write after the TRIM "
                                  f"falls short of it by no more than {RECYCLE_PATH_TOLERANCE:.0%} ({short(figs0):+.1%})"}
    values = [int(round(r0 * k)) for k in RECYCLE_PATH_STEPS]
    docs = [{**drive_doc, "ftl": {**ftl, "recycle_bytes_per_s": v}} for v in values]
    jobs = _rate_jobs(features, measured, budget)
    tried = [(int(r0), drive_doc, figs0)] + list(zip(values, docs, _simulate_docs(docs, runner, seed, budget)))
    errs = [_fill_error(measured, f, jobs) for _, _, f in tried]
    listed = ", ".join(f"{v / 1e6:.0f} MB/s: {short(f):+.1%} ({e:.3f})" for (v, _, f), e in zip(tried, errs))
    ok = [k for k in range(1, len(tried)) if short(tried[k][2]) >= -RECYCLE_PATH_TOLERANCE and errs[k] <= errs[0]]
    if not ok:
        return drive_doc, figs0, {**assumed, "why": assumed.get("why", "") + "; no faster path brings the twin's write "
                                  f"after the TRIM within {RECYCLE_PATH_TOLERANCE:.0%} of it with a fill stage as "
                                  f"close (by rate, that write's error and the fill stage's RMS log error: {listed})"}
    v, doc, figs = tried[ok[0]]
    return doc, figs, {"value": v, "source": "fitted", "residual": round(errs[ok[0]], 4),
                       "why": f"{assumed.get('why', '')}, a lower bound (that write waits for the path and, where they "
                              f"bind, for the dies or the encoder as well): the slowest path at which the twin's write "
                              f"after the TRIM comes within {RECYCLE_PATH_TOLERANCE:.0%} of the drive's (by rate, that "
                              f"write's error and the fill stage's RMS log error: {listed})"}


def choose_dirty_buffer(drive_doc: Dict[str, Any], figs0: Dict[str, Dict[str, Any]], assumed: Dict[str, Any],
                        features: Mapping[str, Any], measured: Mapping[str, Mapping[str, Any]], runner: Runner,
                        seed: int, budget: float, gc_mode: str = "paced"
                        ) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """The twin's write buffer where the clean drive hid it (NAND as fast as
    the link: no burst fills it). ``figs0``: the whole probe simulated on
    ``drive_doc``. The buffer the flush after the torture gives
    (``dirty_buffer_bytes``) is tried against the assumed one on the whole
    probe (or against the bursts' one, where it is more than
    :data:`BURST_DOUBT` times it, and must then halve the error:
    :data:`BURST_EVIDENCE`); where it reproduces the fill stage better and the twin drains at
    the drive's pace (paced GC, its torture's steady state within
    :data:`PACE_TOLERANCE`, its per-second variability within
    :data:`PACED_CV_EVIDENCE`), it is scaled by the measured flush time over
    the twin's (the flush drains at the pace of the twin's own garbage
    collection), then moved by a secant step, and the buffer whose flush
    comes closest is kept. Returns the drive, its probe's figures and the
    buffer's provenance."""
    b0 = _fv(features, "dirty_buffer_bytes")
    t_meas = _flush_s(measured)

    def with_buffer(b: float) -> Dict[str, Any]:
        return {**drive_doc, "controller": {**drive_doc.get("controller", {}), "write_buffer_bytes": _buffer_bytes(b)}}

    # bursts see the buffer only as far as the link outruns the NAND: where the flush gives much more, it is tried
    # (against the bursts' own estimate, not the power of two it was taken as: 28.3 MB, snapped to 32 MiB, for the
    # 64 MiB of the Vertex 4 128GB fw1.5, whose flush gave 64.4 MB)
    burst = assumed.get("source") == "measured"
    b_burst = _fv(features, "write_buffer_bytes") or float(assumed.get("value") or 0)
    if (assumed.get("source") not in ("assumed", "measured") or not b0 or not t_meas
            or (burst and (gc_mode != "paced" or b0 <= BURST_DOUBT * b_burst))):
        return drive_doc, figs0, assumed
    if gc_mode != "paced":
        return _lazy_buffer(drive_doc, figs0, assumed, features, measured, runner, seed, budget, with_buffer)
    fill_jobs = _rate_jobs(features, measured, budget)
    docs = [drive_doc, with_buffer(b0)]
    figs = [figs0] + _simulate_docs(docs[1:], runner, seed, budget)
    errs = [_fill_error(measured, f, fill_jobs) for f in figs]
    (pace_meas, cv_meas), (pace_twin, cv_twin) = _torture_steady(measured), _torture_steady(figs[0])
    if not (pace_meas and pace_twin and cv_meas is not None and cv_twin is not None):
        return drive_doc, figs[0], {**assumed, "why": assumed["why"] + "; the torture logged too few seconds to judge "
                                    "the flush after it"}
    if abs(math.log(pace_twin / pace_meas)) > math.log(1 + PACE_TOLERANCE) or cv_meas > PACED_CV_EVIDENCE * cv_twin:
        return drive_doc, figs[0], {**assumed, "why": assumed["why"] + "; the flush after the torture does not show it "
                                    "either: the twin does not drain at the drive's pace (steady state "
                                    f"{pace_twin:,.0f} IOPS against {pace_meas:,.0f}; per-second coefficient of variation "
                                    f"{cv_twin:.3f} against {cv_meas:.3f}), so the flush waits for garbage collection "
                                    "the twin does not do (whole blocks cleaned when needed, a recycling path)"}
    if not errs[1] < (BURST_EVIDENCE if burst else 1.0) * errs[0]:
        return drive_doc, figs[0], {**assumed, "why": assumed["why"] + f"; the buffer the flush after the torture gives "
                                    f"({int(b0):,} B) reproduces the fill stage no better ({errs[1]:.3f} against "
                                    f"{errs[0]:.3f}, RMS log error" + ("; it must halve it to replace the bursts)"
                                                                       if burst else ")")}
    # (buffer, its twin's flush time, drive, figures): scaled once by the times, then a secant step through the two
    tried = [(float(b0), _flush_s(figs[1]), docs[1], figs[1])]
    for _ in range(2):
        (b_a, t_a, _d, _f) = tried[-1]
        if not t_a or abs(math.log(t_a / t_meas)) < FLUSH_TOLERANCE:
            break
        if len(tried) == 1:
            b_next = b_a * t_meas / t_a
        else:
            b_p, t_p = tried[-2][0], tried[-2][1]
            if not t_p or t_p == t_a:
                break
            b_next = b_a + (t_meas - t_a) * (b_a - b_p) / (t_a - t_p)
        if b_next <= 0:
            break
        doc_n = with_buffer(b_next)
        f_n = _simulate_docs([doc_n], runner, seed, budget)[0]
        tried.append((b_next, _flush_s(f_n), doc_n, f_n))
    b_best, _, best_doc, best_figs = min(tried, key=lambda x: abs(math.log(x[1] / t_meas)) if x[1] else math.inf)
    size, snapped = _buffer_pow2(b_best)
    if snapped and size != int(best_doc["controller"]["write_buffer_bytes"]):
        best_doc = with_buffer(size)
        best_figs = _simulate_docs([best_doc], runner, seed, budget)[0]
    value = int(best_doc["controller"]["write_buffer_bytes"])
    t_twin = _flush_s(best_figs) or 0.0
    return best_doc, best_figs, {"value": value, "source": "fitted",
                                 "why": (f"the clean drive's bursts gave {int(b_burst):,} B, a shallow step (the NAND "
                                         "nearly keeps up with the link)" if burst else "the clean drive's bursts did not show it")
                                        + f"; the flush right after the torture took "
                                        f"{t_meas:.3f} s, {t_twin:.3f} s on the twin with this buffer (the fill stage: RMS "
                                        f"log error {_fill_error(measured, best_figs, fill_jobs):.3f}, "
                                        f"{errs[0]:.3f} with the {'bursts' if burst else 'assumed'} "
                                        f"{int(assumed['value']):,} B)" + snapped,
                                 "residual": round(abs(math.log(t_twin / t_meas)), 4) if t_twin else None}


#: The write buffers tried on a twin that cleans whole blocks when it needs one (lazy GC, with or without a recycling
#: path), where the bursts did not see the buffer: powers of two from 1 to 128 MiB, the era's caches.
LAZY_BUFFER_GRID_BYTES = tuple(1 << k for k in range(20, 28))
#: ... of which the best is kept where its fill-stage error is below this share of the assumed buffer's. With lazy GC
#: the flush after the torture waits for the cleaning as well as for the buffer, and on a twin that cleans as the
#: drive does (its torture at the drive's pace and variability) both are in the twin's flush too: on the Crucial m4's
#: probe, its lazy twin's fill error was 0.097 with 4 MiB, 0.058 with 16, 0.029 with 32 (the truth) and 0.067 with
#: 64. Where the cleaning hides the buffer the errors lie within a few percent of each other (Vertex 3 240GB, a
#: recycling path: 0.134-0.139 for 1-8 MiB), and the assumed buffer stays.
LAZY_BUFFER_EVIDENCE = 0.7
#: ... and buffers whose errors lie within this share of the best are ties (Crucial m4: 0.024 with 16 MiB and with
#: 32, its truth): of those the largest the flush's estimate allows is kept.
LAZY_BUFFER_TIE = 0.05


def _lazy_buffer(drive_doc: Dict[str, Any], figs0: Dict[str, Dict[str, Any]], assumed: Dict[str, Any],
                 features: Mapping[str, Any], measured: Mapping[str, Mapping[str, Any]], runner: Runner, seed: int,
                 budget: float, with_buffer: Callable[[float], Dict[str, Any]]
                 ) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """The buffer of a twin with lazy garbage collection, where the bursts did
    not see it: each of :data:`LAZY_BUFFER_GRID_BYTES` on the whole probe at
    once, the best fill stage kept under :data:`LAZY_BUFFER_EVIDENCE`, and only
    where the twin's torture runs at the drive's pace and variability (then
    the twin's flush waits for the same cleaning the drive's does)."""
    lazy_why = ("; the flush after the torture does not show it either: with garbage collection that cleans whole "
                "blocks when one is needed, the flush waits for that cleaning, not for the buffer")
    (pace_meas, cv_meas), (pace_twin, cv_twin) = _torture_steady(measured), _torture_steady(figs0)
    if (assumed.get("source") != "assumed" or not (pace_meas and pace_twin and cv_meas and cv_twin)
            or abs(math.log(pace_twin / pace_meas)) > math.log(1 + PACE_TOLERANCE)
            or abs(math.log(cv_twin / cv_meas)) > math.log(PACED_CV_EVIDENCE)):
        return drive_doc, figs0, {**assumed, "why": assumed["why"] + lazy_why}
    jobs = _rate_jobs(features, measured, budget)
    b_assumed = int(drive_doc.get("controller", {}).get("write_buffer_bytes") or assumed["value"])
    sizes = [b for b in LAZY_BUFFER_GRID_BYTES if b != b_assumed]
    docs = [with_buffer(b) for b in sizes]
    tried = [(b_assumed, drive_doc, figs0)] + list(zip(sizes, docs, _simulate_docs(docs, runner, seed, budget)))
    errs = [_fill_error(measured, f, jobs) for _, _, f in tried]
    i = min(range(len(tried)), key=lambda k: errs[k])
    # buffers the fill stage cannot tell apart: the largest the flush after the torture allows (it drains the buffer
    # and waits for the cleaning, so its estimate is the most the buffer can be)
    b_flush = _fv(features, "dirty_buffer_bytes")
    ties = [k for k in range(len(tried)) if errs[k] <= (1 + LAZY_BUFFER_TIE) * errs[i]]
    allowed = [k for k in ties if not b_flush or tried[k][0] <= b_flush]
    tie_why = ""
    if len(ties) > 1 and allowed:
        i = max(allowed, key=lambda k: tried[k][0])
        tie_why = (f"; of those within {LAZY_BUFFER_TIE:.0%} of the best error, the largest"
                   + (f" below the flush's estimate ({int(b_flush):,} B)" if b_flush else ""))
    listed = ", ".join(f"{b / 2**20:g} MiB: {e:.4f}" for (b, _, _), e in sorted(zip(tried, errs), key=lambda x: x[0][0]))
    if i == 0 or not errs[i] < LAZY_BUFFER_EVIDENCE * errs[0]:
        return drive_doc, figs0, {**assumed, "why": assumed["why"] + lazy_why + f" (the fill stage's RMS log error by "
                                  f"buffer, the twin cleaning as the drive does: {listed}; a buffer must bring it below "
                                  f"{LAZY_BUFFER_EVIDENCE} of the assumed's)"}
    _, doc, figs = tried[i]
    return doc, figs, {"value": int(doc["controller"]["write_buffer_bytes"]), "source": "fitted",
                       "residual": round(errs[i], 4),
                       "why": "the clean drive's bursts did not show it; the flush after the torture waits for the "
                              "buffer and for the whole blocks garbage collection cleans, on the twin as on the drive "
                              "(its torture at the drive's pace and variability): the buffer whose fill stage comes "
                              f"closest (RMS log error by buffer: {listed}){tie_why}"}


#: The blocks per die idle-time garbage collection cleans beyond those the foreground keeps free, tried where the
#: probe saw the drive recover while idle: the range of the era's controllers (docs/presets.md, idle / foreground
#: thresholds: SandForce 4/2, Intel and Marvell 8/4, Samsung and Everest 16/8, Neutron 48/24, Barefoot 3 32/8 and
#: 48/16, DC S3700 64/32, Everest fw1.5 64/8). Only the difference cleans anything while idle: a twin whose
#: foreground keeps 4 free (the base profile's) with the drive's absolute 4 cleans nothing (Vertex 3 240GB probe:
#: fill-stage error 0.362 at 4, 0.074 at 4 + 2, the drive's 2 beyond its own 2). The probe's 5 s of random writes
#: after a minute idle run fast for as long as the cleaned blocks last, then at the steady state; the dirty
#: sequential write after them meets the rest.
IDLE_GC_EXTRA_BLOCKS = (2, 4, 8, 16, 32, 56)


def _spare_blocks_per_die(drive_doc: Mapping[str, Any]) -> int:
    """The blocks (over a die's planes) a die has beyond what the user capacity fills, as :func:`build_doc` counts them."""
    c = Drive.load(dict(drive_doc)).config
    n = c["nand"]
    dies = int(n["channels"]) * int(n["packages_per_channel"]) * int(n["dies_per_package"]) - (1 if n.get("raise") else 0)
    block = int(n["planes_per_die"]) * int(n["pages_per_block"]) * int(n["page_size_bytes"])
    return int(n["blocks_per_plane"]) - math.ceil(int(c["drive"]["user_capacity_bytes"]) / (dies * block))


def choose_idle_gc(drive_doc: Dict[str, Any], figs0: Dict[str, Dict[str, Any]], assumed: Dict[str, Any],
                   features: Mapping[str, Any], measured: Mapping[str, Mapping[str, Any]], runner: Runner,
                   seed: int, budget: float) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """How many free blocks per die idle-time garbage collection restores,
    where the probe saw the drive recover while idle (``ftl.bg_gc_threshold_blocks``
    above 0): the foreground's threshold plus each of :data:`IDLE_GC_EXTRA_BLOCKS`
    (at most the blocks a die has spare) simulated on the whole probe at once on the runner, and the one
    whose fill stage comes closest kept (the random writes after idle time and
    the dirty sequential write after them are what it moves). Where the probe
    could not tell (no value in ``drive_doc``), the base profile's is sized
    the same way. ``figs0``: the
    whole probe simulated on ``drive_doc``; ``assumed``: the value's
    provenance so far. Returns the drive, its probe's figures and the value's
    provenance."""
    own = drive_doc.get("ftl", {}).get("bg_gc_threshold_blocks")
    # a threshold the probe did not measure (the writes after idle time met a firmware ceiling) is the base
    # profile's, sized here like a measured one
    bg0 = int((own if own is not None else _base_profile_ftl().get("bg_gc_threshold_blocks")) or 0)
    if bg0 <= 0:
        return drive_doc, figs0, assumed
    if not assumed:
        assumed = {"value": bg0, "source": "assumed", "why": f"{BASE_PROFILE}'s idle-time GC"}
    cap = max(0, _spare_blocks_per_die(drive_doc))
    fg = int(drive_doc.get("ftl", {}).get("gc_threshold_blocks") or _base_profile_ftl().get("gc_threshold_blocks") or 0)
    values = sorted({min(fg + d, cap) for d in IDLE_GC_EXTRA_BLOCKS} - {bg0, 0})
    if not values:
        return drive_doc, figs0, assumed
    docs = [{**drive_doc, "ftl": {**drive_doc.get("ftl", {}), "bg_gc_threshold_blocks": v}} for v in values]
    jobs = _rate_jobs(features, measured, budget)
    tried = [(bg0, drive_doc, figs0)] + list(zip(values, docs, _simulate_docs(docs, runner, seed, budget)))
    errs = [_fill_error(measured, f, jobs) for _, _, f in tried]
    i = min(range(len(tried)), key=lambda k: (errs[k], abs(tried[k][0] - bg0)))
    if not math.isfinite(errs[i]):
        return drive_doc, figs0, assumed
    v, doc, figs = tried[i]
    listed = ", ".join(f"{b}: {e:.3f}" for (b, _, _), e in sorted(zip(tried, errs), key=lambda x: x[0][0]))
    return doc, figs, {"value": v, "source": "fitted", "residual": round(errs[i], 4),
                       "why": f"{assumed.get('why', '')}; the blocks per die it restores fitted to the fill stage, "
                              f"{v - fg} beyond the {fg} the foreground keeps free (RMS log error by blocks: {listed}; "
                              f"at most the {cap} a die has spare)"}


def fit_twin(probe_dir: Path, out: Path, *, trials: int = 60, sampler: str = "cmaes", seed: int = 1, runner: Optional[Runner] = None,
             storage: Optional[str] = None, resume: bool = False, stream: Optional[TextIO] = sys.stderr,
             command: str = "", twin_id: Optional[str] = None, power_log: Optional[Path] = None,
             polish_evaluations: int = POLISH_EVALUATIONS) -> Dict[str, Any]:
    """Fit a twin to the probe in ``probe_dir``; write the drive file ``out``
    and ``out``'s ``.json`` provenance; return that provenance document.
    ``power_log``: a power meter's log of a real target's probe
    (:func:`ssdlab.twin.probe.read_power_log`), from which the twin's power
    model is fitted. ``polish_evaluations``: the pattern search's budget
    after the sampler (:func:`ssdlab.fit.polish.polish`; 0: none)."""
    from ..fit.study import fit as run_fit
    from ..results import ssdlab_version

    doc = load_probe(probe_dir)
    if power_log is not None:
        doc = apply_power_log(doc, power_log)
    # the features from the probe's figures by this ssdlab's extractor: a probe taken by an older one gains
    # what the extractor learned since (the features it saved are the record of what it saw then)
    doc = {**doc, "features": {**doc.get("features", {}), **extract(figures_of(doc), capacity_of(doc)[0])}}
    source_id = str(doc["target"].get("drive_id") or doc["target"].get("drive") or "drive")
    tid = twin_id or f"twin-{Path(source_id).stem}"
    target = twin_target(doc, tid)
    own = runner is None
    run = runner if runner is not None else Runner()
    try:
        # the best of the page size x dies starts becomes the fit's start (and its committed values)
        dies_choices = raw_nand_dies(doc)
        start, scanned = scan_starts(target, doc["features"], run, seed, dies_choices)
        target = _target_for(target, start)
        target.params = [replace(p, value=start[p.key]) for p in target.params]
        if dies_choices:
            # the scan chose among the counts the raw NAND allows: the sampler's steps of one package would leave them
            target.params = [replace(p, low=p.value, high=p.value) if p.key == "nand.packages_per_channel" else p
                             for p in target.params]
        if stream is not None:
            stream.write(f"ssdlab fit: {len(scanned)} starts over page size and dies, objective "
                         f"{scanned[0][1]:.3f} at the features' own -> {min(o for _, o in scanned):.3f}\n")
        result = run_fit(target, start=target.committed(), trials=trials, sampler=sampler, seed=seed, runner=run,
                         storage=storage, resume=resume, stream=stream, evaluate=evaluate_twin)
        # CMA-ES moves the structure with the times; the polish then moves the times alone
        polished = polish(target, result.best, evaluate_twin, run, seed, budget=polish_evaluations, stream=stream)
        best = polished.best
        # the structures the scan compared at its starts' times, compared again at the fitted ones (again from the
        # structure kept: Intel SSD 320, 40 dies on 10 channels for 72 on 8, then parity on one of them)
        structures: List[Dict[str, Any]] = []
        for _ in range(STRUCTURE_ROUNDS):
            target, best, rec = recheck_structure(target, best, run, seed, dies_choices, polish_evaluations, stream)
            if rec is None:
                break
            structures.append(rec)
            if not rec.get("kept"):
                break
        features = doc["features"]
        drive_doc, prov = build_doc(features, best.values, tid)
        for k in best.values:
            key = "nand.page_size_bytes" if k == "nand.page_size_log2" else k
            prov[key]["residual"] = round(best.objective, 4)
            prov[key]["why"] = next((p.why for p in target.params if p.key == k), prov[key]["why"])
        kept = [r for r in structures if r.get("kept")]
        if kept:
            why = "after the fit, at the fitted times, " + "; then ".join(
                f"{r['kept']} explained the probe better than {r['fitted']} (objective {r['objective']:.3f}; "
                + ", ".join(f"{n} {o:.3f}" for n, o in r["others"].items())
                + ("; after a short polish " + ", ".join(f"{n} {o:.3f}" for n, o in r["contest"].items())
                   if r.get("contest") else "")
                + f"; {r['polished']:.3f} polished)" for r in kept)
            for k in sorted({c for r in kept for c in r["changed"]}):
                key = "nand.page_size_bytes" if k == "nand.page_size_log2" else k
                prov[key]["why"] = why + (": " + prov[key]["why"] if prov[key]["why"] else "")
        # the whole probe on the twin: when its garbage collection works (the fill stage), how much idle time
        # cleans, then the buffer the clean drive hid (the flush after the torture)
        cap, budget = capacity_of(doc)
        measured = figures_of(doc)
        drive_doc, twin_figs, gc_prov = choose_gc_mode(drive_doc, features, measured, run, seed, budget)
        prov["ftl.gc_mode"] = gc_prov
        rec = drive_doc.get("ftl", {}).get("recycle_bytes_per_s")
        if rec and "ftl.recycle_bytes_per_s" not in prov:
            prov["ftl.recycle_bytes_per_s"] = {
                "value": rec, "source": "measured",
                "why": f"the sequential write right after the full TRIM ({rec / 1e6:.0f} MB/s): the rate of writes into "
                       "recycled blocks (the garbage collection above)"}
        if stream is not None:
            stream.write(f"ssdlab fit: {gc_prov['value']} garbage collection ({gc_prov['why']})\n")
        if rec:
            drive_doc, twin_figs, path_prov = choose_recycle_path(drive_doc, twin_figs, prov["ftl.recycle_bytes_per_s"],
                                                                  features, measured, run, seed, budget)
            prov["ftl.recycle_bytes_per_s"] = path_prov
            if stream is not None and path_prov.get("source") == "fitted":
                stream.write(f"ssdlab fit: recycling path {path_prov['value'] / 1e6:.0f} MB/s (the write after the full "
                             "TRIM's rate is its lower bound)\n")
        # idle-time GC before the buffer: the writes after idle time and the dirty write it moves are in the fill
        # stage the buffer is judged on (Crucial m4: 32 MiB brings it to 0.83 of the assumed's error before, 0.30 after)
        drive_doc, twin_figs, idle_prov = choose_idle_gc(drive_doc, twin_figs, prov.get("ftl.bg_gc_threshold_blocks", {}),
                                                         features, measured, run, seed, budget)
        if idle_prov:
            prov["ftl.bg_gc_threshold_blocks"] = idle_prov
        if stream is not None and idle_prov.get("source") == "fitted":
            stream.write(f"ssdlab fit: idle-time GC restores {idle_prov['value']} blocks per die\n")
        drive_doc, twin_figs, buffer_prov = choose_dirty_buffer(drive_doc, twin_figs, prov["controller.write_buffer_bytes"],
                                                                features, measured, run, seed, budget,
                                                                gc_mode=str(gc_prov["value"]))
        prov["controller.write_buffer_bytes"] = buffer_prov
        if stream is not None and buffer_prov["source"] != "assumed":
            stream.write(f"ssdlab fit: write buffer {buffer_prov['value']:,} B from the flush after the torture\n")
    finally:
        if own:
            run.close()
    jobs = []
    for name, f in measured.items():
        t = twin_figs.get(name)
        if not f.get("mbps") or t is None:
            continue
        jobs.append({"job": name, "measured_mbps": f["mbps"], "twin_mbps": t["mbps"], "error": t["mbps"] / f["mbps"] - 1})
    twin_features = extract(twin_figs, cap)
    power_fit: Optional[Dict[str, Any]] = None
    idle_w = (doc.get("power") or {}).get("idle_w")
    if idle_w is not None:
        # the probe read the drive's power (the simulator's model, or a meter's log): the twin's power model from it
        base_power = Drive.load(drive_doc).config["power"]
        pvals, pprov, power_fit = fit_power(measured, float(idle_w), twin_figs, base_power)
        drive_doc["power"] = pvals
        prov.update(pprov)
    else:
        prov["power"] = {"value": "profile", "source": "assumed",
                         "why": f"the probe read no power (a meter log: ssdlab fit --power-log): {BASE_PROFILE}'s"}
    header = [f"Digital twin of {source_id}, fitted by ssdlab {ssdlab_version()} to the probe in {probe_dir}",
              f"({command or 'ssdlab.twin.fit_twin'}): {result.trials} trials ({sampler}, seed {seed}) and "
              f"{polished.evaluations} of pattern search; objective "
              f"(RMS of probe-job rate error / 10%) {result.committed.objective:.3f} at the start, {best.objective:.3f} fitted.",
              f"Based on controller profile {BASE_PROFILE} and NAND part {BASE_PART}; every value set here says",
              "whether it was measured by the probe, fitted to it, or assumed. Provenance: the .json beside this file."]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, _toml_text(drive_doc, prov, header))
    Drive.load(str(out))  # the file loads
    record = {"schema": "ssdlab.twin", "schema_version": 1, "twin_id": tid, "source": source_id,
              "manifest": {"seed": seed, "version": ssdlab_version(), "command": command, "probe": str(probe_dir),
                           "power_log": None if power_log is None else str(power_log),
                           "drive_hash": Drive.load(str(out)).hash},
              "fit": {"trials": result.trials, "sampler": sampler, "objective_start": result.committed.objective,
                      "objective_sampler": result.best.objective, "polish": polished.summary(),
                      "structure_recheck": structures, "objective": best.objective, "worst": best.worst,
                      "interrupted": result.interrupted or polished.interrupted,
                      "rows": best.row_dicts()},
              "values": prov, "probe_jobs": jobs, "twin_features": twin_features, "power_fit": power_fit}
    write_text(out.with_suffix(".json"), json.dumps(record, indent=1) + "\n")
    return record
