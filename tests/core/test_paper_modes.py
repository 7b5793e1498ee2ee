"""Results about modes in the paper format (docs/paper-format.md, "Tables", "Band
diagrams", "Units"): a table of resonances and a band diagram written as a paper states
them pass `reprolab check`; every wrong input is refused naming its file, its field and
what would be valid, and the valid folder's problems stay none."""

import shutil
from pathlib import Path

import pytest
import yaml

from reprolab import units
from reprolab.cli import main
from reprolab.errors import InputFileError
from reprolab.paper import Paper, check_folder

EXAMPLES = Path(__file__).parents[2] / "examples" / "papers"
IMAGE = EXAMPLES / "silica_bragg_2026" / "figures" / "fig1.png"

# The ring resonator of Meep's tutorial (index 3.4, inner radius 1, width 1, in units of
# a): the three modes Harminv reports, as the tutorial's table states them.
RING = """
paper_id: meep_ring
title: "Modes of a dielectric ring resonator"
authors: ["A. Author"]
domain: resonators / whispering-gallery modes
paper_text: paper.md
key_values:
  - {quantity: "ring width", value: 1, unit: a, kind: other}
  - {quantity: "ring index", value: 3.4, unit: "1", kind: other}
  - {quantity: "frequency of the highest-Q mode", value: 0.17525, unit: c/a,
     kind: mode_frequency, figure: tab1}
  - {quantity: "highest Q", value: 1677, unit: "1", kind: quality_factor, figure: tab1}
tables:
  - table_id: tab1
    title: "Resonant modes of the ring found by Harminv"
    caption: "Frequency, imaginary frequency and Q of each mode"
    columns:
      - {name: frequency, measure: mode_frequency, unit: c/a}
      - {name: imag_freq, measure: other, unit: c/a}
      - {name: Q, measure: quality_factor, unit: "1"}
    rows:
      - {frequency: 0.11810, imag_freq: -7.31e-4, Q: 80.7}
      - {frequency: 0.14716, imag_freq: -2.33e-4, Q: 316}
      - {frequency: 0.17525, imag_freq: null, Q: 1677}
"""

# A square lattice of dielectric rods (ε = 8.9, r = 0.2a) in air: TM bands along
# Γ-X-M-Γ, with the gap between bands 1 and 2 the paper states.
RODS = """
paper_id: rods_bands
title: "Photonic band gap of a square lattice of dielectric rods"
domain: photonic crystals
paper_text: paper.md
figures:
  - figure_id: fig2
    title: "TM band diagram"
    image: figures/fig2.png
    x_axis: {label: "Wavevector", quantity: k_path, unit: "1"}
    y_axes: {left: {label: "Frequency ωa/2πc", quantity: frequency, unit: "ωa/2πc"}}
    curves:
      - {curve_id: bands, label: "TM bands", digitized: data/fig2_bands.csv}
    band_diagram:
      lattice: square
      polarization: TM
      k_path:
        - {label: "Γ", k: [0, 0, 0]}
        - {label: "X", k: [0.5, 0, 0]}
        - {label: "M", k: [0.5, 0.5, 0]}
        - {label: "Γ", k: [0, 0, 0]}
      bands: 3
      gaps:
        - {below_band: 1, lower: 0.322, upper: 0.442}
key_values:
  - {quantity: "gap lower edge", value: 0.322, unit: c/a, kind: gap_lower, figure: fig2, band: 1}
  - {quantity: "gap upper edge", value: 0.442, unit: a/λ, kind: gap_upper, figure: fig2, band: 1}
  - {quantity: "gap-midgap ratio", value: 31.4, unit: "%", kind: gap_midgap_ratio,
     figure: fig2, band: 1}
  - {quantity: "band 1 at X", value: 0.28, unit: c/a, kind: mode_frequency, figure: fig2,
     band: 1, labels: {k: X}}
"""
# Digitized points (k_path, frequency, band): each band at the symmetry points.
BANDS = [(0, 0.0, 1), (1, 0.28, 1), (2, 0.322, 1), (3, 0.0, 1)]
BANDS += [(0, 0.56, 2), (1, 0.442, 2), (2, 0.46, 2), (3, 0.56, 2)]
BANDS += [(0, 0.56, 3), (1, 0.55, 3), (2, 0.62, 3), (3, 0.56, 3)]


