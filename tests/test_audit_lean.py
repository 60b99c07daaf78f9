"""The audit path's start-up trimmings: the command line collects garbage less often, and
restores the collector's thresholds around an audit's batches."""

from __future__ import annotations

import subprocess
import sys


def test_the_command_line_collects_less_often() -> None:
    """``auditor`` raises the collector's first threshold (start-up allocates millions of
    long-lived objects); the collector stays enabled."""
    code = (
        "import gc\nfrom auditor.cli import main\nfrom auditor.gctune import THRESHOLD0\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('GC', gc.isenabled(), gc.get_threshold()[0] == THRESHOLD0 == 20000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "GC True True" in out, out


def test_collecting_less_restores_the_thresholds() -> None:
    import gc

    from auditor.gctune import THRESHOLD0, collecting_less

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with collecting_less():
            assert gc.get_threshold() == (THRESHOLD0, 10, 10) and gc.isenabled()
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 10, 10)
        with collecting_less():  # never lowers a higher threshold
            assert gc.get_threshold()[0] == 50_000
    finally:
        gc.set_threshold(*before)
