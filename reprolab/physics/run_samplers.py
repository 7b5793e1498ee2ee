"""Samplers the run-time recorder (`reprolab.physics.as_built`) adds to a run as step
functions: the cell's field energy and how much the accumulated flux spectra still
change. What they leave is judged by `reprolab.physics.record_checks` (has the run
measured what it set out to?).

A sample can cost far more than a time step (the cell's energy is an integral over every
chunk, symmetry images included: 54 steps' worth on Meep's cavity far-field example
without symmetry, 270 with two mirrors), so `SampleSchedule` spaces the samples by what
they cost: a candidate comes every period of the slowest source and is taken only when
the run's sampling, with it, stays within `SAMPLING_SHARE` of its stepping so far, never
later than a `SAMPLING_FLOOR`-th of the run so far (every run keeps the samples a decay judgement
needs, whenever it stops), and once more at the stop where that is a period or more
after the last. The record keeps each sample's
time, so the check fits the decay rate from whatever spacing the run got."""

from __future__ import annotations

import time

# Spectra kept per run: enough to see their trend over the run's last samples.
SPECTRUM_SAMPLES = 6
# The most of the run's stepping time (process CPU) the samplers may take.
SAMPLING_SHARE = 0.1
# An interval never exceeds the run's elapsed time over this: whenever a run stops,
# its last SPECTRUM_SAMPLES changes span at most 1 - (5/6)^6 = 2/3 of it.
SAMPLING_FLOOR = SPECTRUM_SAMPLES


class EnergySampler:
    """Field energy in the whole cell at the sampled times: its peak and its last value."""

    def __init__(self, mp):
        self.peak, self.last, self.samples = 0.0, None, 0
        self.recent: list[float] = []  # the last SPECTRUM_SAMPLES: the tail's decay rate

        def step(sim):  # Meep counts a step function's arguments: a plain function
            box = mp.Volume(center=sim.geometry_center, size=sim.cell_size)
            e = abs(sim.field_energy_in_box(box=box))
            self.peak, self.last, self.samples = max(self.peak, e), e, self.samples + 1
            self.recent = [*self.recent[-(SPECTRUM_SAMPLES - 1) :], e]

        self.step = step


class SpectrumSampler:
    """How much the flux spectra the run accumulates (every DftFlux: flux boxes, mode
    monitors, the near surface the recorder adds to a near2far) still change: per sample,
    the largest change of any monitor's spectrum since the last sample (`changes`, the
    last SPECTRUM_SAMPLES kept), and how far the spectra moved up and down over those
    samples (`wander`), both relative to the largest flux any of them carries (a box's
    net flux in an empty cell is zero: its own scale is noise)."""

    def __init__(self, mp, get_fluxes):
        self.changes: list[float] = []
        self.samples = 0
        history: dict[int, list[list[float]]] = {}

        def step(sim):  # Meep counts a step function's arguments: a plain function
            moved, scale = [], 0.0
            for obj in getattr(sim, "dft_objects", []):
                if not isinstance(obj, mp.DftFlux) or getattr(obj, "swigobj", None) is None:
                    continue
                values = [float(v) for v in get_fluxes(obj)]
                kept = history.setdefault(id(obj), [])
                kept[:] = [v for v in kept[-(SPECTRUM_SAMPLES - 1) :] if len(v) == len(values)]
                kept.append(values)
                scale = max([scale, *map(abs, values)])
                if len(kept) > 1:
                    moved.append(max(abs(a - b) for a, b in zip(values, kept[-2], strict=True)))
            self.samples += 1
            if moved and scale:
                self.changes = [*self.changes[-(SPECTRUM_SAMPLES - 1) :], max(moved) / scale]

        def wander() -> float | None:
            scale = max((abs(v) for kept in history.values() for v in kept[-1]), default=0.0)
            found = [
                max(max(c) - min(c) for c in zip(*kept, strict=True))
                for kept in history.values()
                if len(kept) == SPECTRUM_SAMPLES
            ]
            return max(found) / scale if found and scale else None

        self.step, self.wander = step, wander


