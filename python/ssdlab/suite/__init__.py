"""The review suite: preconditioning states (``states``), the typed vocabulary
of a test description (``vocabulary``), the tests as data (``definitions``),
profiles, summaries, the review driver, calibration against published
figures, the spec sheet and the fio export. The backends that run a test
(the simulator, fio on a real drive) are in :mod:`ssdlab.backends`.

    definitions.TESTS -> backends (SuiteRunner.run_test, run_device_test) -> summary -> results files -> report
"""

from .definitions import TESTS, default_test_ids, get_test, test_ids
from .scale import FULL, QUICK, Scale, get_scale

__all__ = ["TESTS", "test_ids", "default_test_ids", "get_test", "Scale", "FULL", "QUICK", "get_scale"]
