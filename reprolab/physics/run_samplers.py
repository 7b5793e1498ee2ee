"""Samplers the run-time recorder (`reprolab.physics.as_built`) adds to a run as step
functions: the cell's field energy and how much the accumulated flux spectra still
change, at about one period of the slowest source. What they leave is judged by
`reprolab.physics.record_checks` (has the run measured what it set out to?)."""

from __future__ import annotations

# Spectra kept per run: enough to see their trend over the run's last periods.
SPECTRUM_SAMPLES = 6


class EnergySampler:
    """Field energy in the whole cell at regular times: its peak and its last value."""

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


def sample_interval(sim) -> float:
    """About one period of the slowest source (at least a few time steps)."""
    freqs = [getattr(s.src, "frequency", 0) or 0 for s in sim.sources or []]
    f = min([x for x in freqs if x > 0], default=1.0)
    return max(1.0 / f, 4.0 / sim.resolution)