def band_csv(points=BANDS, header="k_path,frequency_c/a,band") -> str:
    return header + "\n" + "".join(",".join(str(v) for v in p) + "\n" for p in points)


def write_paper(folder: Path, metadata: str, csv: str | None = None) -> Path:
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    (folder / "paper.md").write_text("# A paper\n\nText.\n")
    shutil.copy(IMAGE, folder / "figures" / "fig2.png")
    (folder / "metadata.yaml").write_text(metadata)
    if csv is not None:
        (folder / "data" / "fig2_bands.csv").write_text(csv)
    return folder


def edit(folder: Path, change) -> None:
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    change(meta)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))


def problems(folder: Path) -> list[str]:
    return [f"{Path(path).name}: {message}" for path, message in check_folder(folder)[1]]


@pytest.fixture
def ring(tmp_path):
    folder = write_paper(tmp_path / "ring", RING)
    assert problems(folder) == []
    return folder


@pytest.fixture
def rods(tmp_path):
    folder = write_paper(tmp_path / "rods", RODS, band_csv())
    assert problems(folder) == []
    return folder


def test_the_ring_tutorial_table_passes_check(ring, capsys):
    assert main(["check", str(ring)]) == 0
    assert "OK" in capsys.readouterr().out
    paper = Paper(ring)
    assert paper.result_ids() == ["tab1"] and paper.is_table("tab1")
    assert paper.band_diagram("tab1") is None and paper.meta.figures == []
    table = paper.table("tab1")
    assert [row["Q"] for row in table.rows] == [80.7, 316, 1677]
    assert [table.value(r, "frequency") for r in paper.tables[0].rows] == [0.1181, 0.14716, 0.17525]
    assert table.value(table.rows[2], "imag_freq") is None  # not stated
    assert table.column("Q").measure == "quality_factor"
    with pytest.raises(KeyError, match="no table 'tab9' \\(valid: tab1\\)"):
        paper.table("tab9")
    with pytest.raises(KeyError, match="'tab1' is a table"):
        paper.figure("tab1")


def test_a_table_with_labels_and_key_values_on_a_labelled_row(ring):
    def cylindrical(meta):
        table = meta["tables"][0]
        table["labels"] = ["m", "polarization"]
        for m, row in zip((3, 4, 5), table["rows"], strict=True):
            row.update(m=m, polarization="TE")
        meta["key_values"][3]["labels"] = {"m": 5}

    edit(ring, cylindrical)
    assert problems(ring) == []
    table = Paper(ring).table("tab1")
    assert [table.row_labels(r) for r in table.rows][0] == {"m": 3, "polarization": "TE"}


def test_the_rods_band_diagram_passes_check(rods, capsys):
    assert main(["check", str(rods)]) == 0
    capsys.readouterr()
    paper = Paper(rods)
    bd = paper.band_diagram("fig2")
    assert bd is not None and bd.labels == ["Γ", "X", "M", "Γ"] and bd.polarization == "TM"
    assert bd.k_path[2].vector == [0.5, 0.5, 0.0]
    assert bd.gaps[0].midgap_ratio == pytest.approx(0.3141, abs=1e-4)
    points = paper.band_points("fig2")
    assert points == [(float(k), f, b) for k, f, b in BANDS]
    ks, fs = paper.curve_data("fig2", "bands")
    assert ks[:4] == [0.0, 1.0, 2.0, 3.0] and fs[:4] == [0.0, 0.28, 0.322, 0.0]
    assert paper.result_ids() == ["fig2"] and not paper.is_table("fig2")


