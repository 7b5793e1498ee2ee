"""A band diagram against the Harminv modes of a run-time record built as dicts: a
square lattice on Γ-X-M-Γ with three bands, bands 2 and 3 degenerate at X."""

import math

from reprolab.physics import bands

PATH = [
    {"label": "Γ", "k": [0, 0, 0]},
    {"label": "X", "k": [0.5, 0, 0]},
    {"label": "M", "k": [0.5, 0.5, 0]},
    {"label": "Γ", "k": [0, 0, 0]},
]


def k_at(x):
    if x <= 1:
        return [0.5 * x, 0.0, 0.0]
    if x <= 2:
        return [0.5, 0.5 * (x - 1), 0.0]
    return [0.5 * (3 - x), 0.5 * (3 - x), 0.0]


def band(n, x):
    """Piecewise-linear bands: 1 from 0 at Γ to 0.35 at M; 2 and 3 meet at X (0.6)."""
    if n == 1:
        return 0.3 * x if x <= 1 else 0.3 + 0.05 * (x - 1) if x <= 2 else 0.35 * (3 - x)
    if n == 2:
        return (
            0.5 + 0.1 * x if x <= 1 else 0.6 + 0.02 * (x - 1) if x <= 2 else 0.62 - 0.12 * (x - 2)
        )
    return 0.8 - 0.2 * x if x <= 1 else 0.6 + 0.1 * (x - 1) if x <= 2 else 0.7 + 0.1 * (x - 2)


XS = [i * 0.25 for i in range(13)]  # the run's k points; Γ twice (x = 0 and 3)


def mode(f, error=1e-8, amp=0.5):
    return {"freq": f, "Q": 1e9, "decay": 0.0, "amp": amp, "error": error}


def record(drop=(), extra=None):
    """One Simulation for every k (run_k_points): each run has its own k_point; bands 2
    and 3 at X are one mode (Harminv returns a degenerate pair once). `drop`: (band, x)
    modes the run missed."""
    runs = []
    for x in XS[:-1]:  # x = 3 is Γ again: run once
        found = [mode(band(n, x)) for n in (1, 2, 3) if band(n, x) > 0 and (n, x) not in drop]
        if x == 1.0:
            found = [f for f in found if f["freq"] != 0.6] + [mode(0.6)]
        if extra and x in extra:
            found.append(extra[x])
        runs.append({"sim_time": 200.0, "k_point": k_at(x), "harminv": [{"modes": found}]})
    return [{"index": 0, "cylindrical": False, "k_point": k_at(3), "runs": runs}]


DIAGRAM = {"k_path": PATH, "bands": 3, "gaps": [{"below_band": 1, "lower": 0.35, "upper": 0.5}]}


def points(scale=None, labelled=True):
    scale = scale or {}
    xs = [i * 0.125 for i in range(25)]  # denser than the run, a point at x = 0 included
    return [
        (x, band(n, x) * scale.get(n, 1.0), n if labelled else None) for n in (1, 2, 3) for x in xs
    ]


def by_band(entry):
    return {b["band"]: b for b in entry["bands"]}


def test_projection_onto_the_path():
    assert bands.project([0, 0, 0], PATH) == [0.0, 3.0]
    assert bands.project([0.5, 0, 0], PATH) == [1.0]
    assert math.isclose(bands.project([0.25, 0.25, 0], PATH)[0], 2.5)
    assert bands.project([0.3, 0.1, 0], PATH) == []


def test_exact_diagram_is_success_with_omega_zero_and_a_degeneracy():
    entry = bands.compare_band_diagram("fig2", DIAGRAM, points(), record())
    assert entry["classification"] == "SUCCESS", entry["bands"]
    assert entry["kind"] == "band_diagram" and entry["missing"] == []
    assert {b["band"] for b in entry["bands"]} == {1, 2, 3}
    assert all(b["max_rel"] < 1e-9 for b in entry["bands"])
    assert by_band(entry)[1]["points"] == 13  # x = 0 and x = 3 both compared
    gamma = [p for p in entry["points"] if p["band"] == 1 and p["k_path"] in (0.0, 3.0)]
    assert len(gamma) == 2 and all(p["freq"] == 0.0 and "Gamma" in p["note"] for p in gamma)
    assert any("omega = 0" in n for n in entry["notes"])
    at_x = [p for p in entry["points"] if p["k_path"] == 1.0 and p["band"] in (2, 3)]
    assert len(at_x) == 2 and all(p["degenerate"] and p["freq"] == 0.6 for p in at_x)
    (gap,) = entry["gaps"]
    assert gap["class"] == "SUCCESS" and math.isclose(gap["measured"]["lower"], 0.35)
    assert math.isclose(gap["measured"]["upper"], 0.5)
    assert math.isclose(gap["measured"]["ratio"], 0.15 / 0.425)


