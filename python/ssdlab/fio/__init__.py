"""fio, both ways: fio job files on simulated drives, and the suite on real
drives through fio.

1. :mod:`ssdlab.fio.jobfile`: fio job files parsed into typed options (every
   option either simulated, recorded, or an error naming file, line, option);
2. :mod:`ssdlab.fio.simulate`: a job file run on a simulated drive, written as
   fio's ``--output-format=json`` and its logs;
3. :mod:`ssdlab.fio.parse`: fio's JSON and logs (real or simulated) read into
   one typed structure;
4. :mod:`ssdlab.fio.run`: fio itself run on a file or block device, stoppable,
   its output parsed;
5. :mod:`ssdlab.fio.safety`: whether a target may be written at all;
6. :mod:`ssdlab.fio.iolog`: Storage Bench iologs written, scaled and bounded for
   a real target.

Errors are in :mod:`ssdlab.fio.errors`, each a subclass of an
:mod:`ssdlab.errors` class.

The commands (``ssdlab fio``, ``fio-run``, ``fio-check``, ``fio-parse``,
``fio-import``, ``trace iolog``) are in :mod:`ssdlab.cli.fio` and
:mod:`ssdlab.cli.trace`; each module's ``main`` is a standalone form of its
command. The review suite on a real drive (``ssdlab review --device``) is
:mod:`ssdlab.backends.fio_runner`.
"""

from __future__ import annotations

from .errors import FioNotFoundError, FioOutputError, FioRunError, JobFileError, UnsafeTargetError

__all__ = ["JobFileError", "FioOutputError", "FioNotFoundError", "FioRunError", "UnsafeTargetError"]