def test_a_band_csv_without_a_band_column_or_in_thz(rods):
    """Without a band column each point's band is None; frequencies in THz are read in
    the axis's c/a through unit_length, and refused without it, naming the field."""
    (rods / "data" / "fig2_bands.csv").write_text(
        band_csv([(0, 0.0), (0.5, 0.14), (1, 0.28)], "k_path,frequency")
    )
    assert [p[2] for p in Paper(rods).band_points("fig2")] == [None] * 3
    (rods / "data" / "fig2_bands.csv").write_text(
        band_csv([(0, 0.0, 1), (1, 168.0, 1)], "k_path,frequency [THz],band")
    )
    (msg,) = problems(rods)
    assert msg.startswith("fig2_bands.csv: column 'frequency [THz]': frequency in 'THz' ")
    assert "only with the paper's length a (metadata field 'unit_length')" in msg
    edit(rods, lambda m: m.update(unit_length={"value": 500, "unit": "nm"}))
    fs = [p[1] for p in Paper(rods).band_points("fig2")]
    assert fs == pytest.approx([0.0, 168e12 * 500e-9 / units.C_M_PER_S])  # 0.28019 c/a


@pytest.mark.parametrize(
    ("csv", "expected"),
    [
        (band_csv([(0, 0.1, 1), (1, 0.2, 0)]), "line 3: column 'band' is '0'; valid: a positive"),
        (band_csv([(0, 0.1, 1.5), (1, 0.2, 1)]), "line 2: column 'band' is '1.5'; valid"),
        (band_csv([(0, 0.1, "x"), (1, 0.2, 1)]), "line 2: column 'band' is 'x'; valid"),
        (band_csv([(0, 0.1, 4), (1, 0.2, 1)]), "is '4'; valid: a positive integer, 1 to 3"),
        (
            band_csv([(0, 0.1, 1), (3.5, 0.2, 1)]),
            "line 3: k_path 3.5 is off the k path; valid: 0 to 3 (Γ-X-M-Γ)",
        ),
        (band_csv([(0, 0.1, 1)]), "needs at least two data rows"),
        (band_csv(header="k_path,frequency_c/a,mode"), "column 3 is 'mode'; valid: band"),
        (
            band_csv(header="k (2pi/a),frequency_c/a,band"),
            "wavevector cannot be converted to k_path",
        ),
    ],
)
def test_a_wrong_band_csv_is_refused_naming_file_and_line(rods, csv, expected):
    (rods / "data" / "fig2_bands.csv").write_text(csv)
    found = problems(rods)
    assert len(found) == 1 and found[0].startswith("fig2_bands.csv: ")
    assert expected in found[0]
    with pytest.raises(InputFileError, match="fig2_bands.csv"):
        Paper(rods)


def set_in(path: str, value):
    """A change that sets `value` at a dotted path (`tables.0.columns.1.unit`)."""

    def change(meta):
        *parents, last = path.split(".")
        node = meta
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        if last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value

    return change


