"""ssdlab never writes a device with a mounted filesystem, one in use, or one
holding a partition table or filesystem signature, unless --destroy-data names
that very device. Tested on fake device descriptions in a temporary directory
(a /sys and /proc of our own, files standing in for devices) and, where the
container allows, on a loop device over a temporary file; never on the
machine's own disks."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest

from conftest import attached_loop_device
from fake_system import FakeSystem
from ssdlab.errors import SsdlabError
from ssdlab.fio import safety
from ssdlab.fio.errors import UnsafeTargetError
from ssdlab.fio.safety import SystemView, check_target, find_signatures

SIZE = 4 << 20


@pytest.fixture
def fake(tmp_path: Path) -> FakeSystem:
    return FakeSystem(tmp_path)


def write_at(dev: Path, offset: int, data: bytes) -> None:
    with open(dev, "r+b") as f:
        f.seek(offset)
        f.write(data)


def refusal(path: Path, view: SystemView, destroy: Optional[str] = None) -> UnsafeTargetError:
    with pytest.raises(UnsafeTargetError) as ei:
        check_target(str(path), destroy_data=destroy, view=view)
    assert isinstance(ei.value, SsdlabError)
    return ei.value


def test_a_blank_idle_device_may_be_written(fake: FakeSystem) -> None:
    dev = fake.add_disk("sdz", "8:240")
    c = check_target(str(dev), view=fake.view())
    assert (c.kind, c.name, c.size_bytes, c.logical_block_bytes, c.signatures, c.destroy_data) == ("block", "sdz", SIZE, 512, (), False)


MD = struct.pack("<I", 0xA92B4EFC)
SIGNATURES: List[Tuple[str, int, bytes, str]] = [
    ("mbr", 510, b"\x55\xaa", "MBR"),
    ("gpt", 512, b"EFI PART", "GPT partition table"),
    ("gpt-backup-only", SIZE - 512, b"EFI PART", "GPT backup"),
    ("ext4", 1080, b"\x53\xef", "ext2/3/4"),
    ("xfs", 0, b"XFSB", "xfs"),
    ("btrfs", 65600, b"_BHRfS_M", "btrfs"),
    ("f2fs", 1024, b"\x10\x20\xf5\xf2", "f2fs"),
    ("ntfs", 3, b"NTFS    ", "NTFS"),
    ("vfat", 82, b"FAT32   ", "FAT"),
    ("iso", 32769, b"CD001", "ISO 9660"),
    ("swap", 4086, b"SWAPSPACE2", "swap"),
    ("luks", 0, b"LUKS\xba\xbe", "LUKS"),
    ("lvm", 512, b"LABELONE", "LVM2"),
    ("md-1.2", 4096, MD, "md RAID"),
    ("md-0.90", (SIZE & ~65535) - 65536, MD, "md RAID"),
]


@pytest.mark.parametrize("kind,offset,magic,needle", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_a_signature_is_refused_unless_destroy_data_names_the_device(fake: FakeSystem, kind: str, offset: int, magic: bytes, needle: str) -> None:
    dev = fake.add_disk("sdz", "8:240")
    write_at(dev, offset, magic)
    e = refusal(dev, fake.view())
    msg = str(e)
    assert needle in msg and f"--destroy-data={dev}" in msg and e.flag == f"--destroy-data={dev}", msg
    assert msg.count("\n") == 0
    c = check_target(str(dev), destroy_data=str(dev), view=fake.view())
    assert c.destroy_data and any(needle in s for s in c.signatures)


def test_destroy_data_resolves_symlinks_and_must_name_the_same_device(fake: FakeSystem) -> None:
    dev = fake.add_disk("sdz", "8:240")
    other = fake.add_disk("sdy", "8:224")
    write_at(dev, 510, b"\x55\xaa")
    by_id = fake.root / "dev" / "disk" / "by-id"
    by_id.mkdir(parents=True)
    link = by_id / "ata-SSD_SERIAL123"
    link.symlink_to(dev)
    assert check_target(str(link), destroy_data=str(dev), view=fake.view()).resolved == str(dev)
    assert check_target(str(dev), destroy_data=str(link), view=fake.view()).destroy_data
    e = refusal(dev, fake.view(), destroy=str(other))
    assert "must be the same device" in str(e) and e.flag is None


def test_a_mounted_partition_is_never_written(fake: FakeSystem) -> None:
    dev = fake.add_disk("sdz", "8:240")
    fake.add_partition("sdz", "sdz1", "8:241")
    fake.mount("8:241", "/dev/sdz1", "/mnt/data")
    e = refusal(dev, fake.view(), destroy=str(dev))
    msg = str(e)
    assert "mounted filesystem" in msg and "sdz1 on /mnt/data" in msg and "unmount" in msg
    assert e.flag is None and "no flag allows this" in msg
    assert "partitions (sdz1)" in msg


def test_a_mount_listed_only_in_proc_mounts_is_found(fake: FakeSystem) -> None:
    dev = fake.add_disk("sdz", "8:240")
    (fake.root / "proc" / "mounts").write_text("/dev/sdz /srv ext4 rw 0 0\n")
    assert "sdz on /srv" in str(refusal(dev, fake.view()))


def test_a_device_held_by_device_mapper_or_swapped_on_is_in_use(fake: FakeSystem) -> None:
    dev = fake.add_disk("sdz", "8:240")
    (fake.sysdir("sdz") / "holders" / "dm-0").mkdir()
    fake.add_disk("dm-0", "253:0")
    fake.mount("253:0", "/dev/mapper/vg-root", "/")
    e = refusal(dev, fake.view(), destroy=str(dev))
    assert "in use by dm-0" in str(e) and "dm-0 on /" in str(e) and e.flag is None
    dev2 = fake.add_disk("sdx", "8:200")
    with open(fake.root / "proc" / "swaps", "a") as f:
        f.write(f"{dev2}\tpartition\t4096\t0\t-2\n")
    assert "swap" in str(refusal(dev2, fake.view()))


def test_a_read_only_device_is_refused(fake: FakeSystem) -> None:
    dev = fake.add_disk("sdz", "8:240")
    (fake.sysdir("sdz") / "ro").write_text("1\n")
    assert "read-only" in str(refusal(dev, fake.view(), destroy=str(dev)))


def test_file_targets_only_ever_get_a_new_file(tmp_path: Path) -> None:
    view = SystemView(block_devices={})
    assert check_target(str(tmp_path), view=view).kind == "directory"
    assert check_target(str(tmp_path / "new.dat"), view=view).kind == "new-file"
    existing = tmp_path / "precious.dat"
    existing.write_bytes(b"data")
    e = refusal(existing, view)
    assert "existing file" in str(e) and e.flag is None
    assert "does not exist" in str(refusal(tmp_path / "nodir" / "x.dat", view))
    assert "applies to block devices" in str(refusal(tmp_path, view, destroy=str(tmp_path)))
    assert existing.read_bytes() == b"data"


def test_what_a_target_cannot_do_is_a_reason_to_skip(fake: FakeSystem, tmp_path: Path) -> None:
    dev = fake.add_disk("sdz", "8:240")
    c = check_target(str(dev), view=fake.view())
    assert "discard_max_bytes is missing" in str(safety.capabilities(c, fake.view()).trim)
    (fake.sysdir("sdz") / "queue" / "discard_max_bytes").write_text("2147450880\n")
    caps = safety.capabilities(c, fake.view())
    assert caps.trim is None and caps.missing(["trim"]) is None
    assert "SECURITY ERASE" in str(caps.missing(["trim", "secure_erase"]))
    f = safety.capabilities(check_target(str(tmp_path), view=SystemView(block_devices={})))
    assert "no TRIM" in str(f.missing(["trim"]))


def test_find_signatures_reads_a_file(tmp_path: Path) -> None:
    p = tmp_path / "img"
    with open(p, "wb") as f:
        f.truncate(1 << 20)
    assert find_signatures(str(p)) == []
    write_at(p, 1080, b"\x53\xef")
    assert find_signatures(str(p)) == ["ext2/3/4 filesystem (0xEF53 at byte 1080)"]


# ---------------------------------------------------------------------------
# A real loop device (skips with the reason where the container cannot)
# ---------------------------------------------------------------------------


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[str]:
    with attached_loop_device(tmp_path, 32 << 20) as dev:
        yield dev


def test_a_loop_device_blank_then_formatted_then_held(loop_device: str) -> None:
    c = check_target(loop_device)
    assert c.kind == "block" and c.size_bytes == 32 << 20 and c.name == os.path.basename(loop_device)
    mkfs = shutil.which("mkfs.ext4")
    if mkfs is not None:
        subprocess.run([mkfs, "-q", "-F", loop_device], check=True, capture_output=True)
    else:
        with open(loop_device, "r+b") as f:
            f.seek(1080)
            f.write(b"\x53\xef")
    with pytest.raises(UnsafeTargetError) as ei:
        check_target(loop_device)
    assert "ext2/3/4" in str(ei.value) and f"--destroy-data={loop_device}" in str(ei.value)
    assert check_target(loop_device, destroy_data=loop_device).destroy_data
    # Held open exclusively by someone else (here: us): in use, whatever the flag.
    fd = os.open(loop_device, os.O_RDONLY | os.O_EXCL)
    try:
        with pytest.raises(UnsafeTargetError) as ei:
            check_target(loop_device, destroy_data=loop_device)
        assert "in use" in str(ei.value) and ei.value.flag is None
    finally:
        os.close(fd)


def test_main_says_what_would_happen_or_refuses(fake: FakeSystem, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert safety.main([str(tmp_path)]) == 0
    assert "create and remove its own test file" in capsys.readouterr().out
    existing = tmp_path / "f"
    existing.write_text("x")
    assert safety.main([str(existing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssdlab: error: refusing to write") and err.count("\n") == 1
