"""The ``ssdlab`` command (also ``python -m ssdlab``).

Commands:
  ssdlab run --drive ID_OR_FILE --rw randwrite --bs 4k --iodepth 32 --runtime 60s ...
  ssdlab replay FILE | --generated WORKLOAD [--mode as-recorded|as-fast-as-possible]
  ssdlab storage-bench --bench WORKLOAD [--full]
  ssdlab drives
  ssdlab drive show ID_OR_FILE
  ssdlab trace stats FILE [--format ...] | --generated WORKLOAD
  ssdlab trace generate WORKLOAD --out FILE
  ssdlab trace workloads
  ssdlab tests
  ssdlab test TEST_ID --drive ID_OR_FILE [--quick] [--json]
  ssdlab review --drive A --drive B ... --out DIR [--jobs N] [--tests ...] [--quick]
  ssdlab report RESULTS... --out DIR
  ssdlab calibrate [--drive ID ...] [--kind measured|rated] [--table FILE] [--json]
  ssdlab stories [--only S14,S15] [--json | --csv]
  ssdlab spec ID_OR_FILE [--json]
  ssdlab fio JOBFILE --drive ID_OR_FILE [--output F] [--log-dir D] [--parse-only]
  ssdlab fio-run JOBFILE --target FILE_OR_DEV [--destroy-data=DEV] | fio-check TARGET | fio-parse OUTPUT.json
  ssdlab review --device FILE_OR_DEV [--destroy-data=DEV] [--size 1g] --out DIR [--tests ...] [--quick]

One module per command group (``run``: run/replay/storage-bench; ``drives``;
``trace``; ``suite``: tests/test/review/report/calibrate/stories/spec; ``fio``: fio job
files on simulated drives, fio on real targets, ``review --device``); the flags
several commands share and their converters are in ``flags``; what the
commands print is made by :mod:`ssdlab.text`.

Sizes take fio's suffixes: k, m, g, t are powers of 1024 (``8g`` = 8 GiB),
also written ``kb``/``KiB``/``GB``...: ``--capacity 120GB`` means 120 GiB as in
fio; give bytes (``120000000000``) for a decimal 120GB. Results use MB/s =
1e6 B/s and GB = 1e9 B. Bad input prints one line ``ssdlab: error: ...`` and
exits 2; every output path (``--output``, ``--out``, ``--log-dir``,
``--storage``) is checked before anything runs and its missing directories
are created (``flags``). Ctrl-C prints what finished and exits 130; SIGTERM
does the same and exits 143 (:mod:`ssdlab.interrupt`).
"""

from .main import build_parser, main

__all__ = ["main", "build_parser"]
