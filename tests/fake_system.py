"""A fake /sys and /proc of our own, with files standing in for devices: the
device checks of ssdlab.fio.safety read these instead of the machine's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

from ssdlab.fio.safety import SystemView

#: The size of a fake disk, bytes.
SIZE = 4 << 20


class FakeSystem:
    """A fake /sys and /proc under ``root`` and device files under root/dev."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.devices: Dict[str, str] = {}
        (root / "proc" / "self").mkdir(parents=True)
        (root / "proc" / "self" / "mountinfo").write_text("22 1 0:21 / /proc rw - proc proc rw\n")
        (root / "proc" / "mounts").write_text("proc /proc proc rw 0 0\n")
        (root / "proc" / "swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n")
        (root / "dev").mkdir()

    def sysdir(self, name: str) -> Path:
        return self.root / "sys" / "class" / "block" / name

    def add_disk(self, name: str, majmin: str, size: int = SIZE) -> Path:
        d = self.sysdir(name)
        (d / "holders").mkdir(parents=True)
        (d / "queue").mkdir()
        (d / "dev").write_text(majmin + "\n")
        (d / "size").write_text(f"{size // 512}\n")
        (d / "ro").write_text("0\n")
        (d / "queue" / "logical_block_size").write_text("512\n")
        dev = self.root / "dev" / name
        with open(dev, "wb") as f:
            f.truncate(size)
        self.devices[str(dev)] = name
        return dev

    def add_partition(self, disk: str, name: str, majmin: str) -> None:
        d = self.sysdir(disk) / name
        (d / "holders").mkdir(parents=True)
        (d / "partition").write_text("1\n")
        (d / "dev").write_text(majmin + "\n")
        # /sys/class/block/NAME also lists partitions at the top level.
        self.sysdir(name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(d, self.sysdir(name))

    def mount(self, majmin: str, source: str, where: str) -> None:
        with open(self.root / "proc" / "self" / "mountinfo", "a") as f:
            f.write(f"40 1 {majmin} / {where} rw,relatime shared:1 - ext4 {source} rw\n")

    def view(self) -> SystemView:
        return SystemView(sys_root=str(self.root / "sys"), proc_root=str(self.root / "proc"), block_devices=dict(self.devices), use_blkid=False)
