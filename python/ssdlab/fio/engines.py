"""What a simulated drive makes of fio's I/O engines and host-side options.

A simulated drive stands in for a block device. An engine that does block I/O
(the kernel's sync and async paths, SCSI generic, NVMe passthrough, and the
remote block devices iSCSI, NBD and Ceph RBD) runs on it; any other engine is
refused with the reason, before its own options are looked at. Host-side
options (CPU placement, priorities, how I/O is batched into system calls) are
accepted with one note each: the simulated host has no CPU for them to act on.

API: :data:`SYNC_ENGINES`, :data:`ASYNC_ENGINES`, :data:`BLOCK_ENGINES`,
:data:`REFUSED_ENGINES` (engine -> reason), :data:`ENGINE_OPTIONS` (options of
accepted engines, recorded), :data:`HOST_OPTIONS` (option -> why it has no
effect), :func:`engine_refusal` (engine -> reason or None).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

__all__ = ["SYNC_ENGINES", "ASYNC_ENGINES", "BLOCK_ENGINES", "REFUSED_ENGINES", "ENGINE_OPTIONS", "HOST_OPTIONS",
           "engine_refusal"]

#: fio's synchronous engines: one I/O at a time whatever ``iodepth`` says
#: (HOWTO ``iodepth``: "increasing iodepth beyond 1 will not affect synchronous ioengines").
SYNC_ENGINES: Tuple[str, ...] = ("sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "sg", "splice")
#: Engines that keep ``iodepth`` I/Os in flight.
ASYNC_ENGINES: Tuple[str, ...] = ("libaio", "io_uring", "posixaio", "io_uring_cmd", "xnvme", "windowsaio", "solarisaio",
                                  "libiscsi", "nbd", "rbd")
#: Every engine that runs on a simulated drive.
BLOCK_ENGINES: Tuple[str, ...] = SYNC_ENGINES + ASYNC_ENGINES

_NETWORK = "moves data over a network socket, not to a block device"
_RDMA = "moves memory between hosts over RDMA, not to a block device"
_FS = "does file-system operations (create, stat, delete, allocate, defragment), which a block device does not have"
_DFS = "talks to a distributed file system or object store, not to a block device"
_PMEM = "writes persistent memory by loads and stores, not through a block device's queue"

#: Engines a simulated drive cannot stand in for, with the reason.
REFUSED_ENGINES: Dict[str, str] = {
    "null": "does no I/O (it completes every request at once): there is nothing for a drive to do",
    "cpp_null": "does no I/O (it completes every request at once): there is nothing for a drive to do",
    "net": _NETWORK,
    "netsplice": _NETWORK,
    "http": "sends HTTP requests to an object store (S3, Swift, WebDAV), not block I/O",
    "rdma": _RDMA,
    "librpma_apm_client": _RDMA,
    "librpma_apm_server": _RDMA,
    "librpma_gpspm_client": _RDMA,
    "librpma_gpspm_server": _RDMA,
    "libcufile": "moves data between GPU memory and files (GPUDirect Storage), which the simulator has no GPU for",
    "cpuio": "burns CPU time and does no I/O",
    "exec": "runs a program and does no I/O of its own",
    "filecreate": _FS,
    "filestat": _FS,
    "filedelete": _FS,
    "ftruncate": _FS,
    "falloc": _FS,
    "e4defrag": _FS,
    "libhdfs": _DFS,
    "gfapi": _DFS,
    "gfapi_async": _DFS,
    "dfs": _DFS,
    "nfs": _DFS,
    "rados": _DFS,
    "ime_psync": _DFS,
    "ime_psyncv": _DFS,
    "ime_aio": _DFS,
    "dev-dax": _PMEM,
    "libpmem": _PMEM,
    "pmemblk": _PMEM,
    "mtd": "writes raw flash through MTD (no flash translation layer); a simulated drive is a block device with one",
    "libzbc": "drives a zoned block device; the simulated drives have no zones",
    "guasi": "is an old asynchronous engine fio no longer builds",
}

#: Options of accepted engines: recorded (the simulated drive is the device
#: they would reach).
ENGINE_OPTIONS: Tuple[str, ...] = (
    "sg_write_mode", "cmd_type", "xnvme_async", "xnvme_sync", "xnvme_admin", "xnvme_dev_nsid", "xnvme_iovec",
    "clientname", "pool", "rbdname", "busy_poll", "uri", "initiator", "nowait", "uncached", "hipri_percentage",
    "readfua", "writefua", "sg_verify", "force_async",
)

_CPU = "the simulated host has no CPUs to place or schedule jobs on"
_BATCH = "the simulated host submits and reaps one I/O at a time at no cost, so batching system calls changes nothing"
_PRIO = "the simulated drive serves commands in arrival order; host I/O priorities are not sent to it"
_ERRORS = "I/O on a simulated drive does not fail"
_FILES = "the job's files are regions of the simulated block device, created with it"
_MEM = "the simulated host's memory takes no time to allocate or touch"

#: Host-side options: accepted, with a note naming them (option -> why).
HOST_OPTIONS: Dict[str, str] = {
    "cpus_allowed": _CPU,
    "cpus_allowed_policy": _CPU,
    "cpumask": _CPU,
    "numa_cpu_nodes": _CPU,
    "numa_mem_policy": _CPU,
    "nice": _CPU,
    "thread": "jobs are simulated submitters, neither threads nor processes",
    "prio": _PRIO,
    "prioclass": _PRIO,
    "cmdprio_percentage": _PRIO,
    "cmdprio_class": _PRIO,
    "cmdprio": _PRIO,
    "cmdprio_bssplit": _PRIO,
    "iodepth_batch": _BATCH,
    "iodepth_batch_complete_min": _BATCH,
    "iodepth_batch_complete_max": _BATCH,
    "iodepth_low": _BATCH,
    "io_submit_mode": "the simulated host submits from the job itself (io_submit_mode=offload only moves it to another thread)",
    "hipri": "completions are not polled: the simulated host learns of them at once",
    "fixedbufs": _MEM,
    "registerfiles": _BATCH,
    "sqthread_poll": _BATCH,
    "sqthread_poll_cpu": _CPU,
    "mem": _MEM,
    "iomem_align": _MEM,
    "lockmem": _MEM,
    "gtod_reduce": "the simulator's clock costs nothing to read",
    "clocksource": "the simulator's clock costs nothing to read",
    "disable_lat": "the simulator measures latency at no cost (it is reported anyway)",
    "disable_clat": "the simulator measures latency at no cost (it is reported anyway)",
    "disable_slat": "the simulator measures latency at no cost (it is reported anyway)",
    "disable_bw_measurement": "the simulator measures bandwidth at no cost (it is reported anyway)",
    "continue_on_error": _ERRORS,
    "ignore_error": _ERRORS,
    "error_dump": _ERRORS,
    "exitall": "each job runs its full course (the jobs that fio would stop early are not cut short)",
    "exitall_on_error": _ERRORS,
    "exit_what": "each job runs its full course (the jobs that fio would stop early are not cut short)",
    "create_on_open": _FILES,
    "create_serialize": _FILES,
    "allow_file_create": _FILES,
    "fallocate": _FILES,
    "pre_read": "a simulated drive has no page cache to fill",
    "ioscheduler": "the simulated host has no kernel I/O scheduler",
    "uid": _CPU,
    "gid": _CPU,
    "stats": "the simulator keeps its statistics anyway",
    "log_prio": "the simulated drive serves commands in arrival order; there are no priorities to log",
    "nonvectored": _BATCH,
}


def engine_refusal(engine: str) -> Optional[str]:
    """Why ``engine`` cannot run on a simulated drive (None when it can, or
    when fio would not know it either: the parser says so)."""
    return REFUSED_ENGINES.get(engine)
