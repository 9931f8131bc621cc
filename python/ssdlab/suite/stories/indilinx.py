"""The Indilinx claims: pages 002 (Vertex 4 firmware 1.4 and 1.5), 003
(Vector 150 consistency) and 004 (Vertex 4 launch firmware's reads), and
the physics claim. The wording is the project's; the figures are the pages'."""

from __future__ import annotations

from typing import List

from .claim import Claim
from .rules import Above, AmongTop, Below, Between, Check, Diff, Fig, Lowest, Near, Ratio, Together
from .scenarios import PHYSICS_SPARE_FACTORS, desnoyers_waf, physics_drive_id

__all__ = ["CLAIMS"]

V4 = "vertex4-{cap}-fw1{fw}"
V150, VECTOR, NEUTRON = "vector150-240", "vector-256", "neutron-240"
S830, M4, V3 = "samsung830-256", "crucial-m4-256", "vertex3-240"
#: The five drives of page 003's consistency charts.
CONSISTENCY_FIVE = (V150, VECTOR, NEUTRON, "sandisk-extreme2-480", "samsung840pro-256")
#: The drives of page 002's Storage Bench charts that ssdlab has (2011-2012 drives).
SB_2012 = (S830, M4, V3, NEUTRON)
ATTO_SMALL = (2048, 4096, 8192, 16384, 32768, 65536)


def v4(cap: int, fw: int) -> str:
    return V4.format(cap=cap, fw=fw)


def iops(drive: str, test: str, label: str) -> Fig:
    return Fig(drive, test, label, "iops", "IOPS")


def sb(drive: str, workload: str, label: str = "all") -> Fig:
    return Fig(drive, f"storage-bench-{workload}", label)


def cons(drive: str, label: str = "default", metric: str = "mean_iops") -> Fig:
    return Fig(drive, "consistency", label, metric, "IOPS" if metric.endswith("iops") else "")


def atto(drive: str, size: int, test: str = "atto") -> Fig:
    return Fig(drive, test, f"read {size}")


def half_fill(drive: str, label: str) -> Fig:
    return Fig(drive, "story-half-fill", label)


def _s24() -> Claim:
    rated = {(128, 3): 200, (128, 4): 420, (128, 5): 430, (256, 3): 380, (256, 4): 465, (256, 5): 510}
    return Claim("S24", "002", "The firmware updates raise the rated sequential write: 128GB 200/420/430, 256GB 380/465/510",
                 "rated", tuple(Near(Fig(v4(c, f), "rated", "sequential write"), float(v)) for (c, f), v in rated.items()))


def _s25() -> Claim:
    checks: List[Check] = []
    for test, label in (("rated", "4KB random read"), ("rated", "4KB random write"),
                        ("corners-4k-random-write-qd3", "repeated")):
        checks.append(Together(tuple(iops(v4(128, fw), test, label) for fw in (3, 4, 5)), 0.05))
    return Claim("S25", "002", "Random read and write ratings stay where they were through fw1.3, 1.4 and 1.5",
                 "unchanged (128GB: 90K read, 85K write IOPS)", tuple(checks))


def _s29() -> Claim:
    checks: List[Check] = [Above(atto(v4(256, 5), s), atto(v4(256, 3), s)) for s in (4096, 8192, 16384, 32768, 65536)]
    checks.append(Below(atto(v4(256, 5), 524288), Lowest((atto(v4(256, 5), 262144), atto(v4(256, 5), 1048576)))))
    checks += [Below(atto(v4(256, 5), s), Lowest((atto(S830, s), atto(M4, s)))) for s in ATTO_SMALL]
    return Claim("S29", "002", "ATTO QD4 reads: fw1.5 above fw1.3 at small transfers, a dip at 512KB, behind the "
                 "830 and m4 from 2KB to 64KB", "shape", tuple(checks))


def _s30() -> Claim:
    checks: List[Check] = []
    for w in ("heavy-2011", "light-2011"):
        checks.append(Between(Ratio(sb(v4(256, 4), w), sb(v4(256, 3), w)), 1.00, 1.15))
        checks.append(Together((sb(v4(256, 5), w), sb(v4(256, 4), w)), 0.05))
    return Claim("S30", "002", "Storage Bench 2011: fw1.4 a little ahead of fw1.3, fw1.5 hardly different from fw1.4",
                 "small rise", tuple(checks))


