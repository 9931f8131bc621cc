"""The SandForce claims: pages 000 (Vertex 3 120GB against the 240GB and the
SF-1200 drives on three NAND parts) and 001 (the SF-1200's dirty state and
the SF-2500's). The wording is the project's; the figures are the pages'."""

from __future__ import annotations

from typing import List

from .claim import Claim
from .rules import Above, Apart, Below, Between, Descending, Fig, Lowest, Near, NearRatio, Ratio, Together

__all__ = ["CLAIMS"]

F120, V25, HYNIX = "force-f120", "vertex2-25nm-120", "vertex2-hynix-120"
V120, V240, PRO = "vertex3-120", "vertex3-240", "vertex3pro-200"


def sb(drive: str, workload: str, label: str = "all") -> Fig:
    return Fig(drive, f"storage-bench-{workload}", label)


def seq_write(drive: str, data: str) -> Fig:
    return Fig(drive, "corners-seq-write-128k", data)


def rand_write(drive: str, data: str, qd: int = 3) -> Fig:
    return Fig(drive, f"corners-4k-random-write-qd{qd}", data, "iops", "IOPS")


def resil(drive: str, label: str) -> Fig:
    return Fig(drive, "resiliency", label)


def copy(drive: str, label: str) -> Fig:
    return Fig(drive, "file-copy", label)


