"""Material models as Meep builds them: a background permittivity and Drude/Lorentz
susceptibility terms, as plain JSON.

A model (`{"eps_inf", "terms", "unit_length_um", "tolerance", ...}`) is what the material
gate approves and what the built medium is compared with. Its frequencies and damping
rates are in Meep's units for the length unit `unit_length_um` (c / a); each term is

    lorentzian: sigma f0^2 / (f0^2 - f^2 - i f gamma)      drude: sigma f0^2 / (-f^2 - i f gamma)

with Meep's sign (Im eps > 0 is loss), so `LorentzianSusceptibility(frequency=f0,
gamma=gamma, sigma=sigma)` builds it exactly. Three ways to one: a constant index, a
dye's or exciton's oscillator from the paper's own parameters, and a fit of tabulated
n, k over the paper's band whose largest n and k errors become the model's tolerance.
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from reprolab.errors import InputFileError

# Where a material model's parameters come from (errors name it).
PLAN_FIELD = "plan.json planned_materials"
# h c in eV µm: a photon of E eV has a wavelength of HC_EV_UM / E µm.
HC_EV_UM = 1.239841984
# A fit stops adding terms once both of its largest errors are under this.
FIT_TARGET_ERROR = 0.02
FIT_MAX_TERMS = 4
FIT_SAMPLES = 80


def constant_index(n: float) -> dict:
    if not n or n <= 0:
        raise InputFileError(PLAN_FIELD, f"constant_index needs a positive index, got {n!r}")
    return _model(n * n, [], 1.0, 0.0, 0.0, "constant index")


def lorentz_oscillator(
    background_eps: float,
    energy_ev: float,
    gamma_ev: float,
    strength: float | None = None,
    plasma_energy_ev: float | None = None,
) -> dict:
    """eps(w) = eps_b + f w0^2 / (w0^2 - w^2 - i gamma w), the form papers state for a
    dye or an exciton (hbar w0, hbar gamma in eV; f the oscillator strength), or with
    `plasma_energy_ev` (hbar wp) the form wp^2 / (w0^2 - w^2 - i gamma w), f = (wp/w0)^2.

    In Meep's units for a = 1 µm: f0 = E0 / hc, gamma = hbar gamma / hc (Meep's gamma
    multiplies f, not w: gamma_w w = 2 pi gamma_f f . 2 pi f), sigma = f."""
    if (strength is None) == (plasma_energy_ev is None):
        raise InputFileError(
            PLAN_FIELD,
            "a Lorentz oscillator needs exactly one of `strength` (f, dimensionless) or "
            "`plasma_energy_ev` (hbar wp)",
        )
    if energy_ev <= 0 or gamma_ev < 0:
        raise InputFileError(
            PLAN_FIELD,
            f"a Lorentz oscillator needs energy_ev > 0 and gamma_ev >= 0, got "
            f"{energy_ev!r} and {gamma_ev!r}",
        )
    sigma = strength if strength is not None else (plasma_energy_ev / energy_ev) ** 2
    term = {
        "kind": "lorentzian",
        "frequency": energy_ev / HC_EV_UM,
        "gamma": gamma_ev / HC_EV_UM,
        "sigma": float(sigma),
    }
    return _model(background_eps, [term], 1.0, 0.0, 0.0, "Lorentz oscillator (paper)")


def _model(eps_inf, terms, unit_um, max_dn, max_dk, how, **extra) -> dict:
    return {
        "eps_inf": float(eps_inf),
        "terms": terms,
        "unit_length_um": float(unit_um),
        "tolerance": {"n": float(max_dn), "k": float(max_dk)},
        "how": how,
        **extra,
    }


def term_chi(term: dict, f):
    """One susceptibility term at frequency f (same unit as the term's)."""
    f0, g, s = term["frequency"], term["gamma"], term["sigma"]
    if term["kind"] == "drude":
        return -s * f0 * f0 / (f * (f + 1j * g))
    return s * f0 * f0 / (f0 * f0 - f * f - 1j * g * f)


def epsilon(model: dict, wavelength_um):
    """The model's complex permittivity at vacuum wavelengths in µm (Meep's sign)."""
    f = model["unit_length_um"] / np.asarray(wavelength_um, dtype=float)
    eps = np.full(f.shape, model["eps_inf"], dtype=complex)
    for t in model["terms"]:
        eps = eps + term_chi(t, f)
    cond = model.get("conductivity") or 0.0
    if cond:
        eps = eps * (1 + 1j * cond / (2 * np.pi * f))
    return eps


def n_k(eps) -> tuple[np.ndarray, np.ndarray]:
    """n and k (k >= 0 for a passive medium) of permittivities."""
    root = np.sqrt(np.asarray(eps, dtype=complex))
    root = np.where(root.imag < 0, -root, root)
    return np.abs(root.real), root.imag


def index_error(model: dict, wavelength_um, n, k) -> tuple[float, float]:
    """Largest |n_model - n| and |k_model - k| over the given points."""
    nm, km = n_k(epsilon(model, wavelength_um))
    return float(np.max(np.abs(nm - n))), float(np.max(np.abs(km - k)))


def fit_drude_lorentz(
    wavelength_um,
    n,
    k,
    band_um: tuple[float, float],
    *,
    max_terms: int = FIT_MAX_TERMS,
    source: str = "",
) -> dict:
    """Drude-Lorentz terms fitted to tabulated n, k over `band_um` (vacuum wavelengths in
    µm), for a = 1 µm; the model's tolerance is the fit's largest error in n and in k on
    the data inside the band (every tabulated point there, not only the fit's samples).

    Every term has sigma >= 0 and gamma >= 0, so the fitted medium is passive (Im eps >= 0
    at every frequency). Terms are added one by one (a non-negative least-squares pick
    from a dictionary of candidate poles, then a bounded nonlinear refinement of all)
    until both errors are under FIT_TARGET_ERROR or `max_terms` is reached."""
    wl, n, k = (np.asarray(x, dtype=float) for x in (wavelength_um, n, k))
    order = np.argsort(wl)
    wl, n, k = wl[order], n[order], k[order]
    lo, hi = sorted(band_um)
    if lo < wl[0] * (1 - 1e-9) or hi > wl[-1] * (1 + 1e-9):
        raise InputFileError(
            PLAN_FIELD,
            f"band {lo:g}-{hi:g} µm is outside the data's range {wl[0]:g}-{wl[-1]:g} µm "
            f"({source or 'tabulated n, k'}): choose a band inside it or another source",
        )
    grid = np.geomspace(lo, hi, FIT_SAMPLES)
    ng, kg = np.interp(grid, wl, n), np.interp(grid, wl, k)
    f = 1 / grid

    best = _fit_terms(f, ng, kg, max_terms)
    if best is None:
        raise InputFileError(PLAN_FIELD, f"no Drude-Lorentz terms fit the data ({source})")
    fitted = best[1]
    model = _model(fitted["eps_inf"], fitted["terms"], 1.0, 0.0, 0.0, "Drude-Lorentz fit")
    inside = (wl >= lo * (1 - 1e-9)) & (wl <= hi * (1 + 1e-9))
    pts_wl = np.concatenate([grid, wl[inside]])
    pts_n = np.concatenate([ng, n[inside]])
    pts_k = np.concatenate([kg, k[inside]])
    dn, dk = index_error(model, pts_wl, pts_n, pts_k)
    model["tolerance"] = {"n": dn, "k": dk}
    model["fit"] = {"band_um": [lo, hi], "max_dn": dn, "max_dk": dk, "source": source}
    return model


def _fit_terms(f, ng, kg, max_terms: int):
    """(largest error, model) of the best fit with up to `max_terms` terms."""
    from scipy.optimize import least_squares, nnls

    target = (ng + 1j * kg) ** 2
    weight = 1 / (2 * np.abs(ng + 1j * kg))  # an error in eps is about 2 N dN
    cands = _candidates(f.min(), f.max())
    cols = np.array([term_chi({**t, "sigma": 1.0}, f) for t in cands]).T
    cols = np.hstack([np.ones((len(f), 1)), cols])  # eps_inf - 1 >= 0 is a column too
    a = np.vstack([np.real(cols * weight[:, None]), np.imag(cols * weight[:, None])])
    scale = np.linalg.norm(a, axis=0)

    def pick(resid, count):
        """The `count` strongest terms of a non-negative fit of `resid`, and eps_inf."""
        b = np.concatenate([np.real(resid * weight), np.imag(resid * weight)])
        x, _ = nnls(a, b)
        top = [i for i in np.argsort(-(x * scale))[: count + 1] if i > 0 and x[i] > 0]
        return 1.0 + x[0], [{**cands[i - 1], "sigma": float(x[i])} for i in top[:count]]

    def refine(eps_inf, terms):
        lb, ub = _bounds(terms, f)

        def residual(p):
            nm, km = n_k(_eps_terms(_unpack(p, terms), f))
            return np.concatenate([nm - ng, km - kg])

        p0 = np.clip(_pack(eps_inf, terms), lb, ub)
        sol = least_squares(residual, p0, bounds=(lb, ub), x_scale="jac")
        return float(np.max(np.abs(sol.fun))), _unpack(sol.x, terms)

    best = None
    for count in range(1, max(1, max_terms) + 1):
        # two starts: the strongest poles of one non-negative fit of the whole data, and
        # the best model so far plus the pole that best explains what it leaves
        starts = [pick(target - 1.0, count)]
        if best is not None and len(best[1]["terms"]) == count - 1:
            eps0, extra = pick(target - _eps_terms(best[1], f), 1)
            starts.append((best[1]["eps_inf"], best[1]["terms"] + extra))
        for eps_inf, terms in starts:
            if terms:
                found = refine(eps_inf, terms)
                best = found if best is None or found[0] < best[0] else best
        if best is not None and best[0] < FIT_TARGET_ERROR:
            break
    return best


def _candidates(f_lo: float, f_hi: float) -> list[dict]:
    """Poles to start from: Drude terms of several damping rates, Lorentz terms from
    well below to well above the band with several widths."""
    out = [
        {"kind": "drude", "frequency": 1.0, "gamma": g}
        for g in np.geomspace(f_lo * 1e-3, f_hi * 2, 12)
    ]
    for f0 in np.geomspace(f_lo / 4, f_hi * 4, 28):
        for r in (0.03, 0.1, 0.3, 1.0, 3.0):
            out.append({"kind": "lorentzian", "frequency": float(f0), "gamma": float(r * f0)})
    return out


def _pack(eps_inf: float, terms: list[dict]) -> np.ndarray:
    p = [eps_inf]
    for t in terms:
        p += [math.log(t["frequency"]), math.log(max(t["gamma"], 1e-9)), t["sigma"]]
    return np.array(p)


def _unpack(p, terms: list[dict]) -> dict:
    out = []
    for i, t in enumerate(terms):
        lf, lg, s = p[1 + 3 * i : 4 + 3 * i]
        out.append(
            {
                "kind": t["kind"],
                "frequency": float(math.exp(lf)) if t["kind"] != "drude" else 1.0,
                "gamma": float(math.exp(lg)),
                "sigma": float(s),
            }
        )
    return {"eps_inf": float(p[0]), "terms": out}


def _bounds(terms: list[dict], f) -> tuple[np.ndarray, np.ndarray]:
    """eps_inf in [1, 20]; poles within 1/10..10x the band; sigma >= 0."""
    lb, ub = [1.0], [20.0]
    for t in terms:
        if t["kind"] == "drude":  # f0 is 1 by convention: sigma carries the plasma term
            lf = (0.0, 1e-12)
        else:
            lf = (math.log(f.min() / 10), math.log(f.max() * 10))
        lb += [lf[0], math.log(f.min() * 1e-5), 0.0]
        ub += [lf[1], math.log(f.max() * 10), np.inf]
    return np.array(lb), np.array(ub)


def _eps_terms(model: dict, f):
    eps = np.full(np.shape(f), model["eps_inf"], dtype=complex)
    for t in model["terms"]:
        eps = eps + term_chi(t, f)
    return eps


def rescaled(model: dict, unit_length_um: float) -> dict:
    """The same medium in Meep's units for another length unit a (frequencies scale
    with a)."""
    s = unit_length_um / model["unit_length_um"]
    terms = [
        {**t, "frequency": t["frequency"] * s, "gamma": t["gamma"] * s} for t in model["terms"]
    ]
    cond = (model.get("conductivity") or 0.0) * s
    return {**model, "terms": terms, "conductivity": cond, "unit_length_um": unit_length_um}


def from_meep_medium(medium, unit_length_um: float = 1.0) -> dict:
    """The model of a `meep.Medium` (isotropic part: the diagonal's first entry),
    built for length unit a = `unit_length_um`."""
    terms = []
    for s in medium.E_susceptibilities or []:
        kind = "drude" if type(s).__name__.startswith("Drude") else "lorentzian"
        terms.append(
            {
                "kind": kind,
                "frequency": float(s.frequency),
                "gamma": float(s.gamma),
                "sigma": float(s.sigma_diag.x),
            }
        )
    vr = getattr(medium, "valid_freq_range", None)
    valid = None
    if vr is not None and math.isfinite(vr.max) and vr.max < 1e19 and vr.min > 0:
        valid = [unit_length_um / float(vr.max), unit_length_um / float(vr.min)]
    return {
        **_model(float(medium.epsilon_diag.x), terms, unit_length_um, 0.0, 0.0, "meep medium"),
        "conductivity": float(medium.D_conductivity_diag.x),
        "valid_range_um": valid,
    }


def compare(built: dict, approved: dict, wavelength_um) -> dict:
    """The largest |n| and |k| difference of two models at the given wavelengths, where
    it is, and whether it is within the approved model's tolerance (plus a floor for
    rounding: RECORD_ROUNDING)."""
    wl = np.atleast_1d(np.asarray(wavelength_um, dtype=float))
    nb, kb = n_k(epsilon(built, wl))
    na, ka = n_k(epsilon(approved, wl))
    dn, dk = np.abs(nb - na), np.abs(kb - ka)
    tol = approved.get("tolerance") or {}
    lim_n = tol.get("n", 0.0) + RECORD_ROUNDING * max(1.0, float(np.max(na)))
    lim_k = tol.get("k", 0.0) + RECORD_ROUNDING * max(1.0, float(np.max(ka)))
    excess = np.maximum(dn / lim_n, dk / lim_k)
    i = int(np.argmax(excess))
    return {
        "ok": bool(excess[i] <= 1.0),
        "excess": float(excess[i]),
        "wavelength_um": float(wl[i]),
        "n_built": float(nb[i]),
        "k_built": float(kb[i]),
        "n_approved": float(na[i]),
        "k_approved": float(ka[i]),
        "dn": float(dn[i]),
        "dk": float(dk[i]),
        "limit_n": lim_n,
        "limit_k": lim_k,
    }


# Relative floor of the built-vs-approved comparison: parameters are written and read
# as doubles, so an exact build agrees to ~1e-12; 1e-4 leaves room for a script that
# writes the approved numbers to four significant figures or more.
RECORD_ROUNDING = 1e-4


def is_vacuum(model: dict) -> bool:
    return (
        not model["terms"] and abs(model["eps_inf"] - 1.0) < 1e-12 and not model.get("conductivity")
    )


def describe(model: dict) -> str:
    terms = ", ".join(
        f"{t['kind']}(f0={t['frequency']:.4g}, gamma={t['gamma']:.4g}, sigma={t['sigma']:.4g})"
        for t in model["terms"]
    )
    n0 = cmath.sqrt(model["eps_inf"]).real
    return f"eps_inf={model['eps_inf']:.4g} (n={n0:.4g})" + (f" + {terms}" if terms else "")
