"""The reviews behind a twin report: the drives not already complete in
OUT/results reviewed as ``ssdlab review --drive A --drive B`` does, the
saved results of the others reused."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

from ...drive import Drive
from ...results import load_results
from ...suite.scale import get_scale


def _saved_docs(out: Path) -> List[Dict[str, Any]]:
    results = out / "results"
    if not results.is_dir():
        return []
    try:
        return load_results([str(results)])
    except ValueError:
        return []


def _docs_of(saved: Sequence[Dict[str, Any]], drive: Drive, tests: Sequence[str], scale: str, seed: int) -> Dict[str, Dict[str, Any]]:
    """The saved results of this drive (hash), scale and seed, by test id."""
    out: Dict[str, Dict[str, Any]] = {}
    for d in saved:
        if (d["drive"]["hash"] == drive.hash and d.get("profile", "full") == scale
                and d["manifest"].get("seed") == seed and d["test"]["id"] in tests):
            out[d["test"]["id"]] = d
    return out


def _run_reviews(specs: Sequence[str], drives: Sequence[Drive], out: Path, tests: Sequence[str], scale: str, seed: int,
                 jobs: Optional[int], scheduler: Optional[str], progress: Optional[bool], command: str,
                 stream: TextIO) -> Tuple[List[Dict[str, Dict[str, Any]]], List[str], List[str]]:
    """Review the drives not already complete in OUT/results (as ``ssdlab
    review --drive A --drive B``); returns each drive's results by test id,
    and the ids of the drives run and reused."""
    from ...suite.review import drive_keys, review

    saved = _saved_docs(out)
    have = [_docs_of(saved, d, tests, scale, seed) for d in drives]
    need = [i for i, h in enumerate(have) if len(h) < len(tests)]
    ran = [drives[i].id for i in need]
    reused = [d.id for i, d in enumerate(drives) if i not in need]
    if need:
        # a drive's directory is its id, with its hash when the two share one: review one drive alone
        # only when it gets the same directory as in the pair, else both (the pair's layout is kept)
        keys = drive_keys(list(specs)) if len(specs) > 1 else [drives[0].id]
        if len(need) < len(specs) and any(keys[i] != drives[i].id for i in need):
            need = list(range(len(specs)))
            ran, reused = [d.id for d in drives], []
        for i in range(len(drives)):
            if i not in need and have[i]:
                stream.write(f"ssdlab twin-report: [{keys[i]}] complete results of this drive, scale and seed in "
                             f"{out / 'results'}: not run again\n")
        review([specs[i] for i in need], str(out), list(tests), jobs=jobs, seed=seed, scale=get_scale(scale),
               command=command, stream=stream, scheduler=scheduler, progress=progress)
        saved = _saved_docs(out)
        have = [_docs_of(saved, d, tests, scale, seed) for d in drives]
    else:
        stream.write(f"ssdlab twin-report: complete results of both drives in {out / 'results'}: nothing to run\n")
    stream.flush()
    return have, ran, reused
