"""The recorder's sample schedule on a made-up clock: a run whose stepping and samples
cost known CPU seconds (no Meep: the schedule only reads the clock and the run's time)."""

from __future__ import annotations

import math

import pytest

from reprolab.physics import run_samplers
from reprolab.physics.run_samplers import SAMPLING_FLOOR, SAMPLING_SHARE, SampleSchedule


class OneRank:
    """`meep`'s MPI reduction with one process."""

    @staticmethod
    def max_to_all(x: float) -> float:
        return x


class Run:
    """Meep's view of a run: its time; stepping and sampling advance a CPU clock."""

    def __init__(self, step_s_per_time: float, sample_s: float):
        self.t, self.cpu, self.taken = 0.0, 0.0, []
        self.step_s_per_time, self.sample_s = step_s_per_time, sample_s

    def meep_time(self) -> float:
        return self.t

    def sample(self, sim) -> None:
        self.cpu += self.sample_s
        self.taken.append(self.t)

    def go(self, until: float, period: float) -> SampleSchedule:
        schedule = SampleSchedule(OneRank, (self.sample,), period, clock=lambda: self.cpu)
        while self.t < until:  # Meep's at_every: a candidate each period
            self.t += period
            self.cpu += self.step_s_per_time * period
            schedule.step(self)
        self.t += 0.5 * period  # a stop between candidates
        self.cpu += 0.5 * self.step_s_per_time * period
        schedule.finish(self)
        return schedule


def test_dear_samples_take_their_share_of_a_long_run():
    """Samples as dear as 15 time units of stepping, 3.75 periods (Meep's cavity
    far-field example as measured: 2.32 s over 74 samples against 22.9 s over
    t = 11085): once a period they would cost 3.75 times the stepping; spaced, the whole
    run's sampling ends within the share, and only the floor's samples go beyond what
    the share pays."""
    run = Run(step_s_per_time=1.0, sample_s=15.0)
    schedule = run.go(until=10000, period=4.0)
    share = run.sample_s * len(run.taken) / (run.step_s_per_time * run.t)
    assert share <= SAMPLING_SHARE * 1.02, (share, len(run.taken))
    assert schedule.summary()["samples"] == len(run.taken)
    for until in (200, 2000, 10000):  # dearer still: the floor's samples and no more
        dear = Run(step_s_per_time=1.0, sample_s=54.0)
        dear.go(until=until, period=4.0)
        floor = SAMPLING_FLOOR * (1 + math.log(until / (SAMPLING_FLOOR * 4.0)))
        paid = SAMPLING_SHARE * until / dear.sample_s
        assert len(dear.taken) <= floor + paid + 2, (until, len(dear.taken))


def test_no_interval_is_longer_than_the_floor_allows():
    """However dear the samples, the last sample is never more than the run so far over
    SAMPLING_FLOOR back (to a candidate): a run stopped at any time keeps the samples a
    decay judgement needs."""
    run = Run(step_s_per_time=1.0, sample_s=1e4)
    run.go(until=3000, period=4.0)
    for a, b in zip(run.taken, run.taken[1:], strict=False):
        assert b - a <= max(4.0, b / SAMPLING_FLOOR) + 4.0, (a, b)
    short = Run(step_s_per_time=1.0, sample_s=1e4)
    short.go(until=40, period=4.0)
    assert len(short.taken) >= run_samplers.SPECTRUM_SAMPLES + 1


def test_cheap_samples_come_every_period_and_once_at_the_stop():
    run = Run(step_s_per_time=1.0, sample_s=1e-4)
    schedule = run.go(until=400, period=4.0)
    assert run.taken[:100] == pytest.approx([4.0 * (k + 1) for k in range(100)])
    assert len(run.taken) == 100  # the stop half a period on: no sample there
    assert schedule.summary()["share"] < SAMPLING_SHARE
