"""A digital twin of a drive, a package per stage: probe it (:mod:`.probe`:
the jobs as data, running them, probe.json), extract its internals
(:mod:`.features`), fit a drive file to what was measured (:mod:`.fit`), and
review both and compare them (:mod:`.report`); :mod:`.roundtrip` runs all of
it over every preset (docs/twin.md)."""
