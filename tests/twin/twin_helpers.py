"""What the twin's tests share: a preset's internals as the probe should
find them, and a fill's per-second series built from rates."""

from __future__ import annotations

from typing import Any, Dict, List

from ssdlab import Drive


def preset_truth(drive_id: str) -> Dict[str, Any]:
    """The dies, write buffer, spare fraction and data reduction of a preset."""
    c = Drive.load(drive_id).config
    n = c["nand"]
    dies = n["channels"] * n["packages_per_channel"] * n["dies_per_package"]
    raw = dies * n["planes_per_die"] * n["blocks_per_plane"] * n["pages_per_block"] * n["page_size_bytes"]
    cap = c["drive"]["user_capacity_bytes"]
    return {"dies": dies, "write_buffer_bytes": c["controller"]["write_buffer_bytes"], "spare_fraction": raw / cap - 1,
            "data_reduction": bool(c.get("data_reduction", {}).get("enabled"))}


def fill(rates_mbps: List[float]) -> Dict[str, Any]:
    """A probe's 'fill' job: 128KB writes at these MB/s, one per second."""
    return {"fill": {"iops_series": [r * 1e6 / (128 * 1024) for r in rates_mbps], "interval_ms": 1000}}
