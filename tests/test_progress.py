"""The progress bar: simulated time (or bytes), stderr only, off unless a
terminal or forced; and the manifest's command line."""

from __future__ import annotations

import io

from ssdlab import Simulator
from ssdlab.progress import ProgressBar
from ssdlab.results import command_line


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_is_off_for_a_pipe_and_on_for_a_terminal() -> None:
    pipe = io.StringIO()
    bar = ProgressBar("job", stream=pipe)
    assert not bar.enabled and bar(1, 2, 0, 0) is True and pipe.getvalue() == ""
    tty = _Tty()
    bar = ProgressBar("job", stream=tty, min_interval_s=0)
    assert bar.enabled
    bar(30 * 10**9, 60 * 10**9, 0, 0)
    assert "job: [" in tty.getvalue() and "50.0%" in tty.getvalue() and "30.0 of 60.0 s simulated" in tty.getvalue()
    bar.close()
    assert tty.getvalue().endswith("\r\x1b[K")


def test_size_bounded_phases_show_bytes_and_forcing_works() -> None:
    s = io.StringIO()
    bar = ProgressBar("fill", stream=s, force=True, min_interval_s=0)
    bar(10**9, 0, 25 * 10**9, 100 * 10**9)
    assert "25.0%" in s.getvalue() and "25.00 GB of 100.00 GB" in s.getvalue()


def test_one_bar_serves_a_sequence_of_phases() -> None:
    s = io.StringIO()
    bar = ProgressBar("", stream=s, force=True, min_interval_s=0)
    assert bar.phase("consistency: precondition filled") is bar
    bar(1, 4, 0, 0)
    bar.phase("consistency: default")(3, 4, 0, 0)
    text = s.getvalue()
    assert "consistency: precondition filled: [" in text and "25.0%" in text
    assert "consistency: default: [" in text and "75.0%" in text


def test_the_bar_is_throttled_but_sees_every_interval(small_drive: dict) -> None:
    s = io.StringIO()
    bar = ProgressBar("job", stream=s, force=True, min_interval_s=3600)
    Simulator(small_drive).run(rw="randwrite", bs="4k", iodepth=32, runtime="2s", log_avg_msec=100, progress=bar)
    assert bar.calls >= 15
    assert s.getvalue().count("\r") == 1


def test_the_command_line_is_reconstructed_and_quoted() -> None:
    assert command_line(["/usr/bin/ssdlab", "run", "--drive", "my drive.toml"]) == "ssdlab run --drive 'my drive.toml'"
    assert command_line(["/x/ssdlab/__main__.py", "drives"]) == "ssdlab drives"
    assert command_line(["bench.py", "--n", "3"]).endswith("bench.py --n 3")
