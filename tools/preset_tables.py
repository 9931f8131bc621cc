"""Regenerate the "Per preset: simulated vs published" section of docs/presets.md.

Runs the `preset_check` example on every built-in preset (two at a time) and
turns its report into the Markdown tables of that section:

    python tools/preset_tables.py            # rewrite docs/presets.md in place
    python tools/preset_tables.py --print    # print the section instead
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIVES = ROOT / "python" / "ssdlab" / "drives"
DOC = ROOT / "docs" / "presets.md"
HEADING = "## Per preset: simulated vs published"
EXE = ROOT / "target" / "release" / "examples" / "preset_check"

ROW = re.compile(r"^(?P<test>\S.*?)\s{2,}(?P<value>-?[\d.]+)\s(?P<unit>MB/s|IOPS|W)\s*(?P<rest>.*)$")
PUB = re.compile(r"\|\s*(?P<kind>rated|measured)\s+(?P<value>[\d.]+)\s+\((?P<src>.*)\)\s+(?P<err>[+-][\d.]+%)\s+(?P<ok>ok|MISS)")


def fmt(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if unit == "IOPS" else f"{value:.1f} {unit}"


def section(report: str) -> str:
    lines = report.splitlines()
    m = re.match(r"== (\S+) \((.*)\)$", lines[0])
    if not m:
        raise SystemExit(f"unexpected preset_check output: {lines[0]!r}")
    out = [f"### {m.group(1)}", "", f"{m.group(2)}: {lines[1].strip()}.", ""]
    published, others = [], []
    for line in lines[2:]:
        r = ROW.match(line.strip())
        if not r:
            continue
        unit, value = r.group("unit"), float(r.group("value"))
        notes = re.search(r"\[(.*)\]", r.group("rest"))
        p = PUB.search(r.group("rest"))
        if p:
            published.append(f"| {r.group('test')} | {fmt(value, unit)} | {fmt(float(p.group('value')), unit)} "
                             f"({p.group('kind')}; {p.group('src')}) | {p.group('err')} | "
                             f"{'ok' if p.group('ok') == 'ok' else '**miss**'} |")
        else:
            others.append(f"| {r.group('test')} | {fmt(value, unit)} | {notes.group(1) if notes else ''} |")
    if published:
        out += ["| test | simulated | published | error | |", "|---|---|---|---|---|", *published, ""]
    else:
        out += ["No published figure in the calibration table.", ""]
    out += ["<details><summary>All figures</summary>", "", "| test | simulated | notes |", "|---|---|---|",
            *others, "", "</details>", ""]
    return "\n".join(out)


CACHE = ROOT / "target" / "preset_check"


def check(path: Path) -> str:
    cp = subprocess.run([str(EXE), str(path)], capture_output=True, text=True, cwd=ROOT)
    if cp.returncode != 0 and not cp.stdout.startswith("=="):
        raise SystemExit(f"preset_check {path.name} failed: {cp.stderr.strip()}")
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / f"{path.stem}.txt").write_text(cp.stdout)
    return cp.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print the section instead of rewriting docs/presets.md")
    ap.add_argument("--cached", action="store_true", help=f"reuse the reports of the last run ({CACHE.relative_to(ROOT)})")
    args = ap.parse_args()
    paths = sorted(DRIVES.glob("*.toml"))
    if args.cached:
        reports = [(CACHE / f"{p.stem}.txt").read_text() for p in paths]
    else:
        subprocess.run(["cargo", "build", "--release", "-q", "--example", "preset_check"], cwd=ROOT, check=True)
        with ThreadPoolExecutor(2) as pool:
            reports = list(pool.map(check, paths))
    body = "\n".join(section(r) for r in reports)
    doc = DOC.read_text()
    start = doc.index(HEADING)
    head = doc[start:].split("\n### ", 1)[0]
    new = doc[:start] + head.rstrip("\n") + "\n\n" + body
    if args.print:
        sys.stdout.write(body)
    else:
        DOC.write_text(new)
        print(f"{DOC.relative_to(ROOT)}: {len(paths)} presets", file=sys.stderr)


if __name__ == "__main__":
    main()
