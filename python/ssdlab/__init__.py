"""ssdlab: an SSD review lab in software.

The pipeline, in the order data flows (one module each):
1. :mod:`ssdlab.drive`: drive descriptions (presets, files, dicts), validated by the engine;
2. :mod:`ssdlab.sim`: the simulated drive, which keeps its state between phases;
3. :mod:`ssdlab.results`: phase figures with fio's field names, series, manifest,
   and the results documents (schemas, save/load, figures.csv);
4. :mod:`ssdlab.trace`: trace statistics and the Storage Bench generators;
5. :mod:`ssdlab.suite`: the review suite: preconditioning states, every test as
   data, the runner, summaries, reviews, calibration;
6. :mod:`ssdlab.report`: the HTML report and its charts; :mod:`ssdlab.text`:
   what the commands print;
7. :mod:`ssdlab.cli`: the ``ssdlab`` command, one module per command group;
8. many simulations at once: :mod:`ssdlab.cluster` (the runner, on Dask),
   :mod:`ssdlab.fit` (calibration by fitting, cross-validation) and
   :func:`ssdlab.sweep` (design sweeps as a pandas DataFrame).

Units: MB/s = 1e6 B/s, GB = 1e9 B (reviewers' convention); sizes in jobs use
fio's suffixes (k, m, g = powers of 1024); every key we add names its unit.
"""

from __future__ import annotations

import os as _os

# numpy only carries result arrays here; keep its BLAS from starting threads
# that spin beside the simulator on small machines.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_v, "1")

from . import _core
from .drive import Drive, PresetInfo
from .errors import (
    ConfigError,
    DriveError,
    IntegrityError,
    MemoryLimitError,
    SsdlabError,
    TraceError,
    WorkloadError,
)
from .results import PhaseResult, ssdlab_version
from .sim import Simulator
from .sweep import sweep

__version__ = ssdlab_version()
ENGINE_VERSION = _core.version()

__all__ = [
    "Drive",
    "PresetInfo",
    "Simulator",
    "sweep",
    "PhaseResult",
    "SsdlabError",
    "ConfigError",
    "WorkloadError",
    "MemoryLimitError",
    "IntegrityError",
    "TraceError",
    "DriveError",
    "__version__",
    "ENGINE_VERSION",
]
