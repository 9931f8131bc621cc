"""May ssdlab write this target? The checks run before fio touches anything.

A block device is refused when
- it, one of its partitions or a device stacked on it (``holders``, e.g.
  device-mapper, md, LUKS) has a mounted filesystem (``/proc/self/mountinfo``
  by device number, ``/proc/mounts`` by name) or is active swap
  (``/proc/swaps``),
- it is in use: it has holders (``/sys/class/block/X/holders``), or opening
  it with ``O_EXCL`` fails with EBUSY,
- it is read-only (``/sys/class/block/X/ro``),
- it holds a partition table or a filesystem/RAID/LVM/LUKS/swap signature:
  found in its first and last sectors (MBR 0x55AA, GPT "EFI PART" primary and
  backup, ext2/3/4, xfs, btrfs, f2fs, ntfs, vfat, iso9660, swap, LUKS, LVM2, md
  RAID 0.90/1.x superblocks) and by ``blkid -p`` when it is installed, or has
  partitions in ``/sys``.

Only the last kind (data on an otherwise idle device) can be overridden, with
``--destroy-data=DEVICE`` naming the same device (symlinks such as
``/dev/disk/by-id/...`` are resolved). A mounted or busy device is never
written: the message says to free it first. Every refusal is one
:class:`~ssdlab.fio.errors.UnsafeTargetError` listing every reason and the flag
that would allow it.

A path that is not a block device is a file target: a directory (a test file
is created in it) or a new file name is accepted; an existing file, or any
other kind of node, is refused.

The system is read through a :class:`SystemView` (roots of ``/sys`` and
``/proc``, and which paths count as block devices), so tests describe fake
devices in a temporary directory and never look at the machine's disks.

API: ``check_target(path, destroy_data=None, view=SystemView()) -> TargetCheck``
(raises UnsafeTargetError); ``capabilities(check, view) -> Capabilities`` (TRIM,
secure erase: None or the reason a test needing it is skipped);
``find_signatures(path) -> list[str]``;
:func:`main` ``(argv) -> int``: a standalone form of ``ssdlab fio-check TARGET
[--destroy-data=DEVICE]`` (also what ``ssdlab review --device`` runs first).
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

from .errors import UnsafeTargetError

__all__ = ["SystemView", "TargetCheck", "Capabilities", "capabilities", "check_target", "find_signatures", "block_name", "main"]


@dataclass(frozen=True)
class SystemView:
    """Where the system is read from. ``block_devices`` maps paths to kernel
    names for fake devices (tests); None means "ask the kernel" (``stat``
    and ``/sys/dev/block``). ``exclusive_open`` tries ``O_EXCL``;
    ``use_blkid`` runs ``blkid -p`` when installed."""

    sys_root: str = "/sys"
    proc_root: str = "/proc"
    block_devices: Optional[Mapping[str, str]] = None
    exclusive_open: bool = True
    use_blkid: bool = True

    def sys_block(self, name: str) -> str:
        return os.path.join(self.sys_root, "class", "block", name)


@dataclass(frozen=True)
class TargetCheck:
    """An accepted target. ``kind``: "block", "directory" or "new-file";
    ``path`` as given, ``resolved`` with symlinks resolved; for a block device
    its kernel ``name``, ``size_bytes``, logical block size and the
    ``signatures`` found (only when ``destroy_data`` allowed them)."""

    path: str
    resolved: str
    kind: str
    name: Optional[str] = None
    size_bytes: Optional[int] = None
    logical_block_bytes: int = 512
    signatures: Tuple[str, ...] = field(default=())
    destroy_data: bool = False


# ---------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------

_HEAD_BYTES = 68 * 1024  # btrfs's superblock magic is at 64 KiB + 64
_TAIL_BYTES = 192 * 1024  # md 0.90 sits in the last 64-128 KiB; GPT backup in the last sector


def _at(buf: bytes, off: int, magic: bytes) -> bool:
    return 0 <= off and off + len(magic) <= len(buf) and buf[off : off + len(magic)] == magic


def _signatures_in(head: bytes, tail: bytes, tail_start: int, size: int) -> List[str]:
    found: List[str] = []

    def tail_at(abs_off: int, magic: bytes) -> bool:
        return _at(tail, abs_off - tail_start, magic)

    if _at(head, 512, b"EFI PART") or _at(head, 4096, b"EFI PART"):
        found.append("GPT partition table ('EFI PART' at LBA 1)")
    if size >= 4096 and (tail_at(size - 512, b"EFI PART") or tail_at(size - 4096, b"EFI PART")):
        found.append("GPT backup header ('EFI PART' in the last sector)")
    if _at(head, 510, b"\x55\xaa"):
        found.append("MBR partition table or boot sector (0x55AA at byte 510)")
    if _at(head, 1024 + 56, b"\x53\xef"):
        found.append("ext2/3/4 filesystem (0xEF53 at byte 1080)")
    if _at(head, 0, b"XFSB"):
        found.append("xfs filesystem ('XFSB' at byte 0)")
    if _at(head, 65536 + 64, b"_BHRfS_M"):
        found.append("btrfs filesystem ('_BHRfS_M' at byte 65600)")
    if _at(head, 1024, b"\x10\x20\xf5\xf2"):
        found.append("f2fs filesystem (0xF2F52010 at byte 1024)")
    if _at(head, 3, b"NTFS    "):
        found.append("NTFS filesystem ('NTFS' at byte 3)")
    if _at(head, 54, b"FAT12   ") or _at(head, 54, b"FAT16   ") or _at(head, 82, b"FAT32   "):
        found.append("FAT/vfat filesystem ('FAT' at byte 54/82)")
    if _at(head, 32769, b"CD001"):
        found.append("ISO 9660 filesystem ('CD001' at byte 32769)")
    for page in (4096, 8192, 16384, 65536):
        if _at(head, page - 10, b"SWAPSPACE2") or _at(head, page - 10, b"SWAP-SPACE"):
            found.append(f"swap space ('SWAPSPACE2' at byte {page - 10})")
            break
    if _at(head, 0, b"LUKS\xba\xbe"):
        found.append("LUKS encrypted volume ('LUKS' at byte 0)")
    for sector in range(4):
        if _at(head, sector * 512, b"LABELONE"):
            found.append(f"LVM2 physical volume ('LABELONE' in sector {sector})")
            break
    md = b"\xfc\x4e\x2b\xa9"  # 0xa92b4efc little-endian
    if _at(head, 0, md) or _at(head, 4096, md):
        found.append("md RAID member (superblock 1.1/1.2)")
    elif size >= 128 * 1024:
        v090 = (size & ~(65536 - 1)) - 65536
        v10 = ((size // 512 - 16) & ~7) * 512
        if tail_at(v090, md) or tail_at(v10, md):
            found.append("md RAID member (superblock 0.90/1.0 at the end)")
    return found


def _size_of(fd: int) -> int:
    return os.lseek(fd, 0, os.SEEK_END)


def find_signatures(path: str) -> List[str]:
    """Partition tables and filesystem signatures in the first and last
    sectors of ``path`` (read-only)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = _size_of(fd)
        head = os.pread(fd, min(_HEAD_BYTES, size), 0)
        tail_start = max(0, size - _TAIL_BYTES)
        tail = os.pread(fd, size - tail_start, tail_start)
    finally:
        os.close(fd)
    return _signatures_in(head, tail, tail_start, size)


