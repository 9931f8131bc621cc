#!/usr/bin/env python3
"""Some of the ledger's claims (`ssdlab stories --only ...`) on copies of
presets with dotted changes (as `Drive.with_changes`): each claim's verdict
and what was found, then every figure the claims read. The presets not named
in a change run as they are, so a claim that compares a changed drive with
an unchanged one (the Vertex 3 against the Force F120) sees both.

    python benchmarks/stories_with_changes.py [--only S06,S07,S13]
        [--set vertex3-120,vertex3-240:controller.write_buffer_bytes=131072 ...]
        [--json FILE]

A change is PRESETS:KEY=VALUE, PRESETS a comma-separated list of preset ids
and VALUE parsed as JSON where it can be (true, 3e8), else a string. Runs in
this process (one worker), seed 1. Figures measured with it are in
docs/stories.md ("Not holding yet", S06, S07, S13, S14).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Mapping

from ssdlab.cluster import Runner, TestRequest
from ssdlab.drive import Drive
from ssdlab.suite.stories import CLAIMS
from ssdlab.suite.stories.figures import DocKey, values_of
from ssdlab.suite.stories.ledger import judge, requests_for, select

DEFAULT_CLAIMS = "S06,S07,S09,S10,S12,S13,S14,S15,S16,S19"


def parse_changes(items: List[str]) -> Dict[str, Dict[str, Any]]:
    """{preset id: {dotted key: value}} from PRESETS:KEY=VALUE items."""
    out: Dict[str, Dict[str, Any]] = {}
    for item in items:
        presets, sep, kv = item.partition(":")
        key, eq, text = kv.partition("=")
        if not sep or not eq or not presets or not key:
            raise SystemExit(f"--set: {item!r} is not PRESETS:KEY=VALUE, e.g. vertex3-120:controller.write_ack_at_die=true")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        for p in presets.split(","):
            out.setdefault(p.strip(), {})[key] = value
    return out


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=DEFAULT_CLAIMS, help=f"claims, comma-separated (default {DEFAULT_CLAIMS})")
    ap.add_argument("--set", action="append", default=[], metavar="PRESETS:KEY=VALUE", help="a change on copies of presets")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="also write the judged claims as JSON")
    a = ap.parse_args(argv)
    changes = parse_changes(a.set)
    claims = select(CLAIMS, a.only.split(","))
    requests, keys = requests_for(claims, a.seed)
    named = {k[0] for k in keys}
    unknown = sorted(set(changes) - named)
    if unknown:
        raise SystemExit(f"--set: {', '.join(unknown)} not read by these claims; they read {', '.join(sorted(named))}")
    copies: Dict[str, Drive] = {}
    for i, (drive_id, _) in enumerate(keys):
        if drive_id in changes:
            if drive_id not in copies:
                copies[drive_id] = Drive.load(requests[i].drive).with_changes(changes[drive_id])
            r = requests[i]
            requests[i] = TestRequest(copies[drive_id], r.test, seed=r.seed, scale=r.scale, only=r.only)
    docs: Dict[DocKey, Mapping[str, Any]] = {}
    with Runner(jobs=1, progress=False) as run:
        for i, doc in run.run_tests(requests):
            docs[keys[i]] = doc
    judged = [judge(c, docs) for c in claims]
    print(f"changes: {json.dumps(changes)}")
    for j in judged:
        print(f"{j.claim.id} {j.verdict:7s} {j.simulated}")
    figs = list(dict.fromkeys(f for c in claims for f in c.figures))
    values = values_of(docs, figs)
    for f in figs:
        v = values.get(f)
        print(f"  {f.drive:18s} {f.test:30s} {f.label:36s} {f.metric or '-':5s} {'-' if v is None else f'{v:.1f}'}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"changes": changes, "claims": [j.as_dict() for j in judged],
                       "figures": [[f.drive, f.test, f.label, f.metric, values.get(f)] for f in figs]}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