TABLE_ERRORS = [
    (
        set_in("tables.0.columns.2.unit", "nm"),
        "field 'tables[0].columns[2]': column 'Q' (measure quality_factor): 'nm' is not a unit "
        "of quality_factor; valid: 1",
    ),
    (
        set_in("key_values.3.unit", "nm"),
        "field 'key_values[3].unit': 'nm' is not a unit of quality_factor; valid: 1",
    ),
    (
        set_in("key_values.2.unit", "THz"),
        "field 'key_values[2].unit' is 'THz', but table 'tab1' states mode_frequency in 'c/a' "
        "(column 'frequency'); valid: 'c/a'",
    ),
    (
        set_in("tables.0.rows.1.m", 4),
        "field 'tables[0].rows[1].m': label 'm' is not declared in 'tables[0].labels' ([]); "
        "declare it there or remove it from the row",
    ),
    (
        set_in("tables.0.rows.1.frequncy", 0.2),
        "field 'tables[0].rows[1].frequncy' is not a label or column of table 'tab1'; did you mean "
        "'frequency'? valid: ['frequency', 'imag_freq', 'Q']",
    ),
    (
        set_in("tables.0.rows.0.Q", -80.7),
        "field 'tables[0].rows[0].Q' is -80.7; valid: a quality_factor above 0",
    ),
    (
        set_in("tables.0.rows.0.Q", "high"),
        "field 'tables[0].rows[0].Q' is 'high'; valid: a number in 1 (measure quality_factor)",
    ),
    (
        set_in("tables.0.rows.0", {"frequency": None, "Q": None}),
        "field 'tables[0].rows[0]' states no value of the columns",
    ),
    (
        set_in("key_values.3.labels", {"m": 5}),
        "field 'key_values[3].labels.m': label 'm' is not declared by table 'tab1'; valid: []",
    ),
    (
        set_in("key_values.2.figure", "tab2"),
        "field 'key_values[2].figure' is 'tab2'; valid: ['tab1']",
    ),
    (
        set_in("key_values.2.curve", "T"),
        "field 'key_values[2].curve': kind 'mode_frequency' reads a table or a band diagram, "
        "not a curve; remove curve",
    ),
    (
        set_in("key_values.0.kind", "max_y"),
        "field 'key_values[0]': kind 'max_y' needs a figure and a curve",
    ),
    (
        set_in("key_values.3.kind", "gap_lower"),
        "field 'key_values[3].kind' is 'gap_lower', but table 'tab1' has no column of measure "
        "gap_lower; its measures: ['mode_frequency', 'other', 'quality_factor']",
    ),
    (set_in("tables", []), "a paper needs at least one result: a figure (`figures`) or a table"),
    (
        set_in("tables.0.labels", ["mm"]),
        "field 'tables[0].labels[0]': Input should be 'm', 'band', 'parity', 'k',",
    ),
    (
        set_in("tables.0.columns.0.measure", "resonance"),
        "field 'tables[0].columns[0].measure': Input should be 'mode_frequency', ",
    ),
    (
        set_in("unit_length", {"value": 1, "unit": "a"}),
        "field 'unit_length': 'a' is not a length unit for a; valid: nm, um, µm, micron, mm, m",
    ),
]


@pytest.mark.parametrize(("change", "expected"), TABLE_ERRORS)
def test_a_wrong_table_is_refused_naming_the_field(ring, change, expected):
    edit(ring, change)
    found = problems(ring)
    assert any(expected in m for m in found), found
    assert all(m.startswith("metadata.yaml: field '") for m in found), found


def test_rows_missing_or_repeating_labels(ring, capsys):
    def labelled(meta):
        table = meta["tables"][0]
        table["labels"] = ["m", "band"]
        table["rows"][0].update(m=3, band=1)
        table["rows"][1].update(m=3, band=1)  # the same mode twice
        table["rows"][2].update(m=5, band=0)
        meta["tables"][0]["rows"].append({"band": 2, "frequency": 0.2})  # no m

    edit(ring, labelled)
    assert main(["check", str(ring)]) == 1
    out = capsys.readouterr().err
    for expected in (
        'field \'tables[0].rows[1]\' has the same labels as rows[0] ({"band": 1, "m": 3}); add '
        "a label that tells them apart",
        "field 'tables[0].rows[2].band' is 0; valid: a positive integer (bands count from 1)",
        "field 'tables[0].rows[3]' has no label 'm'; every row of table 'tab1' states its labels "
        "['m', 'band']",
    ):
        assert expected in out, out