def test_a_band_three_percent_off_is_not_success():
    entry = bands.compare_band_diagram("fig2", DIAGRAM, points({3: 1.03}), record())
    assert by_band(entry)[3]["class"] != "SUCCESS"
    assert math.isclose(by_band(entry)[3]["max_rel"], 0.03 / 1.03, rel_tol=1e-6)
    assert by_band(entry)[1]["class"] == by_band(entry)[2]["class"] == "SUCCESS"
    assert entry["classification"] != "SUCCESS"


def test_a_missed_mode_is_missing_never_dropped():
    entry = bands.compare_band_diagram("fig2", DIAGRAM, points(), record(drop={(2, 0.5)}))
    assert {"k_path": 0.5, "band": 2, "stated": band(2, 0.5)} in entry["missing"]
    assert by_band(entry)[2]["missing"] == 1 and by_band(entry)[2]["class"] != "SUCCESS"
    assert by_band(entry)[3]["class"] == "SUCCESS"  # band 3 is not shifted onto band 2
    assert entry["classification"] != "SUCCESS"


def test_unlabelled_points_take_the_band_of_their_mode():
    entry = bands.compare_band_diagram("fig2", DIAGRAM, points(labelled=False), record())
    assert entry["classification"] == "SUCCESS", entry["bands"]
    assert {b["band"] for b in entry["bands"]} == {1, 2, 3}
    for p in entry["points"]:
        assert math.isclose(p["stated"], band(p["band"], p["k_path"]), abs_tol=1e-12)


def test_spurious_and_untrusted_modes_do_not_shift_the_bands():
    spurious = {0.5: mode(0.4, error=1e-2), 1.5: mode(0.45, amp=0.5)}
    entry = bands.compare_band_diagram("fig2", DIAGRAM, points(), record(extra=spurious))
    assert entry["classification"] == "SUCCESS", entry["bands"]


def test_a_gap_three_percent_off_is_not_success():
    diagram = {**DIAGRAM, "gaps": [{"below_band": 1, "lower": 0.35 * 1.03, "upper": 0.5}]}
    entry = bands.compare_band_diagram("fig2", diagram, points(), record())
    (gap,) = entry["gaps"]
    assert gap["class"] != "SUCCESS" and entry["classification"] != "SUCCESS"
    assert math.isclose(gap["lower_rel"], 0.03 / 1.03, rel_tol=1e-6)


def test_a_run_off_the_path_is_noted_and_no_run_is_failure():
    off = [
        {
            "index": 0,
            "k_point": [0.3, 0.1, 0],
            "runs": [{"sim_time": 100.0, "harminv": [{"modes": [mode(0.3)]}]}],
        }
    ]
    entry = bands.compare_band_diagram("fig2", DIAGRAM, points(), off)
    assert entry["classification"] == "FAILURE"
    assert any("not on the stated k path" in n for n in entry["notes"])


def test_band_numbers_are_citable():
    entry = bands.compare_band_diagram("fig2", DIAGRAM, points({3: 1.03}), record())
    numbers = bands.band_numbers(entry)
    assert math.isclose(numbers["fig2/band3.max_rel"], 0.03 / 1.03, rel_tol=1e-6)
    assert numbers["fig2/gap1.stated_lower"] == 0.35
    assert math.isclose(numbers["fig2/gap1.lower"], 0.35)


def test_a_band_given_only_at_symmetry_points_is_compared_there_only():
    sparse = [(x, band(n, x), n) for n in (1, 2) for x in (0.0, 1.0, 2.0, 3.0)]
    entry = bands.compare_band_diagram("fig2", DIAGRAM, sparse, record())
    assert entry["classification"] == "SUCCESS", entry["bands"]
    assert {p["k_path"] for p in entry["points"]} == {0.0, 1.0, 2.0, 3.0}
    assert by_band(entry)[1]["points"] == 4  # never a straight line from Γ to X


def test_a_te_run_is_left_out_of_a_tm_diagram():
    tm = record()
    for sim in tm:
        sim.update(dimensions=2, sources=[{"component": 4}])  # Ez: TM
    te = record()
    for sim in te:
        sim.update(index=1, dimensions=2, sources=[{"component": 9}])  # Hz: TE
        for run in sim["runs"]:
            run["harminv"][0]["modes"] = [mode(0.41), mode(0.47), mode(0.52)]
    diagram = {**DIAGRAM, "polarization": "TM"}
    entry = bands.compare_band_diagram("fig2", diagram, points(), tm + te)
    assert entry["classification"] == "SUCCESS", entry["bands"]
    assert any("excite only TE modes" in n for n in entry["notes"])
    mixed = bands.compare_band_diagram(
        "fig2", {**DIAGRAM, "polarization": "none"}, points(), tm + te
    )
    # both kept: the TE modes interleave (the order-preserving match passes over them)
    assert 0.41 in {m["freq"] for m in mixed["measured"]}
    assert 0.41 not in {m["freq"] for m in entry["measured"]}