def _blkid(path: str) -> List[str]:
    exe = shutil.which("blkid")
    if exe is None:
        return []
    try:
        cp = subprocess.run([exe, "-p", "-o", "export", path], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if cp.returncode != 0:
        return []
    kv = dict(line.split("=", 1) for line in cp.stdout.splitlines() if "=" in line)
    out = []
    if "PTTYPE" in kv:
        out.append(f"{kv['PTTYPE']} partition table (blkid)")
    if "TYPE" in kv:
        out.append(f"{kv['TYPE']} signature (blkid)")
    return out


# ---------------------------------------------------------------------------
# The system's view of a block device
# ---------------------------------------------------------------------------


def block_name(path: str, view: SystemView) -> Optional[str]:
    """The kernel name (``sda``, ``nvme0n1``, ``loop3``) when ``path`` is a
    block device, else None."""
    if view.block_devices is not None:
        real = os.path.realpath(path)
        for p, name in view.block_devices.items():
            if os.path.realpath(p) == real:
                return name
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    link = os.path.join(view.sys_root, "dev", "block", f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    try:
        return os.path.basename(os.path.realpath(link))
    except OSError:
        return os.path.basename(os.path.realpath(path))


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _listdir(path: str) -> List[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _partitions(name: str, view: SystemView) -> List[str]:
    base = view.sys_block(name)
    return [d for d in _listdir(base) if os.path.exists(os.path.join(base, d, "partition"))]


def _holders(name: str, view: SystemView) -> List[str]:
    return _listdir(os.path.join(view.sys_block(name), "holders"))


def _family(name: str, view: SystemView) -> Set[str]:
    """The device, its partitions and everything stacked on them."""
    seen: Set[str] = set()
    todo = [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo += _partitions(n, view)
        todo += _holders(n, view)
    return seen


def _mounts(names: Set[str], view: SystemView) -> List[str]:
    """Mount points of any of ``names`` (by device number and by source)."""
    numbers: Dict[str, str] = {}
    for n in names:
        dev = _read(os.path.join(view.sys_block(n), "dev"))
        if dev:
            numbers[dev] = n
    found: List[str] = []
    info = _read(os.path.join(view.proc_root, "self", "mountinfo")) or ""
    for line in info.splitlines():
        parts = line.split()
        if len(parts) < 10 or " - " not in line:
            continue
        majmin, mountpoint = parts[2], parts[4]
        after = line.split(" - ", 1)[1].split()
        source = after[1] if len(after) > 1 else ""
        if majmin in numbers or os.path.basename(os.path.realpath(source)) in names and source.startswith("/dev/"):
            who = numbers.get(majmin) or os.path.basename(source)
            found.append(f"{who} on {mountpoint}")
    mounts = _read(os.path.join(view.proc_root, "mounts")) or ""
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith("/dev/"):
            base = os.path.basename(os.path.realpath(parts[0]))
            if base in names:
                entry = f"{base} on {parts[1]}"
                if entry not in found:
                    found.append(entry)
    return found


def _swaps(names: Set[str], view: SystemView) -> List[str]:
    out = []
    for line in (_read(os.path.join(view.proc_root, "swaps")) or "").splitlines()[1:]:
        parts = line.split()
        if parts and os.path.basename(os.path.realpath(parts[0])) in names:
            out.append(os.path.basename(parts[0]))
    return out


def _exclusive_busy(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as e:
        return e.errno == errno.EBUSY
    os.close(fd)
    return False


# ---------------------------------------------------------------------------
# The decision
# ---------------------------------------------------------------------------


def _check_block(path: str, name: str, destroy_data: Optional[str], view: SystemView) -> TargetCheck:
    real = os.path.realpath(path)
    flag = f"--destroy-data={path}"
    hard: List[str] = []
    soft: List[str] = []
    family = _family(name, view)
    mounted = _mounts(family, view)
    if mounted:
        hard.append("it has a mounted filesystem (" + ", ".join(mounted) + "): unmount it first")
    swaps = _swaps(family, view)
    if swaps:
        hard.append("it is active swap (" + ", ".join(swaps) + "): swapoff first")
    holders = sorted(_family(name, view) - {name} - set(_partitions(name, view)))
    direct_holders = _holders(name, view) + [h for p in _partitions(name, view) for h in _holders(p, view)]
    if direct_holders:
        hard.append("it is in use by " + ", ".join(sorted(set(direct_holders) | set(holders))) + " (/sys/class/block/*/holders): stop them first")
    elif view.exclusive_open and view.block_devices is None and _exclusive_busy(path):
        hard.append("it is in use (an exclusive open failed with EBUSY)")
    if _read(os.path.join(view.sys_block(name), "ro")) == "1":
        hard.append("it is read-only")
    parts = _partitions(name, view)
    if parts:
        soft.append("it has partitions (" + ", ".join(parts) + ")")
    sigs: List[str] = []
    try:
        sigs = find_signatures(path)
    except OSError as e:
        hard.append(f"it cannot be read to look for data ({e.strerror})")
    if view.use_blkid and view.block_devices is None:
        sigs += [s for s in _blkid(path) if s not in sigs]
    if sigs:
        soft.append("it holds " + "; ".join(sigs))
    allowed = False
    if destroy_data is not None:
        if os.path.realpath(destroy_data) != real:
            hard.append(f"--destroy-data names {destroy_data} ({os.path.realpath(destroy_data)}), but the target is {path} ({real}); "
                        "they must be the same device")
        else:
            allowed = True
    if hard:
        raise UnsafeTargetError(path, hard + soft, None)
    if soft and not allowed:
        raise UnsafeTargetError(path, soft, flag)
    size_txt = _read(os.path.join(view.sys_block(name), "size"))
    lbs_txt = _read(os.path.join(view.sys_block(name), "queue", "logical_block_size"))
    size = int(size_txt) * 512 if size_txt and size_txt.isdigit() else None
    return TargetCheck(
        path=path,
        resolved=real,
        kind="block",
        name=name,
        size_bytes=size,
        logical_block_bytes=int(lbs_txt) if lbs_txt and lbs_txt.isdigit() else 512,
        signatures=tuple(soft),
        destroy_data=allowed,
    )


def check_target(path: str, destroy_data: Optional[str] = None, view: SystemView = SystemView()) -> TargetCheck:
    """Decide whether ssdlab may write ``path``; raises UnsafeTargetError
    with every reason and the flag that would allow it (if any)."""
    name = block_name(path, view)
    if name is not None:
        return _check_block(path, name, destroy_data, view)
    real = os.path.realpath(path)
    if destroy_data is not None:
        raise UnsafeTargetError(
            path, [f"--destroy-data applies to block devices and {path} is not one (ssdlab only ever writes its own test file there)"], None,
            device=False)
    if os.path.isdir(real):
        if not os.access(real, os.W_OK):
            raise UnsafeTargetError(path, ["the directory is not writable"], None, device=False)
        return TargetCheck(path=path, resolved=real, kind="directory")
    if os.path.lexists(path):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = 0
        what = "an existing file" if stat.S_ISREG(mode) else "neither a block device, a directory nor a new file"
        raise UnsafeTargetError(path, [f"it is {what}: ssdlab writes only a test file it creates; give a directory or a new file name"],
                                None, device=False)
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(parent):
        raise UnsafeTargetError(path, [f"its directory {parent} does not exist"], None, device=False)
    return TargetCheck(path=path, resolved=real, kind="new-file")


@dataclass(frozen=True)
class Capabilities:
    """What a target can do beyond reads and writes: None when it can, else
    the reason a test needing it is skipped (recorded in the results)."""

    trim: Optional[str]
    secure_erase: Optional[str]

    def missing(self, needs: Sequence[str]) -> Optional[str]:
        """The reason a test needing ``needs`` ("trim", "secure_erase") is
        skipped, or None when the target has them all."""
        reasons = [r for r in (getattr(self, n) for n in needs) if r]
        return "; ".join(reasons) or None


def capabilities(check: TargetCheck, view: SystemView = SystemView()) -> Capabilities:
    """TRIM and secure erase on an accepted target."""
    erase = "ssdlab issues no ATA SECURITY ERASE (run from fio's exec_prerun, hdparm fails silently when missing or on a frozen drive)"
    if check.kind != "block" or check.name is None:
        return Capabilities(trim="a file target has no TRIM (fio trims block devices only)", secure_erase="a file has no ATA SECURITY ERASE")
    dmax = _read(os.path.join(view.sys_block(check.name), "queue", "discard_max_bytes"))
    trim = (None if dmax and dmax.isdigit() and int(dmax) > 0
            else f"{check.path} does not accept discard (queue/discard_max_bytes is {dmax or 'missing'})")
    return Capabilities(trim=trim, secure_erase=erase)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssdlab fio-check TARGET [--destroy-data=DEVICE]``: print what would be
    written, or the refusal (exit 2)."""
    ap = argparse.ArgumentParser(prog="ssdlab fio-check", description="Check whether ssdlab may write a target (nothing is written).")
    ap.add_argument("target")
    ap.add_argument("--destroy-data", dest="destroy_data", metavar="DEVICE")
    args = ap.parse_args(argv)
    try:
        c = check_target(args.target, args.destroy_data)
    except UnsafeTargetError as e:
        sys.stderr.write(f"ssdlab: error: {e}\n")
        return 2
    if c.kind == "block":
        extra = f"; its data will be destroyed ({'; '.join(c.signatures)})" if c.signatures else ""
        sys.stdout.write(f"{c.path}: block device {c.name}, {c.size_bytes or 0:,} B, may be written{extra}\n")
    elif c.kind == "directory":
        sys.stdout.write(f"{c.path}: directory; ssdlab will create and remove its own test file in it\n")
    else:
        sys.stdout.write(f"{c.path}: ssdlab will create this file and remove it afterwards\n")
    return 0