class SampleSchedule:
    """Takes `samplers` (step functions of a Simulation) at the candidates Meep offers
    (`mp.at_every(base_interval, schedule.step)`) when their cost allows, and at the stop
    (`finish`) unless the last sample was less than an interval before it. Costs are
    the process's CPU time; with several MPI ranks every rank decides from the largest
    figures over the ranks (`max_to_all`), so all take the same samples (a sample is a
    collective call)."""

    def __init__(self, mp, samplers, base_interval: float, clock=time.process_time):
        self.base_interval = base_interval
        self.times: list[float] = []  # the last SPECTRUM_SAMPLES + 1 sample times
        self.samples = 0
        self.sampling_s = self.stepping_s = 0.0
        self.largest_interval = 0.0
        self._start: float | None = None
        self._first: float | None = None  # stepping is counted from the first sample
        self._clock_at_last: float | None = None  # (not the structure's set-up)

        def take(sim, now: float) -> None:
            t0 = clock()
            for sample in samplers:
                sample(sim)
            t1 = clock()
            # one collective call per sample: every rank spaces by the slowest rank
            since = t0 - self._clock_at_last if self._clock_at_last is not None else 0.0
            cost, stepping = mp.max_to_all(t1 - t0), mp.max_to_all(since)
            self.sampling_s += cost
            self.stepping_s += stepping
            self._clock_at_last = t1
            if self.times:
                self.largest_interval = max(self.largest_interval, now - self.times[-1])
            self.times = [*self.times[-SPECTRUM_SAMPLES:], now]
            self.samples += 1
            self._first = now if self._first is None else self._first

        def step(sim):  # Meep counts a step function's arguments: a plain function
            now = float(sim.meep_time())
            if self._start is None:  # Meep's first candidate: one interval in
                self._start = max(0.0, now - base_interval)
            if self.due(now):
                take(sim, now)

        def finish(sim) -> None:
            # at least an interval on: Meep adds to a DFT only every few steps (its
            # decimation, up to half the fastest source period), so a change over a
            # shorter stretch could be one whole update, or none
            now = float(sim.meep_time())
            if not self.times or now - self.times[-1] >= base_interval:
                take(sim, now)

        self.step, self.finish = step, finish

    def due(self, now: float) -> bool:
        """Whether to sample at this candidate: the run's sampling so far plus one more
        sample stays within SAMPLING_SHARE of its stepping so far (what the floor spent
        early is paid back later), or the last sample lies a SAMPLING_FLOOR-th of the run
        so far back. A function of figures every rank shares."""
        if not self.times or self._first is None or self._start is None:
            return True
        if now - self.times[-1] >= (now - self._start) / SAMPLING_FLOOR:
            return True
        stepped = self.times[-1] - self._first
        if stepped <= 0 or not self.stepping_s:
            return True
        stepping_now = self.stepping_s / stepped * (now - self._first)
        one_more = self.sampling_s / self.samples
        return self.sampling_s + one_more <= SAMPLING_SHARE * stepping_now

    def summary(self) -> dict:
        """How the run was sampled, for the record (the check and a reader)."""
        return {
            "base_interval": self.base_interval,
            "samples": self.samples,
            "largest_interval": self.largest_interval,
            "sampling_cpu_s": round(self.sampling_s, 4),
            "stepping_cpu_s": round(self.stepping_s, 4),
            "share": round(self.sampling_s / self.stepping_s, 4) if self.stepping_s else None,
            "share_limit": SAMPLING_SHARE,
            "floor": f"interval <= run time so far / {SAMPLING_FLOOR}",
        }


def sample_interval(sim) -> float:
    """About one period of the slowest source (at least a few time steps)."""
    freqs = [getattr(s.src, "frequency", 0) or 0 for s in sim.sources or []]
    f = min([x for x in freqs if x > 0], default=1.0)
    return max(1.0 / f, 4.0 / sim.resolution)
