"""Where a test runs. The suite describes a test as data (``ssdlab.suite``);
a backend runs that description on a target and returns the test's output
in the results schema (docs/results-schema.md: ``test``, ``skipped``,
``profile``, ``figures``, ``charts``, ``jobs``, ``wall_time_s``):

- the simulator (:mod:`.sim_runner`): the target is a drive; its states are
  preconditioned once and cloned, its phases run in the engine;
- fio on a real drive (:mod:`.fio_runner`): the target is a checked block
  device or test file (:mod:`.fio_target`); every phase is one fio run, and
  fio's JSON and logs become the results (:mod:`.fio_results`).

A measured phase becomes a results job the same way on both
(:func:`.jobs.job_doc`). An fio job file run on the simulator
(:mod:`ssdlab.fio.simulate`) uses the engine directly and is not a suite
backend.

Both meet in one small interface, :class:`Backend`: ``run(test, target)``.
"""

from __future__ import annotations

from .base import Backend
from .fio_runner import FioBackend
from .fio_target import DeviceTarget
from .sim_runner import SimBackend, SuiteRunner

__all__ = ["Backend", "SimBackend", "FioBackend", "SuiteRunner", "DeviceTarget"]
