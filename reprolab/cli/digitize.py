"""`reprolab digitize IMAGE`: a curve of a raster figure as a digitized CSV, from what a
person reads off the image: two calibration points per axis (a pixel and its value,
such as two tick marks) and the curve's colour. Every pixel column that holds the
colour gives one point, at the middle of the stroke that continues the curve (not a
legend sample of the same colour); a logarithmic axis is calibrated in its logarithm."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

MAX_PIXELS = 100_000_000
CALIBRATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*=\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*$")


def add_command(sub) -> None:
    cmd = sub.add_parser(
        "digitize",
        help="a raster figure's curve as a CSV, from axis calibration points and a colour",
    )
    cmd.add_argument("image", help="the figure image (PNG or JPEG), e.g. figures/fig3.png")
    cmd.add_argument(
        "--x", nargs=2, required=True, metavar="PIXEL=VALUE",
        help="two points of the x axis: pixel column = value, e.g. 102=400 514=900",
    )  # fmt: skip
    cmd.add_argument(
        "--y", nargs=2, required=True, metavar="PIXEL=VALUE",
        help="two points of the y axis: pixel row = value, e.g. 380=0 40=1",
    )  # fmt: skip
    cmd.add_argument("--color", required=True, help="the curve's colour, #RRGGBB")
    cmd.add_argument("--tolerance", type=float, default=60.0, help="RGB distance (default 60)")
    cmd.add_argument("--log-x", action="store_true", help="the x axis is logarithmic")
    cmd.add_argument("--log-y", action="store_true", help="the y axis is logarithmic")
    cmd.add_argument("--box", help="only pixels inside x0,y0,x1,y1 (e.g. the plot frame)")
    cmd.add_argument("--out", required=True, help="the CSV to write, e.g. data/fig3_decay.csv")


def digitize_command(args) -> int:
    from reprolab.errors import ReproLabError
    from reprolab.fileio import atomic_write_text

    try:
        points = digitize(
            Path(args.image),
            [calibration_point(p, "--x") for p in args.x],
            [calibration_point(p, "--y") for p in args.y],
            colour(args.color),
            tolerance=args.tolerance,
            log=(args.log_x, args.log_y),
            box=box(args.box) if args.box else None,
        )
    except ReproLabError as exc:
        print(f"reprolab: {exc}", file=sys.stderr)
        return 2
    atomic_write_text(args.out, "x,y\n" + "".join(f"{x:.6g},{y:.6g}\n" for x, y in points))
    print(f"reprolab: wrote {args.out} ({len(points)} points); check it against {args.image}")
    return 0


def calibration_point(text: str, option: str) -> tuple[float, float]:
    from reprolab.errors import InputFileError

    m = CALIBRATION.match(text)
    if not m:
        raise InputFileError(option, f"'{text}' is not PIXEL=VALUE (e.g. 102=400)")
    return float(m[1]), float(m[2])


def colour(text: str) -> tuple[int, int, int]:
    from reprolab.errors import InputFileError

    if not re.fullmatch(r"#?[0-9A-Fa-f]{6}", text):
        raise InputFileError("--color", f"'{text}' is not a colour; valid: #RRGGBB")
    text = text.lstrip("#")
    return int(text[:2], 16), int(text[2:4], 16), int(text[4:], 16)


def box(text: str) -> tuple[int, int, int, int]:
    from reprolab.errors import InputFileError

    parts = text.split(",")
    if len(parts) != 4 or not all(p.strip().lstrip("-").isdigit() for p in parts):
        raise InputFileError("--box", f"'{text}' is not x0,y0,x1,y1 in pixels")
    x0, y0, x1, y1 = (int(p) for p in parts)
    return x0, y0, x1, y1


def axis_map(points: list[tuple[float, float]], log: bool, option: str):
    """Pixel -> value through two calibration points (in the logarithm on a log axis)."""
    from reprolab.errors import InputFileError

    (p0, v0), (p1, v1) = points
    if p0 == p1 or v0 == v1:
        raise InputFileError(option, "the two points need different pixels and values")
    if log and (v0 <= 0 or v1 <= 0):
        raise InputFileError(option, "a logarithmic axis needs values above 0")
    f = math.log10 if log else (lambda v: v)
    slope = (f(v1) - f(v0)) / (p1 - p0)
    return lambda p: (10 ** (f(v0) + slope * (p - p0))) if log else f(v0) + slope * (p - p0)


def digitize(image: Path, xs, ys, rgb, tolerance=60.0, log=(False, False), box=None):
    """[(x, y)] of the curve drawn in `rgb` in `image`: per pixel column, the middle of
    the pixels within `tolerance` of the colour, mapped by the calibration points."""
    import numpy as np
    from PIL import Image, UnidentifiedImageError

    from reprolab.errors import InputFileError

    to_x, to_y = axis_map(xs, log[0], "--x"), axis_map(ys, log[1], "--y")
    try:
        with Image.open(image) as img:
            if img.width * img.height > MAX_PIXELS:
                raise InputFileError(image, f"{img.width}x{img.height} pixels, over {MAX_PIXELS}")
            pixels = np.asarray(img.convert("RGB"), dtype=float)
    except (OSError, UnidentifiedImageError) as exc:
        raise InputFileError(image, f"cannot be read as an image ({exc})") from None
    hit = np.linalg.norm(pixels - np.array(rgb, dtype=float), axis=2) <= tolerance
    if box:
        keep = np.zeros_like(hit)
        keep[box[1] : box[3] + 1, box[0] : box[2] + 1] = True
        hit &= keep
    points, last = [], None
    for col in np.flatnonzero(hit.any(axis=0)):
        rows = np.flatnonzero(hit[:, col])
        runs = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)  # strokes in this column
        # the stroke that continues the curve (a legend sample of its colour is another)
        run = max(runs, key=len) if last is None else min(runs, key=lambda r: abs(r.mean() - last))
        last = run.mean()
        points.append((to_x(col + 0.5), to_y(last + 0.5)))
    if not points:
        raise InputFileError(image, f"no pixel within {tolerance} of #{bytes(rgb).hex()}")
    return points
