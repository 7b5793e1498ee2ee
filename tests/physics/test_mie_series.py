"""The Mie series of the sphere example (examples/papers/mie_sphere_2026/
make_paper_data.py), the truth its figure states, against sources independent of it:
published values (Bohren & Huffman's Appendix A example, Wiscombe's 1979 test cases),
the Rayleigh limit and the large-sphere limit; and the committed data is what the
script computes."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

FOLDER = Path(__file__).parents[2] / "examples" / "papers" / "mie_sphere_2026"


def _load():
    spec = importlib.util.spec_from_file_location("mie_paper_data", FOLDER / "make_paper_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MIE = _load()


def test_bohren_huffman_appendix_example():
    """m = 1.55, r = 0.525 µm, λ = 0.6328 µm: Q_sca = Q_ext = 3.10543 (Appendix A)."""
    import math

    x = 2 * math.pi * 0.525 / 0.6328
    q_sca, q_ext = MIE.mie_efficiencies(1.55, x)
    assert q_sca == pytest.approx(3.10543, abs=1e-5)
    assert q_ext == pytest.approx(3.10543, abs=1e-5)


@pytest.mark.parametrize(("x", "q"), [(10.0, 2.881999), (100.0, 2.094388), (1000.0, 2.013945)])
def test_wiscombe_test_cases(x, q):
    """m = 1.5 (lossless): Q_ext = Q_sca, Wiscombe's tabulated values to 1e-6."""
    q_sca, q_ext = MIE.mie_efficiencies(1.5, x)
    assert q_sca == pytest.approx(q, abs=2e-6) and q_ext == pytest.approx(q, abs=2e-6)


def test_rayleigh_and_large_sphere_limits():
    m = 1.5
    rayleigh = (m * m - 1) / (m * m + 2)
    for x in (0.01, 0.05):
        q_sca, _ = MIE.mie_efficiencies(m, x)
        assert q_sca == pytest.approx(8 / 3 * x**4 * rayleigh**2, rel=5e-3 * (x / 0.01) ** 2)
    # the extinction paradox: Q_ext -> 2 for a large sphere
    assert MIE.mie_efficiencies(m, 5000.0)[1] == pytest.approx(2.0, abs=0.01)


def test_an_absorbing_sphere_absorbs():
    """Q_abs of m = 1.5 + 0.1i at x = 1 as the miepython package (3.3.0) computes it;
    not a dependency: it requires numba, a JIT compiler, for a test-only cross-check."""
    q_sca, q_ext = MIE.mie_efficiencies(1.5 + 0.1j, 1.0)
    assert 0 < q_sca < q_ext  # Q_abs = Q_ext - Q_sca > 0 with Im m > 0
    assert q_ext - q_sca == pytest.approx(0.27363, abs=1e-4)


def test_committed_data_is_the_series():
    with open(FOLDER / "data" / "fig1_qsca.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["size_parameter", "Q_sca"]
    data = [(float(x), float(q)) for x, q in rows[1:]]
    assert len(data) == 39 and data[0][0] == 0.6 and data[-1][0] == 2.5
    for x, q in data:
        assert q == pytest.approx(MIE.mie_efficiencies(MIE.INDEX, x)[0], abs=1e-6)
