"""Generate the mode table (and its figure) of the disk_resonator_2026 example paper.

The paper is original (written for ReproLab's tests and demo); its numbers are the
exact resonances of an infinitely long dielectric cylinder (a 2D disk) of radius R and
index n in air, computed here with scipy only, independently of Meep and of any FDTD
method:

* TM polarisation (E along the cylinder axis, Ez). Inside, Ez = J_m(n k r) e^{i m phi};
  outside, the outgoing wave H^(1)_m(k r) e^{i m phi} (time dependence exp(-i omega t)).
  Ez and its radial derivative (Hphi) are continuous at r = R:

      n J_m'(n k R) H_m(k R) - J_m(n k R) H_m'(k R) = 0,

  the dispersion relation n J_m'/J_m = H_m'/H_m multiplied out (no poles). Its roots k
  are complex (the modes leak): Im k < 0.
* The whispering-gallery mode of order m is the root of lowest Re k (the first radial
  order), found by the secant method from the asymptotic estimate
  n k R ~ m + 1.856 (m/2)^(1/3) and then checked by the argument principle: no other
  root has a smaller Re k (the winding number of the function round the rectangle
  0 < Re kR < Re k1 R - delta, -1 < Im kR < 0 is zero, and one round k1).
* With R = a: f = Re(k) / 2 pi (c/a) and Q = Re(omega) / (2 |Im omega|) = Re k / (2 |Im k|).

make_paper_data.py writes the table rows into metadata.yaml (tables[0].rows, between
its marker comments) and draws figures/s1.png (Q against m, the frequencies written
beside the points: a supplementary figure, not a result the reproduction compares).

Usage:  python make_paper_data.py   (rewrites metadata.yaml's rows and figures/s1.png)
"""

from pathlib import Path

import numpy as np
from scipy import optimize, special

N_DISK = 2.2  # refractive index of the disk (non-dispersive, lossless)
RADIUS_A = 1.0  # disk radius, the unit of length a
M_ORDERS = (5, 6, 7, 8, 9)
AIRY_ZERO = 1.855757  # |a_1| / 2^(1/3): the first WGM's shift above m (Airy zero)
ROWS_BEGIN = "    # rows: written by make_paper_data.py (do not edit by hand)"
ROWS_END = "    # end of rows"


def dispersion(x, m: int, n: float = N_DISK):
    """The TM dispersion function of the cylinder at x = k R (complex), zero at a mode."""
    return n * special.jvp(m, n * x) * special.hankel1(m, x) - special.jv(m, n * x) * special.h1vp(
        m, x
    )


def winding_number(m: int, re_lo: float, re_hi: float, im_lo: float, im_hi: float) -> int:
    """Roots of `dispersion` inside the rectangle (argument principle, counter-clockwise)."""
    edge = 4000
    corners = [re_lo + 1j * im_lo, re_hi + 1j * im_lo, re_hi + 1j * im_hi, re_lo + 1j * im_hi]
    path = np.concatenate(
        [np.linspace(a, b, edge) for a, b in zip(corners, corners[1:] + corners[:1], strict=True)]
    )
    phase = np.unwrap(np.angle(dispersion(path, m)))
    return int(round((phase[-1] - phase[0]) / (2 * np.pi)))


def whispering_gallery_root(m: int) -> complex:
    """k R of the first-radial-order TM mode of order m, checked to be the lowest."""
    guess = (m + AIRY_ZERO * (m / 2) ** (1 / 3)) / N_DISK
    # the secant method (two complex starting points): scipy's newton in complex arithmetic
    root = complex(
        optimize.newton(
            lambda x: dispersion(x, m), guess - 0.01j, x1=1.01 * guess - 0.02j, tol=1e-14
        )
    )
    if not (root.imag < 0 and abs(dispersion(root, m)) < 1e-10):
        raise RuntimeError(f"m = {m}: the secant method did not converge to a mode ({root})")
    below = winding_number(m, 0.05, root.real - 0.05, -1.0, -1e-9)
    around = winding_number(m, root.real - 0.05, root.real + 0.05, -1.0, -1e-9)
    if below != 0 or around != 1:
        raise RuntimeError(
            f"m = {m}: {below} root(s) below kR = {root.real:.4f} and {around} round it; "
            "the root found is not the first radial order"
        )
    return root


def mode_table() -> list[dict]:
    """One row per m: frequency (c/a) to 4 significant digits, Q to 3."""
    rows = []
    for m in M_ORDERS:
        k = whispering_gallery_root(m) / RADIUS_A
        freq = k.real / (2 * np.pi)
        q = k.real / (2 * abs(k.imag))
        rows.append({"m": m, "frequency": float(f"{freq:.4g}"), "Q": float(f"{q:.3g}")})
    return rows


def write_rows(meta_path: Path, rows: list[dict]) -> None:
    """Replace the rows between the marker comments of metadata.yaml (the rest of the
    file, comments included, is the author's)."""
    text = meta_path.read_text()
    head, sep, rest = text.partition(ROWS_BEGIN + "\n")
    _, sep2, tail = rest.partition(ROWS_END + "\n")
    if not sep or not sep2:
        raise SystemExit(f"{meta_path}: the row markers {ROWS_BEGIN!r} / {ROWS_END!r} are missing")
    lines = [
        f"      - {{m: {r['m']}, frequency: {r['frequency']:.4f}, Q: {r['Q']:g}}}\n" for r in rows
    ]
    meta_path.write_text(head + sep + "".join(lines) + sep2 + tail)


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    here = Path(__file__).resolve().parent
    (here / "figures").mkdir(exist_ok=True)
    rows = mode_table()
    write_rows(here / "metadata.yaml", rows)
    for r in rows:
        print(f"m = {r['m']}: f = {r['frequency']:.4f} c/a, Q = {r['Q']:g}")

    plt.rcParams.update({"font.size": 11, "figure.dpi": 100})
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for r in rows:
        ax.semilogy([r["m"]], [r["Q"]], "ko")
        ax.annotate(
            f"{r['frequency']:.4f}",
            (r["m"], r["Q"]),
            textcoords="offset points",
            xytext=(6, -12),
            fontsize=9,
        )
    ax.set_xlabel("Azimuthal order m")
    ax.set_ylabel("Radiation Q")
    ax.set_xticks(list(M_ORDERS))
    ax.set_xlim(M_ORDERS[0] - 0.5, M_ORDERS[-1] + 0.8)
    ax.grid(True, alpha=0.3, which="both")
    ax.set_title(f"TM whispering-gallery modes, n = {N_DISK}, R = a")
    fig.tight_layout()
    fig.savefig(here / "figures" / "s1.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
