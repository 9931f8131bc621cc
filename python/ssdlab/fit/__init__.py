"""Calibration by fitting: a controller profile's (or NAND
part's, or a user's drive file's) free parameters fitted jointly to every
calibration row of every drive that uses them, and cross-validation (fit
without one preset, predict it).

- :mod:`.params`: the free parameters (``free.toml``; a part's datasheet
  ranges) and the target of a fit (its drives and rows);
- :mod:`.evaluate`: the objective (row error / tolerance, "up to" ratings
  one-sided), many value sets simulated at once on :mod:`ssdlab.cluster`;
- :mod:`.study`: Optuna (CMA-ES or TPE), batches of trials in parallel,
  SQLite storage for ``--resume``;
- :mod:`.output`: the fitted values as a TOML diff with every row's residual;
- :mod:`.crossval`: ``ssdlab calibrate --cross-validate``.
"""

from .evaluate import Evaluation, evaluate_many, residual, score
from .params import FREE_PATH, FitError, FreeParameter, Target, drive_target, free_parameters, one_sided, profile_target
from .study import FitResult, fit, fit_many

__all__ = [
    "FREE_PATH", "FitError", "FreeParameter", "Target", "drive_target", "free_parameters", "one_sided",
    "profile_target", "Evaluation", "evaluate_many", "residual", "score", "FitResult", "fit", "fit_many",
]
