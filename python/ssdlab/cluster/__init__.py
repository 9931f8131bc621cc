"""Many independent simulations at once: in this process, on a Dask
``LocalCluster`` sized to the machine, or on an existing Dask cluster.

A simulation is a pure function of its inputs: a drive (with its changes), a
seed, a suite scale and a test (with the measures wanted). The same inputs
give the same numbers however they run. :class:`TestRequest` names one test
on one drive; :meth:`Runner.run_tests` runs a list of them and yields each
test's results document as soon as its last run finishes.

How the work is cut (:func:`plan_tasks`): every run of every requested test
starts from a preconditioned state; the states of one drive (and seed and
scale) form a tree by their phases (secure erase, then a fill of a span
with a data pattern, then a second pass, a torture or a TRIM), and a drive's
tree is simulated in one task, each state once: a run gets a clone of its
state, the last user of a state gets the state itself, a state that builds
on another starts from a clone of it (``dirty`` from ``filled``), and the
first state is a clone of one freshly built simulator. A simulator cannot be
pickled, so it never leaves its task; tasks return measured phases. With
fewer drives than twice the workers, a drive's tree is cut into its fill
subtrees, one task each. Larger drives go first.

Where it runs (:class:`Runner`):

- ``jobs=1`` (or one task): in this process, one task after another, with
  the phase progress bar;
- default: a ``distributed.LocalCluster`` of ``jobs`` worker processes (the
  cores this process may use), one thread each;
- ``scheduler="tcp://host:8786"``: an existing cluster (``dask-scheduler``
  and ``dask-worker`` by hand, or ``dask-jobqueue`` on Slurm/PBS; see
  docs/cluster.md). Its workers need the same ssdlab installed.

Ctrl-C (or SIGTERM, :mod:`ssdlab.interrupt`) stops the run: the documents
already yielded are kept by the caller, the rest is cancelled, and the
LocalCluster's workers still simulating are stopped at once (within half a
second) rather than left to finish tasks nobody waits for. Tasks already
running on an existing cluster (``scheduler=``) are cancelled but finish on
their workers, which ssdlab does not own.
"""

from .plan import RunResult, Task, TestRequest, execute_task, plan_tasks
from .runner import SYNC, Runner, default_workers, run_tests

__all__ = ["TestRequest", "Task", "RunResult", "Runner", "plan_tasks", "execute_task", "run_tests", "default_workers", "SYNC"]
