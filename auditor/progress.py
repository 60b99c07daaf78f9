"""Progress of long commands on stderr, and quiet third-party libraries.

One line per task, ``ingest: 1,200/45,000 chunks (2.7%) 410/s, ETA 1:47``:

- on a terminal the line is redrawn in place (``\\r``) and ended with a newline when
  the task ends, so nothing written after it is glued onto it;
- when stderr is not a terminal it is quiet unless asked (``force=True``, the
  commands' ``--progress``), and then writes whole newline-terminated lines, at most
  one every ``log_interval`` seconds plus the last one;
- ``quiet=True`` (``--quiet``) always wins.

:func:`quiet_third_party` turns off the model-loading bars ("Loading weights") and
advisory log lines of transformers, huggingface_hub, sentence-transformers and tqdm;
the command line calls it at start-up, before any of them is imported.

Pure standard library: importing this module costs nothing.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import IO

ProgressFn = Callable[[int, int], None]
"""``progress(done, total)``: the callback form the library functions accept."""

_open_line: Progress | None = None
"""The terminal progress line currently drawn (not yet ended by a newline)."""


def progress_enabled(
    *, quiet: bool = False, force: bool = False, stream: IO[str] | None = None
) -> bool:
    """Whether to show progress: never with ``quiet``; always with ``force``; else only
    when ``stream`` (default stderr) is a terminal."""
    if quiet:
        return False
    if force:
        return True
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or unusual streams
        return False


def format_duration(seconds: float) -> str:
    """``m:ss`` (or ``h:mm:ss``) for a duration in seconds."""
    total = max(0, round(seconds))
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Progress of one task: ``label: done/total unit (pct) rate/s, ETA m:ss``.

    ``enabled=False`` makes every method a no-op (the object can always be used).
    ``total=None`` (unknown) shows the count and rate only. Use as a context manager
    or call :meth:`close`; :meth:`callback` adapts it to ``progress(done, total)``.
    """

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        unit: str = "",
        enabled: bool = True,
        stream: IO[str] | None = None,
        tty: bool | None = None,
        refresh: float = 0.2,
        log_interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = progress_enabled(stream=self.stream) if tty is None else tty
        self.refresh = refresh if self.tty else log_interval
        self.done = 0
        self._clock = clock
        self._start = clock()
        self._last_draw = -float("inf")
        self._closed = False
        self._drawn_done: int | None = None
        self.counts: dict[str, int] = {}
        """Other things counted alongside (``claims``), shown with their own rate."""
        self._ref_counts: dict[str, int] = {}
        self._ref: tuple[float, int] | None = None
        """(time, done) of the first update that had done something: the rate is measured
        from there, so a slow start (loading a model) does not skew the ETA."""

    # ------------------------------------------------------------------ updates
    def advance(self, n: int = 1) -> None:
        """``n`` more items done."""
        self.update(self.done + n)

    def update(self, done: int, total: int | None = None) -> None:
        """Set the number done (and the total, when it becomes known)."""
        if total is not None:
            self.total = total
        self.done = done
        if not self.enabled or self._closed:
            return
        now = self._clock()
        if self._ref is None and done > 0:
            self._ref = (now, done)
            self._ref_counts = dict(self.counts)
        finished = self.total is not None and done >= self.total
        if finished or now - self._last_draw >= self.refresh:
            self._draw(now)

    def count(self, name: str, n: int = 1) -> None:
        """``n`` more of another thing done alongside the main count (shown as
        ``N name, R name/s``, e.g. the claims of the answers audited); drawn with the
        next update."""
        self.counts[name] = self.counts.get(name, 0) + n

    def callback(self) -> ProgressFn:
        """This progress as a ``progress(done, total)`` callback."""
        return lambda done, total: self.update(done, total)

    def close(self, note: str | None = None) -> None:
        """Draw the final state (with ``note``) and end the line."""
        global _open_line
        if not self.enabled or self._closed:
            self._closed = True
            return
        self._closed = True
        line = self.line(self._clock())
        if note:
            line = f"{line} {note}"
        if self.tty:
            self.stream.write("\r" + line + "\x1b[K\n")
        elif note or self._drawn_done != self.done:
            self.stream.write(line + "\n")
        self.stream.flush()
        if _open_line is self:
            _open_line = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ text
    def line(self, now: float | None = None) -> str:
        """The progress text (no line ending)."""
        now = self._clock() if now is None else now
        elapsed = max(now - self._start, 1e-9)
        unit = f" {self.unit}" if self.unit else ""
        rate = self.done / elapsed
        rates = {name: n / elapsed for name, n in self.counts.items()}
        if self._ref is not None and now - self._ref[0] >= 1.0 and self.done > self._ref[1]:
            since = now - self._ref[0]
            rate = (self.done - self._ref[1]) / since
            rates = {
                name: (n - self._ref_counts.get(name, 0)) / since for name, n in self.counts.items()
            }
        if self.total is None:
            text = f"{self.label}: {self.done:,}{unit}"
        else:
            pct = 100.0 * self.done / self.total if self.total else 100.0
            text = f"{self.label}: {self.done:,}/{self.total:,}{unit} ({pct:.1f}%)"
        if self.done and elapsed >= 0.5:
            text += f" {rate:,.1f}/s" if rate < 100 else f" {rate:,.0f}/s"
            for name, n in self.counts.items():
                per_s = rates[name]
                text += f", {n:,} {name} " + (
                    f"{per_s:,.1f} {name}/s" if per_s < 100 else f"{per_s:,.0f} {name}/s"
                )
            if self.total is not None and self.done < self.total:
                text += f", ETA {format_duration((self.total - self.done) / rate)}"
        text += f", {format_duration(elapsed)} elapsed"
        return text

    def _draw(self, now: float) -> None:
        global _open_line
        self._last_draw = now
        if self.tty:
            self.stream.write("\r" + self.line(now) + "\x1b[K")
            _open_line = self
        else:
            self.stream.write(self.line(now) + "\n")
        self.stream.flush()
        self._drawn_done = self.done


def end_open_line() -> None:
    """End a terminal progress line still being drawn, so that what is written next
    (an error message) starts on a line of its own."""
    global _open_line
    line, _open_line = _open_line, None
    if line is not None and not line._closed:
        line.stream.write("\n")
        line.stream.flush()


def quiet_third_party() -> None:
    """Silence model-loading progress bars and advisory log lines of third-party
    libraries (transformers' "Loading weights", huggingface_hub downloads, tqdm bars of
    sentence-transformers), before or after they are imported. Errors still show."""
    for key, value in (
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
        ("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("TQDM_DISABLE", "1"),
    ):
        os.environ.setdefault(key, value)
    import logging

    for name in (
        "transformers",
        "sentence_transformers",
        "huggingface_hub",
        "torch",
        "safetensors",
        "faiss",
        "bm25s",
    ):
        logging.getLogger(name).setLevel(logging.ERROR)
    hf_logging = sys.modules.get("transformers.utils.logging")
    if hf_logging is not None:  # already imported: switch its bars off directly
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