BAND_ERRORS = [
    (
        set_in("figures.0.band_diagram.k_path", [{"label": "Γ", "k": [0, 0, 0]}]),
        "field 'figures[0].band_diagram.k_path': a k path needs at least 2 points (got 1)",
    ),
    (
        set_in("figures.0.band_diagram.gaps.0.below_band", 3),
        "field 'figures[0].band_diagram': a gap below band 4 lies above the 3 band(s) shown",
    ),
    (
        set_in("figures.0.band_diagram.gaps.0.upper", 0.3),
        "field 'figures[0].band_diagram.gaps[0]': a gap needs 0 <= lower < upper",
    ),
    (
        set_in("figures.0.x_axis", {"label": "k", "quantity": "wavevector", "unit": "2π/a"}),
        "a band diagram's x_axis has quantity 'k_path' (unit 1: symmetry points at 0, 1, 2, ...)",
    ),
    (
        set_in("figures.0.y_axes.left.unit", "2π/a"),
        "field 'figures[0].y_axes.left': '2π/a' is not a unit of frequency; valid: ",
    ),
    (
        set_in("figures.0.band_diagram.polarization", "TX"),
        "field 'figures[0].band_diagram.polarization': Input should be 'TE', 'TM' or 'none'",
    ),
    (
        lambda m: (
            m["key_values"][0].pop("band"),
            m["figures"][0]["band_diagram"]["gaps"].append(
                {"below_band": 2, "lower": 0.5, "upper": 0.52}
            ),
        ),
        "field 'key_values[0].band' is missing; valid: the band below the gap, 1 to 2 "
        "(band_diagram.bands is 3), or none where the figure states one gap",
    ),
    (
        set_in("key_values.3.band", None),
        "field 'key_values[3].band' is missing; valid: the band, from 1, 1 to 3",
    ),
    (
        set_in("key_values.3.labels", {"k": "K"}),
        "field 'key_values[3].labels.k' is 'K'; valid: ['Γ', 'X', 'M', 'Γ'] or [kx, ky, kz]",
    ),
    (
        set_in("key_values.3.labels", {"m": 1}),
        "field 'key_values[3].labels.k' is required: the mode's k point",
    ),
    (
        set_in("key_values.1.unit", "THz"),
        "field 'key_values[1].unit' is 'THz', but band diagram 'fig2' has frequencies in "
        "'ωa/2πc'; valid: 'ωa/2πc'",
    ),
    (
        set_in("key_values.2.unit", "c/a"),
        "field 'key_values[2].unit' is 'c/a'; valid: 1 or % (a ratio)",
    ),
    (
        set_in("key_values.0.kind", "quality_factor"),
        "field 'key_values[0].figure' is band diagram 'fig2', which states no quality factor",
    ),
]


@pytest.mark.parametrize(("change", "expected"), BAND_ERRORS)
def test_a_wrong_band_diagram_is_refused_naming_the_field(rods, change, expected):
    edit(rods, change)
    found = problems(rods)
    assert any(expected in m for m in found), found


def test_a_gap_key_value_without_band_is_about_the_one_gap(rods):
    edit(rods, lambda m: [kv.pop("band") for kv in m["key_values"][:3]])
    assert problems(rods) == []
    assert [kv.band for kv in Paper(rods).meta.key_values] == [1, 1, 1, 1]


def test_ids_are_unique_across_figures_and_tables(rods, ring):
    def both(meta):
        ring_meta = yaml.safe_load((ring / "metadata.yaml").read_text())
        meta["tables"] = ring_meta["tables"]
        meta["tables"][0]["table_id"] = "fig2"

    edit(rods, both)
    assert (
        "metadata.yaml: field 'tables[0].table_id' is 'fig2', the id of figures[0]; figure and "
        "table ids share one namespace: valid: another id"
    ) in problems(rods)
    edit(rods, set_in("tables.0.table_id", "tab1"))
    assert problems(rods) == []
    assert Paper(rods).result_ids() == ["fig2", "tab1"]


def test_a_mode_kind_on_a_figure_of_curves_or_a_curve_kind_on_a_table(tmp_path):
    folder = tmp_path / "bragg"
    shutil.copytree(EXAMPLES / "silica_bragg_2026", folder, ignore=shutil.ignore_patterns("rec*"))
    assert problems(folder) == []
    edit(
        folder,
        lambda m: m.setdefault("key_values", []).append(
            {
                "quantity": "f",
                "value": 0.3,
                "unit": "c/a",
                "kind": "mode_frequency",
                "figure": "fig2",
            }
        ),
    )
    (msg,) = problems(folder)
    assert (
        "field 'key_values[" in msg and "'fig2', a figure of curves; kind 'mode_frequency' " in msg
    )
    assert "valid: []" in msg  # no table, no band diagram in that paper


