"""Where the fit starts: the twin's free parameters, each started where the
probe's features point, the die counts the raw NAND allows, and the grid of
starts over page size and dies the scan simulates first."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...fit.params import FreeParameter, library_values
from ..features.common import Features
from ..records import ProbeDoc
from .base import (
    ASSUMED_SPARE_FRACTION,
    CHANNELS,
    MAX_PACKAGES_PER_CHANNEL,
    QLC_PART,
    SATA_BASE,
    Base,
    _clamp,
    _fv,
    _tprog_measured,
    base_of,
)

#: The datasheet ranges of the era's MLC parts (docs/model.md), widened: tR and tPROG move within them, a
#: prior that keeps the die count and the program time apart (the sequential write rate fixes only their ratio).
TR_RANGE_NS = SATA_BASE.tr_range_ns
TPROG_RANGE_NS = SATA_BASE.program_range_ns
#: The longest firmware time per command the fit tries: a controller with one command slot at a 4KB random
#: write ceiling of 5-10K IOPS spends 100-200 us per write.
COMMAND_COST_MAX_NS = 250_000
#: Where the per-request die cap starts when the probe shows one.
DIE_CAP_START = 8
#: The user-data area of one NAND die: the era's MLC dies hold 32, 64 or 128 Gbit (docs/model.md), so a drive's
#: raw NAND holds one of three die counts where the write rates leave a continuum open.
DIE_BYTES = SATA_BASE.die_bytes
#: Channel rates of the era's NAND interfaces (ONFI 1 async 40-50 MB/s to toggle/ONFI 2.x 400 MB/s).
CHANNEL_RANGE_BYTES_PER_S = SATA_BASE.channel_range_bytes_per_s
#: A clean-stage die read this many times the measured SLC read read native pages (a modern part's native read is
#: about twice its SLC one: the SN570's part 56 against 30 us).
NATIVE_READ_SHARE = 1.3
#: The read decodes a twin may get (an ECC engine slower than the channel, down to half an async one)...
DECODE_RANGE_BYTES_PER_S = (25_000_000, 1_000_000_000)
#: ... when the second 8KB of a unit takes this much longer than its transfers (8KB at 200 MB/s).
DECODE_MIN_EXCESS_NS = 40_000

#: The write path's top: beyond the fastest SATA-era write (2 GB/s), and beyond a PCIe 4.0 x4 link on a modern one.
SATA_WRITE_PATH_MAX = 2_000_000_000
MODERN_WRITE_PATH_MAX = 8_000_000_000


def raw_nand_dies(probe_doc: ProbeDoc) -> List[int]:
    """The die counts (multiples of the twin's channels) the probed drive's
    raw NAND allows, one per density of :data:`DIE_BYTES`: the raw NAND is
    the capacity and the bytes the torture wrote past it before garbage
    collection bit (``gc_onset_bytes``). Empty where the onset was not
    measured, on a file target (the drive's raw NAND is not the file's),
    and where the densities give fewer than three counts (a target too
    small to tell them apart)."""
    features = probe_doc["features"]
    onset, cap = _fv(features, "gc_onset_bytes"), _fv(features, "capacity_bytes")
    b = base_of(features)
    if b.modern and cap and not onset:
        # a modern drive's torture rarely reaches its GC onset (a large spare area behind a fast cache): its raw
        # NAND is the capacity and the spare area a drive of the class keeps
        onset = ASSUMED_SPARE_FRACTION * float(cap)
    if probe_doc.get("target", {}).get("kind") == "file" or not onset or not cap:
        return []
    raw = float(cap) + float(onset)
    dies = sorted({CHANNELS * max(1, round(raw / d / CHANNELS)) for d in b.die_bytes})
    return dies if len(dies) == len(b.die_bytes) and dies[-1] <= CHANNELS * MAX_PACKAGES_PER_CHANNEL else []


def free_parameters(features: Features, dies_choices: Sequence[int] = ()) -> List[FreeParameter]:
    """The twin's free parameters, each starting where the features point
    (the dies within ``dies_choices``, the counts the raw NAND allows, when
    given: :func:`raw_nand_dies`)."""
    b = base_of(features)
    dies = _fv(features, "dies") or 16
    flush_ns = _tprog_measured(features)
    cmd_read, r_iops, w_iops, ch_start, die_read_ns, link_r, step_us = _read_path(features, flush_ns, b)
    # a stripe chunk and a per-request die cap are the SATA era's (SandForce, Everest 2): a modern drive reads data
    # written at random slower because it lies where the writes put it, which the engine's layout gives itself
    stripe, die_cap = (None, False) if b.modern else _layout(features, dies, die_read_ns)
    decode = _decode(step_us, link_r, ch_start)
    # tR: the die's read less its share of the 4KB on the channel (a chunk when striped) and its decode. (A QD1
    # read also waits now and then behind a program the writes before it left on its die, about 10% more on
    # the generic twin; the measured drive's reads wait the same way, so the start leaves that in tR.)
    xfer_ns = min(4096.0, stripe or 4096.0) / ch_start * 1e9 + (4096 / decode * 1e9 if decode else 0.0)
    tr = die_read_ns - xfer_ns if die_read_ns and die_read_ns > xfer_ns else 50_000
    if b.modern:
        tr = _modern_tr_start(tr if die_read_ns and die_read_ns > xfer_ns else None, b, features)
    slots = int(_clamp(round(cmd_read * r_iops / 1e9), 1, 4))
    write_max = MODERN_WRITE_PATH_MAX if b.modern else SATA_WRITE_PATH_MAX
    ppc, ppc_range, ppc_why = _packages(dies, flush_ns, dies_choices)
    if b.modern:
        ppc_why = ppc_why.replace(f"dies = {CHANNELS} channels x this",
                                  f"dies = the channels ({' or '.join(str(c) for c in b.channel_choices)}, the scan's "
                                  "choice) x this")
    logs = b.page_log2s
    page_why = ("page size 2^this bytes (4, 8 or 16 KiB)" if len(logs) > 1 else
                f"page size 2^this bytes: the {b.part} part's {1 << logs[0] >> 10} KiB (every 3D "
                f"{'QLC' if b.part == QLC_PART else 'TLC'} die's)")
    params = [
        FreeParameter("nand.packages_per_channel", ppc_range[0], ppc_range[1], int(_clamp(ppc, *ppc_range)), True, 1, ppc_why),
        FreeParameter("nand.page_size_log2", logs[0], logs[-1], logs[len(logs) // 2], False, 1, page_why),
        FreeParameter("nand.tr_ns", b.tr_range_ns[0], b.tr_range_ns[1], int(_clamp(tr, *b.tr_range_ns)), True, 1000,
                      "page read time: QD1 read latency beyond the controller's (within the "
                      + ("3D TLC/QLC dies' range)" if b.modern else "MLC datasheets' range)")),
        FreeParameter("controller.command_cost_read_ns", 1_000, COMMAND_COST_MAX_NS,
                      int(cmd_read), True, 500, "firmware time per read: the QD32 read ceiling"),
        FreeParameter("controller.command_cost_write_ns", 1_000, COMMAND_COST_MAX_NS,
                      int(_clamp(slots * 1e9 / w_iops, 1_000, COMMAND_COST_MAX_NS)), True, 500,
                      "firmware time per write: the QD32 write ceiling"),
        FreeParameter("controller.command_slots", 1, 4, slots, False, 1, "commands processed at once: QD1 against QD32"),
        FreeParameter("controller.command_latency_ns", 1_000, 100_000, b.command_latency_ns, True, 500,
                      "time per command outside the slots: QD1 latency"),
        # the write path starts at the fastest write measured: where a controller caps writes that is its rate,
        # and where the dies or the link do, a path no slower than them moves nothing
        FreeParameter("controller.max_write_bytes_per_s", 100_000_000, write_max,
                      int(_clamp(_fv(features, "fastest_write_bytes_per_s") or 1e9, 100_000_000, write_max)), True,
                      1_000_000, "the controller's write data path: a sequential write below the dies' rate"),
    ]
    params += _optional(features, None if b.modern else flush_ns, ch_start, stripe, decode, die_cap, b,
                        _slc_program_start(features, dies, dies_choices, b, ch_start))
    # each start on the parameter's grid: the fit's first trial is then the start itself, so the fitted
    # objective is never worse than the start's
    return [replace(p, value=p.snap(p.value)) for p in params]


def _modern_tr_start(die_read_ns: Optional[float], b: Base, features: Features) -> float:
    """Where a modern twin's mean page read starts. Where the clean stage's QD1 reads found native pages
    (:func:`clean_reads_native`: the map spans measured the SLC read apart, :func:`ssdlab.twin.fit.drive_file.
    _read_times`), its die read is the mean native read. Otherwise they are taken to read what its writes left in
    the cache, in SLC mode, and the fitted mean scales the part's SLC read, so the start gives the part's SLC read
    the die read measured (the part's own mean where none was)."""
    part = library_values("part", b.part)["nand"]
    if die_read_ns is None:
        return float(part["tr_ns"])
    if clean_reads_native(features):
        return die_read_ns
    return die_read_ns * float(part["tr_ns"]) / float(part["slc_tr_ns"])


def clean_reads_native(features: Features) -> Optional[bool]:
    """Whether the clean stage's 4KB reads at QD1 found native pages (a static cache full by then: wd-sn570-1000),
    so that the page read fitted to them is the native one: their latency past a trimmed LBA's (the command, the
    map and the link, which every read pays) well above that of the cache stage's SLC data over the map spans.
    None where the map spans did not measure both."""
    r1 = _fv(features, "read_latency_4k_us")
    slc_us, trimmed_us = _fv(features, "slc_data_read_qd1_us"), _fv(features, "trimmed_read_qd1_us")
    if not r1 or not slc_us or not trimmed_us:
        return None
    return float(r1) - float(trimmed_us) > NATIVE_READ_SHARE * (float(slc_us) - float(trimmed_us))


def _read_path(features: Features, flush_ns: Optional[float], b: Base
               ) -> Tuple[float, Any, Any, int, Optional[float], Any, Any]:
    """The read path's start: the firmware time per read, the command rates, the channel rate and the die's read
    time (with the link's rate and the second page's QD1 step, which the decode needs)."""
    r1 = _fv(features, "read_latency_4k_us")
    u1 = _fv(features, "unwritten_read_latency_us")
    from_map = _fv(features, "unwritten_reads_from_map")
    r_iops = _fv(features, "read_command_iops") or _fv(features, "read_iops_4k_qd32") or 40_000
    w_iops = _fv(features, "write_command_iops") or _fv(features, "write_iops_4k_qd32") or 40_000
    # an unwritten LBA answered from the map costs the command's time and no die read:
    # about command latency + read cost + 10 us of link and FIS exchange
    # (NVMe: the command's TLPs and a 4KB transfer take a microsecond or two, not SATA's 10)
    path_us = (b.command_overhead_ns + 4096 / float(_fv(features, "link_bytes_per_s") or 3.6e9) * 1e9) / 1e3 \
        if b.modern else 10.0
    w1 = _fv(features, "write_latency_4k_us")
    if u1 and from_map:
        cmd_read = (u1 - path_us) * 1e3 - b.command_latency_ns
    elif b.modern and w1:
        # a modern drive acknowledges a QD1 write from its buffer: the command latency, the firmware's time and the
        # 4KB on the link; what the profile's latency leaves is the firmware time, and the command ceiling over it
        # gives the slots (a start of 2e9 / ceiling fixes them at 2, which the fit then cannot leave)
        cmd_read = w1 * 1e3 - b.command_latency_ns - path_us * 1e3
    else:
        cmd_read = 2e9 / r_iops
    cmd_read = _clamp(cmd_read, 1_000, COMMAND_COST_MAX_NS)
    # the channel rate (fitted when the flushes measured the program time): sequential reads at depth well
    # below the link are bound by the NAND, so start where the channels carry that rate
    seq_r, link_r = _fv(features, "seq_read_bytes_per_s"), _fv(features, "link_bytes_per_s")
    ch_start = b.channel_bytes_per_s
    ch_range = b.channel_range_bytes_per_s
    nand_r = _fv(features, "nand_read_bytes_per_s")
    step_us = _fv(features, "second_page_read_us")
    if flush_ns is not None and seq_r and link_r and seq_r < 0.9 * link_r and not (
            step_us and (8192 / _clamp(seq_r / CHANNELS, *ch_range) + 8192 / link_r) * 1e6
            > 1.1 * step_us):
        # (unless channels that slow would make a unit's second 8KB at QD1 cost more than it does: then the dies
        # bind the sequential reads, through a decode or tR, and the channels are faster)
        ch_start = int(_clamp(seq_r / CHANNELS, *ch_range))
    elif flush_ns is not None and nand_r and nand_r < CHANNELS * b.channel_bytes_per_s:
        # link-bound at depth, but a QD1 request's NAND share is visible (SATA 3Gbps drives on 40-50 MB/s
        # asynchronous channels): the channels carry about that rate (a floor: the dies' page reads are in it)
        ch_start = int(_clamp(nand_r / CHANNELS, *ch_range))
    # the die's read (tR, then the data on the channel): a mapped read beyond an unwritten one answered from
    # the map, else beyond the command's path at the start's command times (latency, FIS exchange, firmware
    # time, 4KB on the link)
    if b.modern:
        # the modern part's interface binds its channels (Toggle/ONFI at 0.7-1.6 GB/s): the generic rate to start
        ch_start = b.channel_bytes_per_s
    if r1 and u1 and from_map:
        die_read_ns: Optional[float] = (r1 - u1) * 1e3
    elif r1:
        die_read_ns = r1 * 1e3 - (b.command_latency_ns + b.command_overhead_ns + cmd_read
                                  + 4096 / (link_r or 550e6) * 1e9)
    else:
        die_read_ns = None
    return cmd_read, r_iops, w_iops, ch_start, die_read_ns, link_r, step_us


def _layout(features: Features, dies: Any, die_read_ns: Optional[float]) -> Tuple[Optional[float], bool]:
    """A stripe chunk across dies, or a per-request die cap, where reads of data written at random are slow."""
    # sequential reads of data written at random below 85% of those of data written in order: either the data
    # is striped over the dies in chunks (a 4KB read holds several dies) or the firmware reads a request from a
    # few dies at a time (a request of units scattered over many dies then takes several rounds)
    layout = _fv(features, "random_layout_seqread_ratio")
    stripe: Optional[float] = None
    die_cap = False
    if layout is not None and layout < 0.85:
        # a 4KB read striped over k dies holds all of them for a die read, so the dies give dies / k such reads
        # at once: k from the QD32 rate, the chunk from k. Striping shows as k of 3 or more (chunks of 1KB or
        # less); below it a 4KB read holds about one die and the QD32 rate is bound by the dies or the controller,
        # so the cap is what is offered
        iops32 = _fv(features, "read_iops_4k_qd32")
        k = dies * 1e9 / (iops32 * (die_read_ns or 91_000)) if iops32 else 0.0
        # a drive that reads ahead serves 512 B sequential reads without a die: their QD32 rate is the
        # controller's ceiling, and a 4KB random read rate at it says nothing of how many dies a read holds
        cmd = _fv(features, "read_command_iops")
        at_ceiling = bool(_fv(features, "readahead")) and bool(iops32 and cmd and iops32 >= 0.9 * cmd)
        if k >= 3.0 and not at_ceiling:
            stripe = _clamp(4096 / k, 512, 16384)
        else:
            die_cap = True
    return stripe, die_cap


def _decode(step_us: Any, link_r: Any, ch_start: int) -> Optional[float]:
    # a read decode that holds the die per byte: the second 8KB of a unit costs more than its transfers on the
    # channel and the link; offered only beyond 40 us (8KB at 200 MB/s), starting at 8KB / the excess
    decode: Optional[float] = None
    if step_us and link_r:
        excess_ns = step_us * 1e3 - 8192 / link_r * 1e9 - 8192 / ch_start * 1e9
        if excess_ns > DECODE_MIN_EXCESS_NS:
            decode = _clamp(8192 / excess_ns * 1e9, *DECODE_RANGE_BYTES_PER_S)
    return decode


def _packages(dies: Any, flush_ns: Optional[float], dies_choices: Sequence[int]) -> Tuple[int, Tuple[int, int], str]:
    """Packages per channel: the start, its range and why."""
    ppc = int(_clamp(round(dies / CHANNELS), 1, 16))
    if flush_ns is not None:
        # the die count from the sequential rate and the measured time per unit, within the factor the
        # page size leaves open (4KB pages: twice the dies, 16KB: half), and more when the write is bound
        # elsewhere (the link, the controller)
        high = min(MAX_PACKAGES_PER_CHANNEL, max(2, math.ceil(dies * 2.5 / CHANNELS)))
        ppc_range = (min(high, max(1, math.floor(dies / 2 / CHANNELS))), high)
        ppc_why = (f"dies = {CHANNELS} channels x this, from the sequential write rate x the measured flush time per unit "
                   "(a narrow range: the page size halves or doubles it)")
        if dies / 2 > CHANNELS * MAX_PACKAGES_PER_CHANNEL:
            # a host-cached file or a drive beyond the twin's largest: the fit's reliability check says what it misses
            ppc_why += (f"; the rates point to about {round(dies)} dies, more than the twin's "
                        f"{CHANNELS * MAX_PACKAGES_PER_CHANNEL}: held at its most")
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
    return ppc, ppc_range, ppc_why


def _slc_program_start(features: Features, dies: Any, dies_choices: Sequence[int], b: Base,
                       ch_start: float = 0.0) -> int:
    """Where a modern twin's SLC-mode program time starts. Where the clean sequential write lands in the cache, the
    dies' SLC units (a page on each plane) carry its rate: dies x unit / rate where the dies bind the write. Where
    the link binds it (within :data:`LINK_BOUND_SHARE`), that is only an upper bound, and where the bursts before
    it filled a small cache it is the native blocks' rate. The flush gives a tighter bound, the lower of the two:
    a flush pads and programs one whole one-shot unit, in SLC mode as many SLC programs as the cell has bits,
    after the unit's transfer, so (flush time - transfer) / bits, exact where the flushed writes land in the
    cache (the probe runs them while it is still empty). samsung970evoplus-1000: the rate (3,586 MB/s, the
    link's) gives at most 292 us, its flush (369 us) 91 us, for its part's 100."""
    if not b.modern:
        return 0
    rate = _fv(features, "seq_write_bytes_per_s")
    n = min(dies_choices, key=lambda d: abs(math.log(d / dies))) if dies_choices else dies
    if not rate:
        return int(library_values("part", b.part)["nand"]["slc_tprog_ns"])
    unit = b.planes << b.page_log2s[0]
    start = n * unit / float(rate) * 1e9
    flush = _tprog_measured(features)
    link = _fv(features, "link_bytes_per_s")
    if flush and ch_start:
        bits = int(library_values("part", b.part)["nand"]["bits_per_cell"])
        by_flush = (flush - bits * unit / ch_start * 1e9 + (4096 / float(link) * 1e9 if link else 0.0)) / bits
        if by_flush > 0:
            start = min(start, by_flush)
    return int(_clamp(start, *b.program_range_ns))


def _optional(features: Features, flush_ns: Optional[float], ch_start: int, stripe: Optional[float],
              decode: Optional[float], die_cap: bool, b: Base, slc_start: int = 0) -> List[FreeParameter]:
    """The parameters a twin gets only where the features call for them."""
    params: List[FreeParameter] = []
    if flush_ns is not None:
        # tPROG is then the measured flush time less the unit's transfer at this rate (build_doc)
        params.append(FreeParameter("nand.channel_bytes_per_s", b.channel_range_bytes_per_s[0],
                                    b.channel_range_bytes_per_s[1], int(_clamp(ch_start, *b.channel_range_bytes_per_s)),
                                    True, 1_000_000,
                                    "NAND channel rate: page transfers on reads and programs; tPROG is the measured flush "
                                    "time less the program unit's transfer at this rate"))
    elif b.modern:
        # (the flush is not one SLC program but a whole one-shot unit's, bits x the SLC program after the unit's
        # transfer: Crucial P1 1.6 ms where its SLC mode programs in 0.3; it bounds the start, not the fit)
        params.append(FreeParameter("nand.channel_bytes_per_s", b.channel_range_bytes_per_s[0],
                                    b.channel_range_bytes_per_s[1], int(_clamp(ch_start, *b.channel_range_bytes_per_s)),
                                    True, 1_000_000, "NAND channel rate: page transfers on reads and programs"))
        params.append(FreeParameter(b.program_key, b.program_range_ns[0], b.program_range_ns[1], slc_start, True, 1_000,
                                    "SLC-mode program time: the flushed writes land in the cache (the probe runs them "
                                    "while it is empty), and so may the clean sustained write: its rate with the dies"))
    else:
        params.append(FreeParameter("nand.tprog_ns", TPROG_RANGE_NS[0], TPROG_RANGE_NS[1], 1_300_000, True, 10_000,
                                    "page program time: the sustained write rate with the dies and page size (within the "
                                    "MLC datasheets' range)"))
    if stripe is not None:
        params.append(FreeParameter("controller.die_stripe_bytes", 512, 16384, int(stripe), True, 512,
                                    "stripe chunk across dies: sequential reads of data written at random are slower"))
    if _fv(features, "data_reduction") and _fv(features, "seq_write_bytes_per_s"):
        # a reducing controller's ECC encoder works on the bytes it stores: incompressible writes can be bound by
        # it while compressible ones reach the link; it starts at the incompressible
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
    return params


def start_candidates(features: Features, dies_choices: Sequence[int] = ()) -> List[Dict[str, Any]]:
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

    def add(feats: Features, log2: int, ppc: int, **fixed: Any) -> None:
        dies_f: Dict[str, Any] = dict(feats.get("dies") or {})
        dies_f["value"] = ppc * CHANNELS
        f2: Dict[str, Any] = {**feats, "dies": dies_f}
        vals = {p.key: p.value for p in free_parameters(f2, dies_choices)}
        cand = {p.key: p.snap(float(vals.get(p.key, p.value))) for p in base}
        cand["nand.packages_per_channel"] = ppc
        cand["nand.page_size_log2"] = log2
        cand.update(fixed)
        if cand not in out:
            out.append(cand)

    logs = base_of(features).page_log2s

    def grid(feats: Features) -> None:
        for log2 in logs:
            if dies_choices:
                for d in dies_choices:
                    add(feats, log2, d // CHANNELS)
                continue
            implied = dies * 8192 / (1 << log2)
            for m in (0.5, 2 ** -0.5, 1.0, 2 ** 0.5, 2.0):
                add(feats, log2, ppc_p.snap(implied * m / CHANNELS))

    grid(features)
    # where the QD1 reads' NAND share moved the channel's start, the same grid at the generic channel: that share
    # holds whatever else the die spends per byte read (a decode per stripe chunk)
    generic_ch = base_of(features).channel_bytes_per_s
    if "nand.channel_bytes_per_s" in by_key and by_key["nand.channel_bytes_per_s"].value != generic_ch:
        plain = {k: v for k, v in features.items() if k != "nand_read_bytes_per_s"}
        if {p.key: p.value for p in free_parameters(plain, dies_choices)}.get("nand.channel_bytes_per_s") == generic_ch:
            grid(plain)
    # a per-request die cap is offered where reads of data written at random are slow, which a decode or the
    # layout can explain too: the page sizes at the implied dies without the cap (its top: more dies than any
    # request spans), so that large requests choose
    cap = by_key.get("controller.seq_read_max_dies")
    if cap is not None:
        for log2 in logs:
            ppc = (min(dies_choices, key=lambda d: abs(math.log(d / (dies * 8192 / (1 << log2))))) // CHANNELS
                   if dies_choices else ppc_p.snap(dies * 8192 / (1 << log2) / CHANNELS))
            add(features, log2, ppc, **{cap.key: int(cap.high)})
    return out
