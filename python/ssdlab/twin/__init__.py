"""A digital twin of a drive: probe it (:mod:`.probe`), extract its internals
(:mod:`.features`), fit a drive file to what was measured (:mod:`.fit`), and
compare the twin with the drive (:mod:`.compare`, :mod:`.report`)."""