def test_a_curve_key_value_in_another_unit_than_its_axis_is_refused(tmp_path):
    folder = tmp_path / "etalon"
    shutil.copytree(EXAMPLES / "ag_etalon_2026", folder, ignore=shutil.ignore_patterns("rec*"))
    assert problems(folder) == []
    edit(folder, set_in("key_values.0.unit", "um"))
    (msg,) = problems(folder)
    assert (
        "field 'key_values[0].unit' is 'um' (a wavelength), but kind 'x_of_max' reads figure "
        "'fig2' x_axis, wavelength in 'nm'; valid: 'nm': the value is 689500 nm" in msg
    )


@pytest.mark.parametrize("paper", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_every_example_paper_stays_valid(paper):
    assert check_folder(EXAMPLES / paper)[1] == []


def test_normalized_units_convert_only_with_the_length_a():
    a = 500e-9
    assert units.convert([0.5], ("frequency", "c/a"), ("frequency", "a/λ")) == [0.5]
    assert units.convert([0.5], ("frequency", "ωa/2πc"), ("wavelength", "a")) == [2.0]
    (thz,) = units.convert([0.5], ("frequency", "c/a"), ("frequency", "THz"), a)
    assert thz == pytest.approx(299.792458)
    (nm,) = units.convert([0.5], ("frequency", "a/lambda"), ("wavelength", "nm"), a)
    assert nm == pytest.approx(1000.0)
    assert units.convert([2.0], ("length", "a"), ("length", "um"), a) == [pytest.approx(1.0)]
    (k,) = units.convert([0.5], ("wavevector", "2π/a"), ("wavevector", "1/um"), a)
    assert k == pytest.approx(3.14159265 / 0.5)
    for src, dst in (
        (("frequency", "c/a"), ("frequency", "THz")),
        (("length", "nm"), ("length", "a")),
        (("wavevector", "2pi/a"), ("wavevector", "1/um")),
    ):
        with pytest.raises(units.UnitError, match="metadata field 'unit_length'"):
            units.converter(src, dst)
    with pytest.raises(units.UnitError, match="'nm' is not a unit of quality_factor; valid: 1"):
        units.converter(("quality_factor", "nm"), ("quality_factor", "1"))
    with pytest.raises(units.UnitError, match="k_path cannot be converted to wavevector"):
        units.converter(("k_path", "1"), ("wavevector", "2π/a"), a)
    assert units.same_unit("frequency", "c/a", "a/λ") and units.same_unit("length", "um", "µm")
    assert not units.same_unit("frequency", "c/a", "THz")
    assert units.column_quantity("frequency_c/a") == ("frequency", "c/a")


def test_paper_convert_uses_its_unit_length(rods):
    paper = Paper(rods)
    with pytest.raises(units.UnitError, match="unit_length"):
        paper.convert([0.3], ("frequency", "c/a"), ("frequency", "THz"))
    edit(rods, lambda m: m.update(unit_length={"value": 0.5, "unit": "um"}))
    paper = Paper(rods)
    assert paper.unit_length_m == pytest.approx(5e-7)
    (f,) = paper.convert([299.792458], ("frequency", "THz"), ("frequency", "c/a"))
    assert f == pytest.approx(0.5)


def doc_block(heading: str) -> str:
    """The first yaml block under `heading` in docs/paper-format.md."""
    text = (Path(__file__).parents[2] / "docs" / "paper-format.md").read_text()
    section = text.split(f"\n{heading}\n", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_documented_table_and_band_diagram_pass_check(tmp_path):
    """The examples docs/paper-format.md shows are a valid paper, as printed."""
    meta = yaml.safe_load(RODS)
    meta["figures"] = yaml.safe_load(doc_block("### Band diagrams"))
    meta["tables"] = yaml.safe_load(doc_block("### Tables"))["tables"]
    meta["key_values"] = yaml.safe_load(doc_block("### Key values"))["key_values"]
    meta["unit_length"] = yaml.safe_load(doc_block("### Units"))["unit_length"]
    folder = write_paper(tmp_path / "doc", yaml.safe_dump(meta, allow_unicode=True), band_csv())
    assert problems(folder) == []
    paper = Paper(folder)
    assert paper.result_ids() == ["fig2", "tab1"] and paper.band_diagram("fig2").bands == 4
    assert paper.unit_length_m == pytest.approx(500e-9)
