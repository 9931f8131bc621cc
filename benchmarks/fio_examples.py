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
     [--timeout 600] [--out docs/fio-examples.md] [--only FILE.fio ...]
(--only: rerun those files and replace their rows in the --out table.)
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
from typing import Dict, List, Optional, Tuple

HONEST = ("cannot run on a simulated drive", "until the simulated drives have zones", "and refuses the empty value too",
          "the job file is written for a larger drive")


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
    ap.add_argument("--only", nargs="+", metavar="FILE.fio",
                    help="run only these files and replace their rows in the --out table (the rest of it is kept)")
    args = ap.parse_args(argv)
    files = sorted(args.examples.glob("*.fio"))
    if not files:
        print(f"{args.examples}: no *.fio files", file=sys.stderr)
        return 2
    head: List[str] = []
    old: Dict[str, str] = {}
    if args.only:
        if args.out is None or not args.out.exists():
            print("--only replaces rows of an existing table: give --out with it", file=sys.stderr)
            return 2
        missing = sorted(set(args.only) - {f.name for f in files})
        if missing:
            print(f"--only: not in {args.examples}: {', '.join(missing)}", file=sys.stderr)
            return 2
        lines = args.out.read_text().splitlines()
        head = lines[: next(i for i, ln in enumerate(lines) if ln.startswith("| file |"))]
        old = {ln.split("|")[1].strip(): ln for ln in lines if ln.startswith("| ") and ln.split("|")[1].strip().endswith(".fio")}
    rows = ["| file | fio accepts | ssdlab fio --drive " + args.drive + " |", "|---|---|---|"]
    counts = {"runs": 0, "honest": 0, "gap": 0, "timeout": 0}
    fio_yes = 0
    for f in files:
        if args.only and f.name not in args.only and f.name in old:
            rows.append(old[f.name])
            acc, text = (c.strip() for c in old[f.name].split("|")[2:4])
            kind = _kind_of(text)
        else:
            acc = fio_accepts(f)
            kind, text = ssdlab_result(f, args.drive, args.timeout)
            rows.append(f"| {f.name} | {acc} | {text.replace('|', '/')} |")
            print(rows[-1], flush=True)
        fio_yes += acc == "yes"
        counts[kind] += 1
    total = (f"{len(files)} files: fio accepts {fio_yes}; ssdlab runs {counts['runs']}, refuses {counts['honest']} for an "
             f"honest reason (an engine without block I/O, zoned devices, a file written for a larger drive, a value fio "
             f"refuses too) and {counts['gap']} for a gap not closed yet; "
             f"{counts['timeout']} did not finish within {args.timeout:.0f} s")
    print(total)
    if args.out:
        args.out.write_text("\n".join(head + rows) + "\n\n" + total + "\n")
    return 0


def _kind_of(text: str) -> str:
    """A kept row's kind, from how ``ssdlab_result`` wrote it."""
    if text.startswith("runs:"):
        return "runs"
    if text.startswith("refused (gap):"):
        return "gap"
    if text.startswith("refused:"):
        return "honest"
    return "timeout"


if __name__ == "__main__":
    sys.exit(main())
