"""The report's section "The reviews' stories": the claims of the seed
reviews that concern the report's drives, judged on the report's own
results (the ledger of ``ssdlab stories``, docs/stories.md)."""

from __future__ import annotations

import html
from typing import Any, Dict, List, Mapping, Sequence

from ..drive import Drive
from ..errors import SsdlabError
from ..suite.stories import CLAIMS, NOT_RUN, PAGES, judge_docs

__all__ = ["stories_section"]


def _is_preset(doc: Mapping[str, Any], hashes: Dict[str, str]) -> bool:
    """A document of a preset as shipped (not a drive file, not with changes):
    the claims are about the presets."""
    drive_id = doc["drive"]["id"]
    if drive_id not in hashes:
        try:
            hashes[drive_id] = Drive.load(drive_id).hash
        except SsdlabError:
            hashes[drive_id] = ""
    return bool(hashes[drive_id]) and doc["drive"].get("hash") == hashes[drive_id]


def stories_section(docs: Sequence[Mapping[str, Any]]) -> str:
    """The section's HTML: a row per claim whose drives are all in the report
    (judged, or "not run" naming the figure missing), and how many concern
    other drives. Empty when no claim concerns these drives."""
    hashes: Dict[str, str] = {}
    presets = [d for d in docs if _is_preset(d, hashes)]
    ids = {d["drive"]["id"] for d in presets}
    mine = [c for c in CLAIMS if set(c.presets) <= ids]
    if not mine:
        return ""
    judged = judge_docs(mine, presets)
    esc = html.escape
    rows: List[str] = []
    for j in judged:
        c = j.claim
        rows.append(f"<tr><td>{esc(c.id)}</td><td>{esc(c.claim)}</td><td>{esc(c.page)}</td><td>{esc(c.published)}</td>"
                    f"<td>{esc(j.simulated)}</td><td class=\"v-{esc(j.verdict.replace(' ', '-'))}\">{esc(j.verdict)}</td></tr>")
    held = sum(1 for j in judged if j.verdict == "holds")
    not_run = sum(1 for j in judged if j.verdict == NOT_RUN)
    others = len(CLAIMS) - len(mine)
    pages = "; ".join(f"{k}: {v}" for k, v in PAGES.items())
    return (
        "<h2 id=stories>The reviews' stories</h2>"
        "<p>What the seed reviews measured on these drives, claim by claim, in ssdlab's words, against this report's "
        f"results (full scale only): {held} of {len(judged)} hold"
        + (f", {not_run} need a test or profile this report does not hold" if not_run else "")
        + (f"; {others} other claims concern drives not in this report" if others else "")
        + ". <code>ssdlab stories</code> runs every claim.</p>"
        "<div class=\"scroll\"><table><tr><th>id</th><th>claim</th><th>page</th><th>published</th><th>simulated</th>"
        "<th>verdict</th></tr>" + "".join(rows) + "</table></div>"
        f"<p class=note>Pages: {esc(pages)}.</p>"
    )
