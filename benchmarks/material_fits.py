"""The materials library's Drude-Lorentz fits: each entry fitted over the visible and
near infrared (0.4-0.9 µm, cut to the entry's data), with the fit's largest n and k
errors (what the material gate shows), its number of terms and its time.

Writes benchmarks/results/material_fits.{json,md}. Run:
`.venv/bin/python benchmarks/material_fits.py` (a few minutes on 2 cores).
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reprolab.fileio import atomic_write_json, atomic_write_text  # noqa: E402
from reprolab.physics import material_library as ml  # noqa: E402

OUT = Path(__file__).parent / "results"
BAND_UM = (0.4, 0.9)


def main() -> None:
    rows = []
    for mid, entry in ml.library().items():
        lo, hi = ml.valid_range_um(mid)
        wl, _, _ = ml.tabulated(mid)
        band = (max(BAND_UM[0], lo, float(wl[0])), min(BAND_UM[1], hi, float(wl[-1])))
        start = time.perf_counter()
        model = ml.fitted_model(mid, band)
        rows.append(
            {
                "id": mid,
                "kind": entry.kind,
                "band_um": [round(band[0], 4), round(band[1], 4)],
                "terms": len(model["terms"]),
                "max_dn": model["tolerance"]["n"],
                "max_dk": model["tolerance"]["k"],
                "seconds": round(time.perf_counter() - start, 2),
            }
        )
        print(rows[-1], flush=True)
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    atomic_write_json(OUT / "material_fits.json", {"measured": stamp, "fits": rows})
    lines = [
        "# Drude-Lorentz fits of the materials library",
        "",
        f"Measured {stamp} by `benchmarks/material_fits.py`: every entry of "
        "`materials/library.yaml` fitted over 0.4-0.9 µm (cut to its data); the largest "
        "errors are on the tabulated points inside the band.",
        "",
        "| id | kind | band (µm) | terms | largest abs dn | largest abs dk | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['id']}` | {r['kind']} | {r['band_um'][0]:g}-{r['band_um'][1]:g} | "
            f"{r['terms']} | {r['max_dn']:.3g} | {r['max_dk']:.3g} | {r['seconds']:g} |"
        )
    atomic_write_text(OUT / "material_fits.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
