"""Probe hygiene on real targets: features outside physical ranges are errors of the probe, and a data-reduction
verdict on writes bound by the host's buffer generation is not measurable."""

from ssdlab.twin.features import extract
from ssdlab.twin.features.common import feature
from ssdlab.twin.features.physical import physical
from ssdlab.twin.probe.jobs import HOST_BUFFERS, host_buffer_job, randread_qd1, seqwrite_pattern

GB = 1_000_000_000


def test_negative_times_and_a_spare_above_the_capacity_are_probe_errors():
    F = {"second_page_read_us": feature(-3.5, "us", "medium", "16KB less 8KB"),
         "spare_fraction": feature(9.83, "", "low", "bytes written"),
         "gc_onset_at_least_bytes": feature(41 * GB, "B", "low", "no onset"),
         "read_latency_4k_us": feature(80.0, "us", "high", "QD1")}
    out = physical(F)
    assert out["second_page_read_us"]["value"] is None and out["second_page_read_us"]["confidence"] == "none"
    assert out["spare_fraction"]["value"] is None and out["gc_onset_at_least_bytes"]["value"] is None
    assert out["read_latency_4k_us"]["value"] == 80.0
    errors = out["probe_errors"]["value"]
    assert len(errors) == 2 and "negative" in errors[0] and "983% of the capacity: above 100%" in errors[1]


def test_the_extractor_leaves_a_negative_second_page_read_out():
    # 16KB reads faster per byte than 8KB ones by more than the 8KB takes: a cache, not a page read
    figs = {randread_qd1("8k"): {"mbps": 50.0}, randread_qd1("16k"): {"mbps": 400.0}}
    F = extract(figs, 4 * GB)
    assert F["second_page_read_us"]["value"] is None
    assert any("second_page_read_us" in e for e in F["probe_errors"]["value"])


def test_reducible_writes_faster_than_host_bound_incompressible_ones_are_not_reduction():
    figs = {seqwrite_pattern("incompressible"): {"mbps": 1500.0}, seqwrite_pattern("compressible"): {"mbps": 2200.0},
            HOST_BUFFERS: {"mbps": 1700.0}}
    F = extract(figs, 4 * GB)
    assert F["data_reduction"]["value"] is None and "host-bound" in F["data_reduction"]["how"]
    assert F["host_buffer_bytes_per_s"]["value"] == 1_700_000_000
    figs[HOST_BUFFERS] = {"mbps": 9000.0}
    assert extract(figs, 4 * GB)["data_reduction"]["value"] is True


def test_the_host_buffer_job_does_no_device_io():
    j = host_buffer_job(4 * GB)
    assert j.options["ioengine"] == "null" and j.stage not in ("clean", "fill", "cache")


def test_the_host_time_per_byte_is_taken_out_of_the_incompressible_rate():
    # the development machine's test file: 1,157 MB/s incompressible with a host making buffers at 2,097:
    # the drive's own rate is 2,581, faster than the compressible 2,796 / 1.2: no reduction
    figs = {seqwrite_pattern("incompressible"): {"mbps": 1157.0}, seqwrite_pattern("compressible"): {"mbps": 2796.0},
            HOST_BUFFERS: {"mbps": 2097.0}}
    F = extract(figs, 4 * GB)
    assert F["data_reduction"]["value"] is False
    assert F["compressible_stored_fraction"]["value"] == 1.0
