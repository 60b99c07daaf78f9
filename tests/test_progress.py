"""The shared progress line: terminal redraws, whole lines elsewhere, quiet rules, ETA."""

from __future__ import annotations

import io

from auditor.progress import Progress, end_open_line, format_duration, progress_enabled


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_enabled_rules() -> None:
    assert progress_enabled(stream=_Tty()) is True
    assert progress_enabled(stream=io.StringIO()) is False  # not a terminal: quiet
    assert progress_enabled(stream=io.StringIO(), force=True) is True
    assert progress_enabled(stream=_Tty(), quiet=True, force=True) is False


def test_not_a_terminal_writes_whole_lines_at_most_every_interval() -> None:
    out, clock = io.StringIO(), _Clock()
    bar = Progress("ingest", 100, unit="chunks", stream=out, clock=clock, log_interval=10)
    bar.update(0)
    for step in range(1, 11):
        clock.now = step * 2.0
        bar.update(step * 10)
    bar.close()
    lines = out.getvalue().splitlines(keepends=True)
    assert all(line.endswith("\n") and "\r" not in line for line in lines)
    assert len(lines) == 3  # t=0, t=10, t=20 (finished); close repeats nothing
    assert lines[-1].startswith("ingest: 100/100 chunks (100.0%)")
    assert "ETA" in lines[1] and "ETA" not in lines[-1]


def test_eta_is_measured_after_a_slow_start() -> None:
    out, clock = io.StringIO(), _Clock()
    bar = Progress("x", 2000, stream=out, clock=clock, tty=False)
    clock.now = 60.0  # a minute loading a model before the first item
    bar.update(100)
    clock.now = 70.0  # then 100 items per second
    bar.update(1100)
    assert "100/s" in bar.line() and "ETA 0:09" in bar.line()


def test_a_second_count_has_its_own_rate_measured_after_a_slow_start() -> None:
    out, clock = io.StringIO(), _Clock()
    bar = Progress("audit", 400, unit="answers", stream=out, clock=clock, tty=False)
    clock.now = 60.0  # Ray and the models starting before the first answer
    bar.count("claims", 4)
    bar.update(1)
    clock.now = 70.0  # then 2 answers and 8 claims per second
    bar.count("claims", 80)
    bar.update(21)
    line = bar.line()
    assert "21/400 answers (5.2%) 2.0/s, 84 claims 8.0 claims/s, ETA 3:10" in line


def test_terminal_redraws_in_place_and_the_error_starts_a_new_line() -> None:
    out, clock = _Tty(), _Clock()
    bar = Progress("audit", 11, unit="answers", stream=out, clock=clock)
    bar.update(4)
    end_open_line()  # what the command line does before printing an error
    out.write("error: disk full\n")
    text = out.getvalue()
    assert text.startswith("\raudit: 4/11 answers")
    assert "\nerror: disk full\n" in text


def test_disabled_writes_nothing() -> None:
    out = io.StringIO()
    with Progress("x", 3, stream=out, enabled=False) as bar:
        bar.advance(3)
    assert out.getvalue() == ""


def test_format_duration() -> None:
    assert format_duration(5) == "0:05"
    assert format_duration(3725) == "1:02:05"
