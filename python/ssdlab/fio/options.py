"""Every fio option ssdlab accepts, with what the simulator does with it, its
aliases, and the options it refuses with the reason (the table the job-file
parser reads; :mod:`ssdlab.fio.jobfile` describes the effects)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from .engines import BLOCK_ENGINES, ENGINE_OPTIONS, HOST_OPTIONS

_RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite",
             "randtrimwrite")


@dataclass(frozen=True)
class OptionSpec:
    """One accepted option: its value ``kind`` (size, sizes, bssplit, time,
    int, uint, bool, str, choice), what the simulator does with it
    (``effect``: engine, ssdlab, recorded, host, noted), allowed values for a choice, and a
    range for integers."""

    name: str
    kind: str
    effect: str
    choices: Tuple[str, ...] = ()
    lo: Optional[int] = None
    hi: Optional[int] = None
    percent_ok: bool = False
    help: str = ""


def _spec(name: str, kind: str, effect: str, **kw: object) -> Tuple[str, OptionSpec]:
    return name, OptionSpec(name, kind, effect, **kw)  # type: ignore[arg-type]


#: Options about the data fio writes that no simulated drive responds to,
#: with the reason (accepted with one note each).
_DEDUPE = ("no simulated drive deduplicates: a duplicate block is stored like any other (SandForce-class data reduction "
           "compresses each write, it does not match blocks across writes), and fio's duplicates have the compressibility "
           "of its other blocks, so the drive sees the data it would without dedupe")
NO_EFFECT: Dict[str, str] = {
    "dedupe_percentage": _DEDUPE,
    "dedupe_mode": _DEDUPE,
    "dedupe_working_set_percentage": _DEDUPE,
    "dedupe_global": _DEDUPE,
}

#: Every option ssdlab accepts, by canonical name.
OPTIONS: Dict[str, OptionSpec] = dict(
    [
        # -- passed to the engine's job parser ------------------------------
        _spec("rw", "choice", "engine", choices=_RW_MODES, help="I/O pattern"),
        _spec("bs", "sizes", "engine", help="block size (READ,WRITE,TRIM: the job's direction's)"),
        _spec("bssplit", "bssplit", "engine", help="block sizes and weights, SIZE/PERCENT:..."),
        _spec("bsrange", "range", "engine", help="block sizes drawn between MIN-MAX"),
        _spec("blockalign", "sizes", "engine", help="offset alignment of random I/O"),
        _spec("offset", "size", "engine", percent_ok=True, help="start of the region (0% allowed)"),
        _spec("size", "size", "engine", percent_ok=True, help="length of the region"),
        _spec("io_size", "size", "engine", help="bytes to transfer (per job)"),
        _spec("number_ios", "uint", "engine", lo=0, help="stop after this many I/Os (within one pass; 0: no limit, as in fio)"),
        _spec("runtime", "time", "engine", help="stop after this long"),
        _spec("time_based", "bool", "engine", help="run for runtime even after a pass"),
        _spec("iodepth", "int", "engine", lo=1, hi=65536, help="I/Os in flight (async engines; an NVMe queue holds up to 65536)"),
        _spec("rwmixread", "int", "engine", lo=0, hi=100, help="percentage of reads in rw/randrw"),
        _spec("refill_buffers", "bool", "engine", help="new data every write (incompressible)"),
        _spec("scramble_buffers", "bool", "engine", help="scramble the buffer (default on)"),
        _spec("zero_buffers", "bool", "engine", help="zeros"),
        _spec("buffer_compress_percentage", "int", "engine", lo=0, hi=99, help="compressible data"),
        _spec("log_avg_msec", "int", "engine", lo=1, help="interval of the logs and series"),
        _spec("randseed", "int", "engine", lo=0, help="seed of the offsets"),
        _spec("fsync", "int", "engine", lo=0, help="FLUSH CACHE after every N writes (the queue drains first; 0: never)"),
        _spec("fdatasync", "int", "engine", lo=0, help="the same as fsync on a block device (0: never)"),
        # -- implemented by ssdlab.fio.simulate --------------------------------
        _spec("name", "str", "ssdlab", help="job name"),
        _spec("description", "str", "ssdlab", help="text shown with the job"),
        _spec("numjobs", "int", "ssdlab", lo=1, hi=256, help="clones of the job (merged into one queue where exact)"),
        _spec("ramp_time", "time", "ssdlab", help="run this long before measuring (time-based random jobs)"),
        _spec("startdelay", "time", "ssdlab", help="idle before the job starts"),
        _spec("loops", "int", "ssdlab", lo=1, help="repeat the job's I/O this many times"),
        _spec("stonewall", "bool", "ssdlab", help="wait for the jobs before (a new group)"),
        _spec("wait_for", "str", "ssdlab", help="start after the named job (as a stonewall)"),
        _spec("new_group", "bool", "ssdlab", help="start a new reporting group"),
        _spec("group_reporting", "bool", "ssdlab", help="report a group as one job"),
        _spec("write_iops_log", "str", "ssdlab", help="write NAME_iops.N.log"),
        _spec("write_bw_log", "str", "ssdlab", help="write NAME_bw.N.log"),
        _spec("per_job_logs", "bool", "ssdlab", help="one log per job (default) or one per name"),
        _spec("random_distribution", "str", "engine",
              help="random, zipf[:THETA[:CENTER]], pareto[:H[:CENTER]], normal[:DEV%[:CENTER]], zoned:A/R:..., zoned_abs:A/SIZE:..."),
        _spec("norandommap", "bool", "ssdlab", help="offsets drawn with replacement (the engine always does)"),
        _spec("ioengine", "choice", "ssdlab", choices=BLOCK_ENGINES, help="sync engines run at QD1"),
        _spec("end_fsync", "bool", "ssdlab", help="FLUSH CACHE at the end of the job"),
        _spec("kb_base", "choice", "ssdlab", choices=("1024", "1000"), help="meaning of k/ki in sizes"),
        _spec("rate", "rates", "engine", help="bytes per second the job issues at most (READ,WRITE,TRIM)"),
        _spec("rate_iops", "ints", "engine", help="I/Os per second the job issues at most (READ,WRITE,TRIM)"),
        _spec("rate_process", "choice", "engine", choices=("linear", "poisson"),
              help="how I/Os are spread: linear (a fixed schedule) or poisson (exponential gaps around the rate)"),
        _spec("flow", "int", "engine", lo=0, hi=1000, help="the job's weight in its flow (0: none): jobs of one flow_id issue in "
              "the ratio of their weights"),
        _spec("flow_id", "int", "engine", lo=0, help="the flow the job belongs to (default 0)"),
        _spec("flow_sleep", "time_us", "engine", help="held back by its flow: drain, then sleep this long (a bare number is us; "
              "0: try again when another member issues)"),
        _spec("flow_watermark", "any", "recorded", help="deprecated in fio (ignored)"),
        _spec("latency_target", "time_us", "engine", help="search for the deepest queue whose I/Os meet this latency (a bare "
              "number is us)"),
        _spec("latency_window", "time_us", "engine", help="each depth is judged over this long (a bare number is us)"),
        _spec("latency_percentile", "str", "engine", help="share of I/Os that must meet the target (default 100)"),
        _spec("latency_run", "bool", "engine", help="keep adjusting the depth for the whole run"),
        _spec("rate_min", "rates", "recorded", help="fio fails a job below it; the simulator records it"),
        _spec("rate_iops_min", "ints", "recorded", help="fio fails a job below it; the simulator records it"),
        _spec("rate_cycle", "int", "recorded", help="the window of rate_min"),
        _spec("thinktime", "time_us", "engine", help="pause after thinktime_blocks I/Os (a bare number is us)"),
        _spec("thinktime_blocks", "int", "engine", lo=1, help="I/Os between pauses"),
        _spec("thinktime_spin", "time_us", "recorded", help="the part of thinktime spent spinning (the pause is the same)"),
        _spec("thinktime_blocks_type", "choice", "recorded", choices=("complete", "issue"),
              help="the simulator counts I/Os issued"),
        _spec("verify", "str", "ssdlab", help="check what the job wrote: the engine's checking mode, then a read-back"),
        _spec("do_verify", "bool", "ssdlab", help="read back after writing (default 1 with verify)"),
        _spec("verify_fatal", "bool", "recorded", help="the first mismatch stops the run anyway"),
        _spec("verify_backlog", "int", "recorded", help="the checking mode checks every I/O as it completes"),
        _spec("verify_backlog_batch", "int", "recorded"),
        _spec("verify_dump", "bool", "recorded"),
        _spec("verify_async", "int", "recorded"),
        _spec("verify_interval", "size", "recorded"),
        _spec("verify_offset", "size", "recorded"),
        _spec("verify_pattern", "str", "recorded", help="the engine checks data versions, not byte patterns"),
        _spec("verify_state_save", "bool", "recorded"),
        _spec("verify_state_load", "bool", "recorded"),
        _spec("verify_only", "bool", "ssdlab", help="only read back and check (nothing is written)"),
        _spec("verify_header_seed", "bool", "recorded"),
        _spec("experimental_verify", "bool", "recorded"),
        _spec("steadystate", "str", "ssdlab", help="stop at steady state: iops|iops_slope|bw|bw_slope:LIMIT[%]"),
        _spec("steadystate_duration", "time", "ssdlab", help="the window steady state is judged over"),
        _spec("steadystate_ramp_time", "time", "ssdlab", help="time before the window may start"),
        _spec("steadystate_check_interval", "time", "ssdlab", help="1 s (fio's default) only"),
        _spec("buffer_pattern", "str", "ssdlab", help="a repeated pattern: written as the engine's zeros (as compressible)"),
        _spec("filesize", "size", "ssdlab", help="size of each file: a region of the drive"),
        _spec("nrfiles", "int", "ssdlab", lo=1, hi=1_000_000, help="files: consecutive regions of filesize"),
        _spec("file_service_type", "str", "ssdlab", help="how I/O moves between the files"),
        _spec("offset_increment", "size", "ssdlab", percent_ok=True, help="each clone's offset moves by this"),
        _spec("fill_device", "bool", "ssdlab", help="write to the end of the drive"),
        _spec("write_lat_log", "str", "ssdlab", help="write NAME_lat.N.log, NAME_clat.N.log, NAME_slat.N.log"),
        _spec("write_clat_log", "str", "ssdlab", help="write NAME_clat.N.log"),
        _spec("write_slat_log", "str", "ssdlab", help="write NAME_slat.N.log"),
        _spec("percentile_list", "floats", "ssdlab", help="the percentiles reported"),
        _spec("lat_percentiles", "bool", "ssdlab", help="report total-latency percentiles"),
        _spec("slat_percentiles", "bool", "ssdlab", help="report submission-latency percentiles"),
        # -- accepted and recorded: no effect on a simulated drive ----------
        _spec("filename", "str", "recorded", help="the simulated drive is the target"),
        _spec("directory", "str", "recorded"),
        _spec("direct", "bool", "recorded", help="a simulated drive has no page cache"),
        _spec("buffered", "bool", "recorded", help="a simulated drive has no page cache"),
        _spec("invalidate", "bool", "recorded"),
        _spec("randrepeat", "bool", "recorded", help="simulated runs repeat for a seed anyway"),
        _spec("random_generator", "choice", "recorded", choices=("tausworthe", "lfsr", "tausworthe64")),
        _spec("overwrite", "bool", "recorded"),
        _spec("unlink", "bool", "recorded"),
        _spec("clat_percentiles", "bool", "ssdlab", help="report completion-latency percentiles (default on)"),
        _spec("unit_base", "choice", "recorded", choices=("0", "1", "8")),
    ]
    + [_spec(k, "any", "host", help=why) for k, why in HOST_OPTIONS.items()]
    + [
        _spec("dedupe_percentage", "int", "noted", lo=0, hi=100, help=_DEDUPE),
        _spec("dedupe_mode", "choice", "noted", choices=("repeat", "working_set"), help=_DEDUPE),
        _spec("dedupe_working_set_percentage", "int", "noted", lo=0, hi=100, help=_DEDUPE),
        _spec("dedupe_global", "bool", "noted", help=_DEDUPE),
    ]
    + [_spec(k, "any", "recorded", help="an option of the I/O engine") for k in ENGINE_OPTIONS]
)

#: fio's other names for options.
ALIASES: Dict[str, str] = {
    "readwrite": "rw",
    "wait_for_previous": "stonewall",
    "io_limit": "io_size",
    "ba": "blockalign",
    "threads": "thread",
    "rwmixwrite": "rwmixread",  # stored as 100 - value
    "blocksize": "bs",
    "fileoffset": "offset",
    "timeout": "runtime",
    "blocksize_range": "bsrange",
    "nr_files": "nrfiles",
    "fill_fs": "fill_device",
    "iodepth_batch_submit": "iodepth_batch",
    "iomem": "mem",
    "mem_align": "iomem_align",
    "disable_bw": "disable_bw_measurement",
    "ratemin": "rate_min",
    "ratecycle": "rate_cycle",
    "blocksize_unaligned": "bs_unaligned",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "ss": "steadystate",
    "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time",
}

#: fio options ssdlab knows but cannot simulate, with the reason.
REJECTED: Dict[str, str] = {
    "include": "include is not supported: put every option in the one job file",
    "sync": "synchronous writes (O_SYNC) are not simulated",
    "exec_prerun": "commands are not run on a simulated drive",
    "exec_postrun": "commands are not run on a simulated drive",
    "read_iolog": "iolog replay is not run from a job file yet: use 'ssdlab replay'",
    "write_iolog": "the simulator does not write iologs",
    "write_hist_log": "latency histograms are not logged by the engine",
    "log_offset": "logs are per-interval averages: there is no offset to log",
    "log_max_value": "logs are per-interval averages",
    "log_compression": "logs are written uncompressed",
    "bs_unaligned": "unaligned block sizes are not supported",
    "rw_sequencer": "rw_sequencer is not supported",
    "zonemode": "zoned modes stay refused until the simulated drives have zones",
    "zonesize": "zoned modes stay refused until the simulated drives have zones",
    "zonerange": "zoned modes stay refused until the simulated drives have zones",
    "zoneskip": "zoned modes stay refused until the simulated drives have zones",
    "zonecapacity": "zoned modes stay refused until the simulated drives have zones",
    "buffer_compress_chunk": "compressibility is per write in the engine",
    "trim_percentage": "trim after write is not simulated: use rw=trim",
    "trim_backlog": "trim after write is not simulated: use rw=trim",
}
