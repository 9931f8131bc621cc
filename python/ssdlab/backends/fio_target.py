"""The fio backend's target: a block device or a test file ssdlab creates,
checked before anything is written (:func:`ssdlab.fio.safety.check_target`:
a mounted, busy or read-only device is refused, one holding data only with
``--destroy-data`` naming it), what it can do (TRIM, O_DIRECT), which tests
it can run, and the drive it is in the results."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import SsdlabError
from ..fio.run import FioVersion, find_fio, fio_version, iolog_v3_problem
from ..fio.safety import Capabilities, SystemView, TargetCheck, capabilities, check_target
from ..suite.scale import Scale
from ..suite.vocabulary import SuiteTest

#: The test file's size when ``--size`` is not given (less when free space is short).
DEFAULT_FILE_BYTES = 1 << 30
#: The smallest test file a review runs on.
MIN_FILE_BYTES = 8 << 20
#: Free space left beside a test file.
_FREE_MARGIN_BYTES = 64 << 20
_MiB = 1 << 20


@dataclass
class DeviceTarget:
    """Where the tests run: the checked target, the path fio writes
    (``filename``), its usable ``capacity_bytes``, what it can do, the fio to
    use, and what the review notes about it (``notes``)."""

    check: TargetCheck
    filename: str
    capacity_bytes: int
    caps: Capabilities
    fio: str
    version: FioVersion
    direct: bool = True
    seed: int = 1
    clean_by_trim: bool = False
    notes: List[str] = field(default_factory=list)

    @property
    def is_block(self) -> bool:
        return self.check.kind == "block"

    @property
    def disk(self) -> Optional[str]:
        """The kernel name of the disk the I/O reaches (the device, or the one
        holding the test file's file system)."""
        if self.is_block:
            return self.check.name
        fs = _fs_device(os.path.dirname(self.filename))
        return None if fs == "fs" else fs

    @property
    def align_bytes(self) -> int:
        return max(4096, self.check.logical_block_bytes) if self.is_block else 4096


def needs_of(test: SuiteTest) -> Tuple[str, ...]:
    """What a test needs beyond reads and writes: ``secure_erase`` (a run
    measures a drive from the ``clean`` state), ``trim`` (a TRIM step or the
    ``trimmed`` state), ``power`` (the power test), ``iolog`` (a replay),
    ``drive_changes`` (a run on a changed drive, e.g. a SATA 3Gbps link)."""
    out: List[str] = []
    states = [r["state"]["state"] for r in test["runs"]]
    states += [s["state"] for r in test["runs"] for s in r["steps"] if s.get("action") == "precondition"]
    if "clean" in [r["state"]["state"] for r in test["runs"]]:
        out.append("secure_erase")
    if "trimmed" in states or any(s.get("action") == "trim" for r in test["runs"] for s in r["steps"]):
        out.append("trim")
    if test.get("summary") == "power":
        out.append("power")
    if any(s.get("action") == "replay" for r in test["runs"] for s in r["steps"]):
        out.append("iolog")
    if any(r.get("drive") for r in test["runs"]):
        out.append("drive_changes")
    return tuple(out)


def skip_reason(test: SuiteTest, *, scale: Scale, capacity_bytes: int, caps: Capabilities, clean_by_trim: bool = False,
                version: Optional[FioVersion] = None) -> Optional[str]:
    """Why ``test`` cannot run on this target (None when it can)."""
    if test["id"] in scale.skip:
        return f"left out of the {scale.name} scale"
    need_cap = int(test.get("min_capacity_bytes", 0))
    if capacity_bytes < need_cap:
        return f"needs a drive of at least {need_cap:,} B and the target has {capacity_bytes:,} B"
    needs = needs_of(test)
    reasons: List[str] = []
    if "power" in needs:
        reasons.append("fio measures no power (a power meter on the drive's supply would)")
    if "drive_changes" in needs:
        changes = sorted({f"{k}={v}" for r in test["runs"] for k, v in (r.get("drive") or {}).items()})
        reasons.append(f"it changes the drive ({', '.join(changes)}), which fio cannot do to a real one (connect the drive "
                       "that way and run the tests it repeats)")
    if "secure_erase" in needs and caps.secure_erase is not None and not (clean_by_trim and caps.trim is None):
        erase = f"it starts from a secure-erased drive: {caps.secure_erase}"
        if caps.trim is None:
            erase += "; --clean-by-trim accepts a TRIM of the span instead"
        elif "trim" not in needs:
            erase += f"; nor a TRIM instead: {caps.trim}"
        reasons.append(erase)
    if "trim" in needs and caps.trim is not None:
        reasons.append(f"it needs TRIM: {caps.trim}")
    if "iolog" in needs and version is not None:
        problem = iolog_v3_problem(version)
        if problem:
            reasons.append(problem)
    return "; ".join(reasons) or None


def default_file_size(directory: str) -> int:
    """1 GiB, or half the free space of ``directory`` when that is less
    (whole MiB); SsdlabError when not even :data:`MIN_FILE_BYTES` fit."""
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    size = min(DEFAULT_FILE_BYTES, free // 2)
    size -= size % _MiB
    if size < MIN_FILE_BYTES:
        raise SsdlabError(f"only {free:,} B free in {directory}: a test file needs at least {MIN_FILE_BYTES:,} B; free some space")
    return size


def _check_file_size(directory: str, size: int) -> None:
    if size < MIN_FILE_BYTES:
        raise SsdlabError(f"argument --size: {size:,} B is less than the smallest test file, {MIN_FILE_BYTES:,} B (8m)")
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    if size + _FREE_MARGIN_BYTES > free:
        raise SsdlabError(f"argument --size: a {size:,} B test file does not fit in {directory} ({free:,} B free, "
                          f"{_FREE_MARGIN_BYTES // _MiB} MiB kept free); give a smaller --size")


def _fs_device(path: str) -> str:
    """The kernel name of the block device holding ``path``'s file system
    (``vda1``, ``dm-0``), or "fs" when there is none (tmpfs, overlay)."""
    try:
        st = os.stat(path)
        link = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        if os.path.exists(link):
            return os.path.basename(os.path.realpath(link))
    except OSError:
        pass
    return "fs"


def sysfs_value(view: SystemView, name: str, *parts: str) -> str:
    try:
        with open(os.path.join(view.sys_block(name), *parts)) as f:
            return f.read().strip()
    except OSError:
        return ""


def target_drive_info(check: TargetCheck, capacity_bytes: int, version: FioVersion, view: Optional[SystemView] = None,
                      directory: Optional[str] = None) -> Dict[str, Any]:
    """The ``drive`` object of a real target's results: ``id`` ``real-NAME``,
    a ``name`` marked "(real, fio)" (the report labels drives by name), a
    ``hash`` of what identifies it (same device or directory and size: the
    same hash, so a later review replaces an earlier one's results), and
    ``kind`` "real" with the ``target`` and ``fio_version``."""
    sv = view or SystemView()
    if check.kind == "block":
        name = check.name or os.path.basename(check.resolved)
        model = " ".join(sysfs_value(sv, name, "device", "model").split())
        vendor = " ".join(sysfs_value(sv, name, "device", "vendor").split())
        serial = sysfs_value(sv, name, "device", "serial") or sysfs_value(sv, name, "wwid")
        label = " ".join(x for x in (vendor, model) if x) or name
        short = label if label == name else f"{label} ({name})"
        ident: Dict[str, Any] = {"kind": "block", "name": name, "model": label, "serial": serial, "size": capacity_bytes}
        drive_id = f"real-{name}"
        desc = f"{label}, block device {check.resolved}"
        target = {"kind": "block", "path": check.path, "device": check.resolved, "name": name, "model": label,
                  "logical_block_bytes": check.logical_block_bytes}
    else:
        d = directory or (check.resolved if check.kind == "directory" else os.path.dirname(os.path.abspath(check.path)))
        fs = _fs_device(d)
        ident = {"kind": "file", "directory": os.path.realpath(d), "fs_device": fs, "size": capacity_bytes}
        drive_id = f"real-file-{fs}"
        size = f"{capacity_bytes / 2**30:.3g} GiB" if capacity_bytes >= 2**30 else f"{capacity_bytes / 2**20:.3g} MiB"
        short = f"{size} file on {fs}"
        desc = f"a {capacity_bytes:,} B test file ssdlab created in {os.path.realpath(d)} (file system on {fs}) and removed afterwards"
        target = {"kind": "file", "path": check.path, "directory": os.path.realpath(d), "fs_device": fs}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "id": drive_id,
        "name": f"{short} (real, fio)",
        "description": f"A real drive measured with {version}: {desc}.",
        "hash": digest,
        "capacity_bytes": int(capacity_bytes),
        "config": {},
        "geometry": {},
        "changes": {},
        "kind": "real",
        "target": target,
        "fio_version": str(version),
    }


def direct_io_works(path: str) -> bool:
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return False
    try:
        fd = os.open(path, os.O_RDWR | flag)
    except OSError:
        return False
    os.close(fd)
    return True


@dataclass
class OpenedTarget:
    """A real target checked and sized: the safety check, the fio to run and
    its version, what the target can do (TRIM), the directory of a test file
    (None for a block device) and the capacity to use (a block device whole,
    a test file of the size asked for, 4 KiB-aligned)."""

    check: TargetCheck
    fio: str
    version: FioVersion
    caps: Capabilities
    directory: Optional[str]
    capacity_bytes: int
    view: SystemView


def open_target(target: str, *, size_bytes: Optional[int] = None, destroy_data: Optional[str] = None,
                fio: Optional[str] = None, view: Optional[SystemView] = None) -> OpenedTarget:
    """Check ``target`` (UnsafeTargetError with the flag that would allow it),
    find fio (FioNotFoundError) and size the target (SsdlabError for a bad
    ``size_bytes``): what ``review --device`` and ``probe`` share."""
    view = view or SystemView()
    check = check_target(target, destroy_data=destroy_data, view=view)
    exe = find_fio(fio)
    version = fio_version(exe)
    caps = capabilities(check, view)
    directory: Optional[str] = None
    if check.kind == "block":
        if size_bytes is not None:
            raise SsdlabError("argument --size: applies to a file target; a block device is used whole")
        if not check.size_bytes:
            raise SsdlabError(f"cannot read the size of {check.path}")
        capacity = int(check.size_bytes)
    else:
        directory = check.resolved if check.kind == "directory" else os.path.dirname(os.path.abspath(check.path))
        if size_bytes is None:
            capacity = default_file_size(directory)
        else:
            _check_file_size(directory, int(size_bytes))
            capacity = int(size_bytes) - int(size_bytes) % 4096
    return OpenedTarget(check, exe, version, caps, directory, capacity, view)