def _s46() -> Claim:
    checks: List[Check] = []
    for a in PHYSICS_SPARE_FACTORS:
        fifo = Fig(physics_drive_id(a, "fifo"), "story-uniform-random-writes", "steady", "waf", "x")
        greedy = Fig(physics_drive_id(a, "greedy"), "story-uniform-random-writes", "steady", "waf", "x")
        checks += [Near(fifo, desnoyers_waf(a), 0.03), Below(greedy, fifo, 1.0 + 1e-9)]
    return Claim("S46", "physics", "FIFO cleaning of uniform random writes follows the analytic write amplification; "
                 "greedy is never worse", "WAF 5.68 / 3.19 / 1.72 at 1.1 / 1.2 / 1.5 spare", tuple(checks))


CLAIMS: List[Claim] = [
    Claim("S23", "002", "fw1.4 cures fw1.3's slow QD1 sequential reads", "large rise",
          tuple(Above(Fig(v4(c, 4), "corners-seq-read-128k", "repeated"), Fig(v4(c, 3), "corners-seq-read-128k", "repeated"),
                      1.5) for c in (128, 256))),
    _s24(),
    _s25(),
    Claim("S26", "002", "The 128GB's random reads and writes match the 256 and 512GB's", "on par",
          (Together(tuple(iops(v4(c, 5), "corners-4k-random-read-qd3", "read") for c in (128, 256, 512)), 0.10),
           Together(tuple(iops(v4(c, 5), "corners-4k-random-write-qd3", "repeated") for c in (128, 256, 512)), 0.10))),
    Claim("S27", "002", "Iometer's QD1 sequential write hardly moves from fw1.4 to fw1.5", "negligible",
          tuple(Together((Fig(v4(c, 4), "corners-seq-write-128k", "repeated"),
                          Fig(v4(c, 5), "corners-seq-write-128k", "repeated")), 0.03) for c in (128, 256))),
    Claim("S28", "002", "AS-SSD on the 256GB: fw1.4 writes over 100 MB/s faster, fw1.5 a bit more; fw1.4 reads a "
          "little slower", "+100 MB/s, small; read down",
          (Between(Diff(Fig(v4(256, 4), "as-ssd", "Seq write"), Fig(v4(256, 3), "as-ssd", "Seq write")), 80, 160),
           Above(Fig(v4(256, 5), "as-ssd", "Seq write"), Fig(v4(256, 4), "as-ssd", "Seq write"), 0.999),
           Below(Fig(v4(256, 4), "as-ssd", "Seq read"), Fig(v4(256, 3), "as-ssd", "Seq read")))),
    _s29(),
    _s30(),
    Claim("S31", "002", "Storage Bench Heavy 2011: the Vertex 4 writes among the best and reads small files weakly",
          "order",
          (AmongTop(sb(v4(256, 5), "heavy-2011", "writes"), tuple(sb(d, "heavy-2011", "writes") for d in SB_2012), 2),
           Below(sb(v4(256, 5), "heavy-2011", "reads"), sb(S830, "heavy-2011", "reads")),
           Above(sb(v4(256, 5), "heavy-2011", "reads"), sb(S830, "heavy-2011", "reads"), 1 / 3))),
    Claim("S32", "002", "Performance mode: fast writes while under half the LBAs hold data; past that a slower "
          "pass, and after idle the drive writes about as fw1.3 does", "shape",
          (Below(half_fill(v4(256, 4), "second half"), half_fill(v4(256, 4), "first half"), 0.8),
           Together((half_fill(v4(256, 4), "after idle"), half_fill(v4(256, 3), "after idle")), 0.20))),
    Claim("S33", "002", "fw1.5's idle garbage collection recovers more than fw1.4's", "better recovery",
          (Above(half_fill(v4(256, 5), "after idle"), half_fill(v4(256, 4), "after idle"), 1.05),)),
    Claim("S34", "003", "Every drive starts fast and falls once its spare area is used", "shape",
          tuple(Above(cons(d, metric="first_60s_iops"), cons(d), 3.0) for d in CONSISTENCY_FIVE)),
    Claim("S35", "003", "At default spare area the Vector 150 is steadier and faster than the Neutron", "V150 > Neutron",
          (Above(cons(V150), cons(NEUTRON)), Above(cons(V150, metric="iops_per_sd"), cons(NEUTRON, metric="iops_per_sd")))),
    Claim("S36", "003", "At default spare area the Vector 150 is the steadiest of the five drives", "best",
          (AmongTop(cons(V150, metric="iops_per_sd"), tuple(cons(d, metric="iops_per_sd") for d in CONSISTENCY_FIVE[1:]),
                    1),)),
    Claim("S37", "003", "At 25% spare area its lead is gone: the first Vector is a little steadier", "Vector >= V150",
          (Above(cons(VECTOR, "25% OP", "iops_per_sd"), cons(V150, "25% OP", "iops_per_sd"), 0.999),
           Together((cons(VECTOR, "25% OP"), cons(V150, "25% OP")), 0.10))),
    Claim("S38", "003", "HD Tach on the Vector 150: TRIM brings back the clean curve", "shape",
          (Together((Fig(V150, "trim-validation", "after TRIM"), Fig(V150, "trim-validation", "clean")), 0.15),)),
    Claim("S39", "003", "After a fill past half the LBAs, a few idle minutes make a Barefoot 3 drive nearly new again",
          "near new within 10 minutes",
          tuple(Together((half_fill(d, "after idle"), half_fill(d, "first half")), 0.15) for d in (V150, VECTOR))),
    Claim("S40", "004", "fw1.3's QD1 128KB sequential reads are weak; AS-SSD's reads are much faster",
          "AS-SSD >> Iometer QD1",
          (Above(Fig(v4(256, 3), "as-ssd", "Seq read"), Fig(v4(256, 3), "corners-seq-read-128k", "repeated"), 1.5),)),
    Claim("S41", "004", "fw1.3 needs QD2 or more for large sequential reads; other drives read well at QD1", "QD curve",
          (Above(Fig(v4(256, 3), "corners-seq-read-qd-sweep", "QD2"), Fig(v4(256, 3), "corners-seq-read-qd-sweep", "QD1"),
                 1.3),
           Above(Fig(S830, "corners-seq-read-qd-sweep", "QD1"), Fig(S830, "corners-seq-read-qd-sweep", "QD32"), 0.8))),
    Claim("S42", "004", "ATTO on fw1.3: 64-128KB reads slow at QD1-2; larger transfers or a deeper queue fix it",
          "shape",
          (Above(atto(v4(256, 3), 4194304, "atto-qd2"), atto(v4(256, 3), 65536, "atto-qd2"), 1.8),
           Above(atto(v4(256, 3), 65536), atto(v4(256, 3), 65536, "atto-qd2"), 2.0))),
    Claim("S43", "004", "A 3GB file copied to a RAM disk reads fast on the Vertex 4", "high",
          (Above(Fig(v4(256, 3), "file-copy", "read, clean"), 400.0),)),
    Claim("S44", "004", "Never-written LBAs read slowly on the Vertex 4, quickly on the m4", "opposite",
          (Below(Fig(v4(256, 3), "seq-read-unwritten", "never written QD1"), Fig(v4(256, 3), "seq-read-unwritten", "written QD1")),
           Above(Fig(M4, "seq-read-unwritten", "never written QD1"), Fig(M4, "seq-read-unwritten", "written QD1")))),
    Claim("S45", "004", "QD1 sequential writes: the Vertex 4 leads with the 830 close; an SF-2281 matches it only "
          "with compressible data", "order",
          (Together((Fig(v4(256, 3), "corners-seq-write-128k", "repeated"), Fig(S830, "corners-seq-write-128k", "repeated")),
                    0.10),
           Above(Fig(v4(256, 3), "corners-seq-write-128k", "repeated"), Fig(M4, "corners-seq-write-128k", "repeated")),
           Above(Fig(S830, "corners-seq-write-128k", "repeated"), Fig(M4, "corners-seq-write-128k", "repeated")),
           Above(Fig(V3, "corners-seq-write-128k", "repeated"), Fig(v4(256, 3), "corners-seq-write-128k", "repeated"), 0.999),
           Above(Fig(v4(256, 3), "corners-seq-write-128k", "repeated"), Fig(V3, "corners-seq-write-128k", "incompressible")))),
    _s46(),
]
