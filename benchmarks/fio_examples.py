#!/usr/bin/env python3
"""fio's own example job files on a simulated drive: the yardstick of
``ssdlab fio``.

For every ``*.fio`` in a checkout of fio's ``examples/`` directory, prints a
Markdown table row: the file, whether fio itself accepts it (``fio
--parse-only``, when fio is installed), and what ``ssdlab fio FILE --drive
PRESET`` does with it: runs (jobs reported, simulated and wall seconds) or
refuses it (the option and the reason, one line), each refusal sorted into
an honest limit (an engine without block I/O, zoned devices) or a gap. Then
the totals.

Run: python benchmarks/fio_examples.py FIO_EXAMPLES_DIR [--drive vertex3-120]
     [--timeout 600] [--out docs/fio-examples.md]
(Debian: ``apt-get source fio`` gives ``fio-3.33/examples``.) Each file runs
in its own ``ssdlab fio`` process with ``--output-format json``; ``${VAR}``s
in the files are left unset, as a user who did not set them would run them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Tuple

HONEST = ("cannot run on a simulated drive", "until the simulated drives have zones")


def fio_accepts(path: Path) -> str:
    fio = shutil.which("fio")
    if fio is None:
        return "?"
    with tempfile.TemporaryDirectory() as tmp:
        cp = subprocess.run([fio, "--parse-only", str(path)], capture_output=True, text=True, cwd=tmp, timeout=60)
    return "yes" if cp.returncode == 0 else "no"


def ssdlab_result(path: Path, drive: str, timeout_s: float) -> Tuple[str, str]:
    """(kind, text): kind is runs, honest, gap or timeout."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, "-m", "ssdlab", "fio", str(path), "--drive", drive, "--output-format", "json",
               "--output", str(out), "--log-dir", tmp]
        env = dict(os.environ, SSDLAB_PROGRESS="0")
        t0 = time.perf_counter()
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return "timeout", f"still running after {timeout_s:.0f} s"
        wall = time.perf_counter() - t0
        if cp.returncode == 0:
            doc = json.loads(out.read_text())
            sim_s = sum(int(j["ssdlab"]["duration_ns"]) for j in doc["jobs"]) / 1e9
            notes = len(doc["ssdlab"]["notes"])
            return "runs", f"runs: {len(doc['jobs'])} job report(s), {sim_s:.1f} s simulated, {wall:.1f} s wall, {notes} note(s)"
        err = [line for line in cp.stderr.splitlines() if line.startswith("ssdlab: error:")]
        text = err[0].replace("ssdlab: error: ", "") if err else (cp.stderr.strip().splitlines() or ["(no message)"])[-1]
        text = text.replace(str(path), path.name)
        kind = "honest" if any(h in text for h in HONEST) else "gap"
        return kind, ("refused: " if kind == "honest" else "refused (gap): ") + text


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples", type=Path, help="fio's examples/ directory")
    ap.add_argument("--drive", default="vertex3-120")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per file (default 600)")
    ap.add_argument("--out", type=Path, help="write the table here as well")
    args = ap.parse_args(argv)
    files = sorted(args.examples.glob("*.fio"))
    if not files:
        print(f"{args.examples}: no *.fio files", file=sys.stderr)
        return 2
    rows = ["| file | fio accepts | ssdlab fio --drive " + args.drive + " |", "|---|---|---|"]
    counts = {"runs": 0, "honest": 0, "gap": 0, "timeout": 0}
    fio_yes = 0
    for f in files:
        acc = fio_accepts(f)
        fio_yes += acc == "yes"
        kind, text = ssdlab_result(f, args.drive, args.timeout)
        counts[kind] += 1
        rows.append(f"| {f.name} | {acc} | {text.replace('|', '/')} |")
        print(rows[-1], flush=True)
    total = (f"{len(files)} files: fio accepts {fio_yes}; ssdlab runs {counts['runs']}, refuses {counts['honest']} for an "
             f"honest reason (an engine without block I/O, zoned devices) and {counts['gap']} for a gap not closed yet; "
             f"{counts['timeout']} did not finish within {args.timeout:.0f} s")
    print(total)
    if args.out:
        args.out.write_text("\n".join(rows) + "\n\n" + total + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