CLAIMS: List[Claim] = [
    Claim("S01", "000", "In Heavy 2011 one SF-1200 ranks its NAND: 34nm IMFT, then 25nm IMFT, then 32nm Hynix",
          "120.1 / 110.9 / 92.1 MB/s",
          (Descending((sb(F120, "heavy-2011"), sb(V25, "heavy-2011"), sb(HYNIX, "heavy-2011"))),
           NearRatio(Ratio(sb(F120, "heavy-2011"), sb(HYNIX, "heavy-2011")), 1.30),
           NearRatio(Ratio(sb(V25, "heavy-2011"), sb(HYNIX, "heavy-2011")), 1.20))),
    Claim("S02", "000", "Light 2011 ranks the same three SF-1200 drives the same way", "155.9 / 145.8 / 125.6 MB/s",
          (Descending((sb(F120, "light-2011"), sb(V25, "light-2011"), sb(HYNIX, "light-2011"))),
           NearRatio(Ratio(sb(F120, "light-2011"), sb(HYNIX, "light-2011")), 1.24),
           NearRatio(Ratio(sb(V25, "light-2011"), sb(HYNIX, "light-2011")), 1.16))),
    Claim("S03", "000", "With repeated data the three NAND variants write 128KB sequentially alike",
          "214.8 / 221.8 / 221.3 MB/s",
          (Together((seq_write(F120, "repeated"), seq_write(V25, "repeated"), seq_write(HYNIX, "repeated")), 0.04),
           Near(seq_write(F120, "repeated"), 214.8), Near(seq_write(V25, "repeated"), 221.8),
           Near(seq_write(HYNIX, "repeated"), 221.3))),
    Claim("S04", "000", "With incompressible data the same write follows the NAND", "136.6 / 118.5 / 95.8 MB/s",
          (Near(seq_write(F120, "incompressible"), 136.6), Near(seq_write(V25, "incompressible"), 118.5),
           Near(seq_write(HYNIX, "incompressible"), 95.8),
           Descending((seq_write(F120, "incompressible"), seq_write(V25, "incompressible"),
                       seq_write(HYNIX, "incompressible"))))),
    Claim("S05", "000", "4KB random writes at QD3 with repeated data: the Vertex 3 120GB matches the 240GB", "equal",
          (Together((rand_write(V120, "repeated"), rand_write(V240, "repeated")), 0.05),)),
    Claim("S06", "000", "With incompressible data the 120GB gives about 84% of the 240GB's random writes", "0.84",
          (NearRatio(Ratio(rand_write(V120, "incompressible"), rand_write(V240, "incompressible")), 0.84),)),
    Claim("S07", "000", "At QD32 the incompressible gap widens a little, and QD32 is its own figure, not QD3's",
          "ratio below 0.84",
          (Below(Ratio(rand_write(V120, "incompressible", 32), rand_write(V240, "incompressible", 32)),
                 Ratio(rand_write(V120, "incompressible"), rand_write(V240, "incompressible"))),
           Apart(rand_write(V120, "incompressible", 32), rand_write(V120, "incompressible"), 0.05),
           Apart(rand_write(V240, "incompressible", 32), rand_write(V240, "incompressible"), 0.05))),
    Claim("S08", "000", "Over a 3Gbps link the two capacities write 4KB randomly alike", "equal",
          (Together((Fig(V120, "corners-sata-3g", "4KB random write QD3"),
                     Fig(V240, "corners-sata-3g", "4KB random write QD3")), 0.03),)),
    Claim("S09", "000", "Halving the capacity costs random reads most; the 120GB reads below the Force F120",
          "read ratio below the write ratios; 120GB < F120",
          (Below(Ratio(Fig(V120, "corners-4k-random-read-qd3", "read", "iops", "IOPS"),
                       Fig(V240, "corners-4k-random-read-qd3", "read", "iops", "IOPS")),
                 Lowest((Ratio(rand_write(V120, "repeated"), rand_write(V240, "repeated")),
                         Ratio(rand_write(V120, "incompressible"), rand_write(V240, "incompressible"))))),
           Below(Fig(V120, "corners-4k-random-read-qd3", "read", "iops", "IOPS"),
                 Fig(F120, "corners-4k-random-read-qd3", "read", "iops", "IOPS")))),
    Claim("S10", "000", "128KB sequential writes: repeated data equal, incompressible at about three quarters",
          "1.00 / 0.76",
          (NearRatio(Ratio(seq_write(V120, "repeated"), seq_write(V240, "repeated")), 1.00),
           NearRatio(Ratio(seq_write(V120, "incompressible"), seq_write(V240, "incompressible")), 0.76))),
    Claim("S11", "000", "The 120GB's 128KB sequential reads are below the 240GB's too", "lower",
          (Below(Fig(V120, "corners-seq-read-128k", "repeated"), Fig(V240, "corners-seq-read-128k", "repeated"), 0.97),)),
    Claim("S12", "000", "Storage Bench 2011: the 120GB trails the 240GB; in Light it leads the SF-1200s and the Intel 320",
          "order",
          (Below(sb(V120, "heavy-2011"), sb(V240, "heavy-2011")), Below(sb(V120, "light-2011"), sb(V240, "light-2011")),
           Above(sb(V120, "light-2011"), sb(F120, "light-2011")), Above(sb(V120, "light-2011"), sb(V25, "light-2011")),
           Above(sb(V120, "light-2011"), sb(HYNIX, "light-2011")),
           Above(sb(V120, "light-2011"), sb("intel320-300", "light-2011")))),
    Claim("S13", "000", "In Heavy 2011 the 120GB is held back by its incompressible writes, not its reads",
          "write ratio below read ratio",
          (Below(Ratio(sb(V120, "heavy-2011", "writes"), sb(V240, "heavy-2011", "writes")),
                 Ratio(sb(V120, "heavy-2011", "reads"), sb(V240, "heavy-2011", "reads"))),)),
    Claim("S14", "000", "AS-SSD's incompressible sequential write: the 240GB about 70% ahead of the 120GB", "0.59",
          (NearRatio(Ratio(Fig(V120, "as-ssd", "Seq write"), Fig(V240, "as-ssd", "Seq write")), 0.59),)),
    Claim("S15", "000", "Resiliency of the 120GB: a deep drop after torture, TRIM recovers part, a second pass more",
          "162.1 / 38.3 / 101.5 / 132 MB/s",
          (Between(Ratio(resil(V120, "tortured"), resil(V120, "clean")), 0.15, 0.35),
           Between(Ratio(resil(V120, "tortured, after TRIM"), resil(V120, "clean")), 0.5, 0.8),
           Above(resil(V120, "tortured, after TRIM, second pass"), resil(V120, "tortured, after TRIM")))),
    Claim("S16", "000", "After a dirty fill and a TRIM the 120GB writes far below its clean speed; the 240GB hides it",
          "120GB 100-130 MB/s; 240GB >= 198",
          (Between(resil(V120, "dirty, after TRIM"), 85, 150),
           Above(Lowest((resil(V240, "dirty"), resil(V240, "dirty, after TRIM"))), 168.0),
           Below(Ratio(resil(V120, "dirty, after TRIM"), resil(V120, "clean")),
                 Ratio(resil(V240, "dirty, after TRIM"), resil(V240, "clean"))))),
    Claim("S17", "000", "On 3Gbps an SF-2281 120GB is no step up from an SF-1200", "close",
          (Together((Fig(V120, "corners-sata-3g", "128KB sequential read"),
                     Fig(F120, "corners-sata-3g", "128KB sequential read")), 0.20),
           Together((Fig(V120, "corners-sata-3g", "128KB sequential write"),
                     Fig(F120, "corners-sata-3g", "128KB sequential write")), 0.20))),
    Claim("S18", "001", "SF-1200 incompressible writes: clean, dirty, and no better after TRIM", "131.7 / 70.3 / 71 MB/s",
          (Near(resil(F120, "clean"), 131.7), Near(resil(F120, "dirty"), 70.3),
           Near(resil(F120, "dirty, after TRIM"), 71.0))),
    Claim("S19", "001", "The SF-2500 drops too, far less, and lowest right after the TRIM", "229.5 / 230.0 / 198.2 MB/s",
          (Near(resil(PRO, "clean"), 229.5), Near(resil(PRO, "dirty"), 230.0), Near(resil(PRO, "dirty, after TRIM"), 198.2),
           Below(resil(PRO, "dirty, after TRIM"), Lowest((resil(PRO, "clean"), resil(PRO, "dirty")))))),
    Claim("S20", "001", "A dirty SF-1200 stays near its recycling rate after TRIM; only a secure erase restores it",
          "about 70-80 MB/s until a secure erase",
          (Together((Fig(F120, "story-secure-erase", "dirty, after TRIM"), Fig(F120, "story-secure-erase", "dirty")), 0.15),
           Together((Fig(F120, "story-secure-erase", "after secure erase"), resil(F120, "clean")), 0.15))),
    Claim("S21", "001", "A 6.6GB incompressible file copy on the SF-1200: clean, dirty, after TRIM",
          "138.6 / 78.5 / 81.7 MB/s",
          (Near(copy(F120, "write, clean"), 138.6), Near(copy(F120, "write, dirty"), 78.5),
           Near(copy(F120, "write, after TRIM"), 81.7))),
    Claim("S22", "001", "The same copy on the SF-2500 is flat, and slower than its AS-SSD write",
          "157.5 / 158.2 / 157.8 MB/s",
          (Near(copy(PRO, "write, clean"), 157.5), Near(copy(PRO, "write, dirty"), 158.2),
           Near(copy(PRO, "write, after TRIM"), 157.8),
           Together((copy(PRO, "write, clean"), copy(PRO, "write, dirty"), copy(PRO, "write, after TRIM")), 0.05))),
]
