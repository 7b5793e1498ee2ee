"""What the host's re-simulation (`record:resimulated`) says of the planted corpus's
honest records, and what it costs.

Every case of the planted-failure corpus (tests/support/planted/corpus.py: correct runs
and runs with a planted physics mistake, all with honest records) is run once; then
`record:resimulated` judges each record at its own resolution and, where the record
has flux readings, again with the coarse pair forced. Each record is then forged the
simplest way a forger with the key would (every flux reading scaled by 1.05) and
judged at its own resolution.

Writes benchmarks/results/resimulate.{json,md}: per case the check's status and value
each way, the case's Meep seconds and the check's seconds. Run:
`.venv/bin/python benchmarks/resimulate.py` (a few minutes). A measurement, not a test
(tests/physics/test_resimulate_meep.py and the planted suite assert the behaviour).
"""

from __future__ import annotations

import copy
import datetime as dt
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the corpus lives in tests/
from reprolab.fileio import atomic_write_json, atomic_write_text  # noqa: E402
from reprolab.physics import resimulate as rs  # noqa: E402
from reprolab.physics.record_checks import load_record  # noqa: E402
from tests.support.planted import corpus  # noqa: E402

OUT = Path(__file__).parent / "results"


def judged(sims: list[dict], **kwargs) -> dict:
    start = time.monotonic()
    check = rs.resimulated_check(sims, **kwargs)
    took = time.monotonic() - start
    if check is None:
        return {"status": "none", "value": None, "seconds": round(took, 2), "detail": ""}
    return {
        "status": check.status,
        "value": check.value,
        "seconds": round(took, 2),
        "detail": check.detail[:400],
    }


def forged(sims: list[dict]) -> list[dict]:
    out = copy.deepcopy(sims)
    for sim in out:
        for m in sim.get("measured", []):
            if m.get("kind") == "flux":
                m["values"] = [1.05 * v for v in m["values"]]
    return out


def main() -> None:
    cases = {**corpus.PLANTED, **{k: (v, []) for k, v in corpus.CORRECT.items()}}
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, ((code, _), _) in cases.items():
            (folder / name).mkdir()
            (folder / name / "sim.py").write_text(code)
        corpus._drive([str(folder / n) for n in cases])
        for name in cases:
            sims = load_record(folder / name)
            wall = folder / name / "wall_seconds"
            row = {
                "planted": name in corpus.PLANTED,
                "meep_seconds": float(wall.read_text()) if wall.is_file() else None,
                "flux_readings": sum(len(rs.flux_readings(s)) for s in sims),
                "own": judged(sims),
            }
            if row["flux_readings"]:
                row["coarse"] = judged(sims, identical=False)
                row["forged"] = judged(forged(sims))
            rows[name] = row
            print(name, row["own"]["status"], row.get("coarse", {}).get("status"), flush=True)
    summary = summarise(rows)
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    data = {"when": stamp, "machine": platform.node(), "summary": summary, "cases": rows}
    atomic_write_json(OUT / "resimulate.json", data)
    atomic_write_text(OUT / "resimulate.md", markdown(data))


def summarise(rows: dict) -> dict:
    def count(way: str) -> dict:
        out: dict[str, int] = {}
        for r in rows.values():
            if way in r:
                out[r[way]["status"]] = out.get(r[way]["status"], 0) + 1
        return out

    return {
        "cases": len(rows),
        "own_resolution": count("own"),
        "coarse": count("coarse"),
        "forged_x1.05": count("forged"),
        "meep_seconds": round(sum(r["meep_seconds"] or 0 for r in rows.values()), 1),
        "check_seconds_own": round(sum(r["own"]["seconds"] for r in rows.values()), 1),
        "check_seconds_coarse": round(
            sum(r["coarse"]["seconds"] for r in rows.values() if "coarse" in r), 1
        ),
    }


def markdown(data: dict) -> str:
    s = data["summary"]
    lines = [
        "# record:resimulated on the planted corpus's honest records",
        "",
        f"{data['when']} on {data['machine']} (`benchmarks/resimulate.py`).",
        "",
        f"- cases: {s['cases']}; own resolution: {s['own_resolution']}; coarse pair "
        f"forced: {s['coarse']}; readings x 1.05 (forged): {s['forged_x1.05']}",
        f"- Meep seconds of the cases: {s['meep_seconds']}; the check's seconds at their "
        f"own resolution: {s['check_seconds_own']}; with the coarse pair: "
        f"{s['check_seconds_coarse']}",
        "",
        "| case | planted | readings | own | value | coarse | value | forged | Meep s | check s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in sorted(data["cases"].items()):
        c, f = r.get("coarse", {}), r.get("forged", {})
        lines.append(
            f"| {name} | {'yes' if r['planted'] else 'no'} | {r['flux_readings']} | "
            f"{r['own']['status']} | {_g(r['own']['value'])} | {c.get('status', '')} | "
            f"{_g(c.get('value'))} | {f.get('status', '')} | {r['meep_seconds']} | "
            f"{r['own']['seconds']} |"
        )
    warned = [(n, r["own"]["detail"]) for n, r in data["cases"].items() if r["own"]["status"]
              in ("warn", "fail")]  # fmt: skip
    if warned:
        lines += ["", "What the check said where it did not pass at the run's own resolution:", ""]
        lines += [f"- {n}: {d}" for n, d in sorted(warned)]
    return "\n".join(lines) + "\n"


def _g(x) -> str:
    return "" if x is None else f"{x:.3g}"


if __name__ == "__main__":
    main()
