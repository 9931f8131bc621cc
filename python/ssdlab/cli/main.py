"""The parser of every command, and ``main``: one line per error, the exit
codes (0 ok, 1 failure, 2 bad input, 130 interrupted by Ctrl-C, 143 by
SIGTERM: both keep what finished, see :mod:`ssdlab.interrupt`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Optional, Sequence

from .. import _core, interrupt
from ..errors import DriveError, IntegrityError, SsdlabError
from ..outputs import lock_dir
from ..results import command_line, ssdlab_version
from . import drives, fio, fit, probe, run, suite, sweep, trace, twin
from .flags import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Parser, UsageError, output_dirs, prepare_outputs

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="ssdlab",
        description="An SSD review lab in software: simulated drives and the reviewers' tests. "
        "Units: MB/s = 1e6 B/s, GB = 1e9 B in results; k/m/g sizes are powers of 1024 (fio).",
    )
    p.add_argument("--version", action="version", version=f"ssdlab {ssdlab_version()} (engine {_core.version()})")
    sub = p.add_subparsers(
        dest="cmd",
        metavar="{run,replay,storage-bench,drives,drive,trace,tests,test,review,report,table,calibrate,stories,spec,fit,probe,"
        "twin-report,sweep,fio,fio-run,fio-check,fio-parse,fio-import}",
    )
    sub.required = True
    run.add_parsers(sub)
    drives.add_parsers(sub)
    trace.add_parsers(sub)
    suite.add_parsers(sub)
    fit.add_parsers(sub)
    probe.add_parsers(sub)
    sweep.add_parsers(sub)
    fio.add_parsers(sub)
    twin.add_parsers(sub)
    return p


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split())


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; returns its exit status. SIGTERM stops a command as
    Ctrl-C does (what finished is kept) and the status is 143 instead of 130."""
    interrupt.reset()
    with interrupt.sigterm_interrupts():
        rc = _main(argv)
    if rc == EXIT_INTERRUPTED:
        return interrupt.interrupted_exit_code()
    return rc


def _main(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        prepare_outputs(args)  # every output path was checked while parsing: create missing directories
        with contextlib.ExitStack() as held:
            for d in output_dirs(args):  # one run at a time in an output directory
                held.enter_context(lock_dir(d, command_line()))
            return int(args.func(args))
    except UsageError as e:
        print(f"ssdlab: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except (IntegrityError, DriveError) as e:
        print(f"ssdlab: error: {_one_line(str(e))} (reproduce: {command_line()})", file=sys.stderr)
        return EXIT_FAILURE
    except SsdlabError as e:
        print(f"ssdlab: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"ssdlab: interrupted{' (SIGTERM)' if interrupt.terminated() else ''}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): not an error of ours
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return EXIT_OK
    except OSError as e:
        print(f"ssdlab: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except BaseException as e:
        # A bug (a Python exception, or a Rust panic: pyo3's PanicException
        # derives from BaseException): one line unless asked for the traceback.
        if isinstance(e, (SystemExit, GeneratorExit)) or not (
            isinstance(e, Exception) or type(e).__name__ == "PanicException"
        ):
            raise
        if os.environ.get("SSDLAB_DEBUG"):
            raise
        print(
            f"ssdlab: internal error: {type(e).__name__}: {_one_line(str(e))} "
            f"(reproduce: {command_line()}; set SSDLAB_DEBUG=1 for the traceback; please report it)",
            file=sys.stderr,
        )
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
