"""`reprolab new-paper` on PDFs of four layouts the test writes (two columns, one
column, figures side by side, text flowing over pages; vector and raster figures,
ruled tables and tables with rules across only, equations, captions above and below):
no sentence or table cell lost, figures paired with their captions by number, axis
labels read off the vector figures; and `check` names text that went missing."""

import json
import re

import pytest
import yaml

from reprolab.cli import main
from reprolab.cli.pdf_intake import ACCOUNT, norm
from tests.support.layout_pdfs import LAYOUTS


def made(layout, tmp_path, capsys):
    pdf = tmp_path / f"{layout}.pdf"
    want = LAYOUTS[layout](pdf)
    out = tmp_path / layout
    assert main(["new-paper", str(pdf), "--id", layout, "--out", str(out)]) == 0
    assert "is not in" not in capsys.readouterr().err  # new-paper placed every line
    return want, out


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_sentence_cell_and_figure_of_a_layout(layout, tmp_path, capsys):
    want, out = made(layout, tmp_path, capsys)
    md = norm((out / "paper.md").read_text())
    assert want.sentences and not [s for s in want.sentences if norm(s) not in md]
    assert not [c for c in want.cells if norm(c) not in md]
    for heading in want.headings:
        assert re.search(rf"(?m)^#+ {re.escape(heading)}$", (out / "paper.md").read_text())
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    figs = {f["figure_id"]: f for f in meta["figures"]}
    assert sorted(figs) == sorted(want.figures)  # ids from the paper's numbers, no extras
    for fid, w in want.figures.items():
        fig = figs[fid]
        image = f"figures/{fid.rstrip('ab')}.png"  # panels a, b share their figure's image
        assert fig["caption"] == w["caption"] and fig["image"] == image
        assert (out / fig["image"]).read_bytes().startswith(b"\x89PNG")
        words = re.sub(r"^(Fig\.|Figure) \d+ ?[.:|] ", "", w["caption"])
        assert fig["title"] == words.split(". ")[0].rstrip(".")
        if "x" in w:  # a vector figure: its labels are text
            assert fig["x_axis"]["label"] == f"TODO confirm: {w['x']}"
            assert fig["y_axes"]["left"]["label"] == f"TODO confirm: {w['y']}"
        right = fig["y_axes"].get("right")
        found_right = (right or {}).get("label")
        assert found_right == (f"TODO confirm: {w['right']}" if "right" in w else None)
    account = json.loads((out / ACCOUNT).read_text())["lines"]
    for line in account:  # a figure's own text is inside its image, never a sentence
        if line["to"] != "paper.md":
            assert len(line["text"].split()) < 5, line
    capsys.readouterr()
    main(["check", str(out)])
    assert "is not in" not in capsys.readouterr().err


def test_two_columns_keep_numbers_beside_figures_and_tables(tmp_path, capsys):
    """The sentences right under a figure's caption, the equation and the table of
    Lorentz-Drude parameters are in paper.md in reading order (left column, then
    right); the table's numbers are offered as key values; a bullet that names a
    figure is text, not its caption; the two-axis figure has its right axis."""
    _, out = made("two_column", tmp_path, capsys)
    text = norm((out / "paper.md").read_text())
    order = ["1. Methods", "Fig. 1.", "intercept is 612.3 nm", "2. Model", "Table 1.", "L2 0.124"]
    at = [text.index(s) for s in order]
    assert at == sorted(at), at
    assert "| Term | f | ωp (eV) | γ (eV) |" in (out / "paper.md").read_text()
    assert "iγjω) (1)" in text
    assert "• Figure 2 shows the real and imaginary parts" in text
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    kv = {(k["quantity"], k["unit"]): k["value"] for k in meta["key_values"]}
    assert kv[("Drude: ωp", "eV")] == 9.01 and kv[("L1: γ", "eV")] == 3.886
    assert kv[("L2: f", "1")] == 0.124 and len(kv) == 9
    fig2 = next(f for f in meta["figures"] if f["figure_id"] == "fig2")
    assert fig2["y_axes"]["right"]["label"] == "TODO confirm: Im ε"
    assert [c["label"] for c in fig2["curves"]] == ["TODO confirm: Re ε"]  # one legend entry
    assert fig2["curves"][0]["y_axis"].startswith("TODO: left or right")
    assert fig2["x_axis"]["quantity"] == "TODO confirm: energy"


def test_check_names_text_that_went_missing(tmp_path, capsys):
    """Text deleted from paper.md and a figure image deleted after new-paper are each
    named by `check` with the page and the text; the rest stays quiet."""
    _, out = made("two_column", tmp_path, capsys)
    md = out / "paper.md"
    md.write_text(md.read_text().replace("The penetration depth is 23 nm", "It is"))
    (out / "figures" / "fig2.png").unlink()
    capsys.readouterr()
    assert main(["check", str(out)]) == 1
    err = capsys.readouterr().err
    missing = [ln for ln in err.splitlines() if "is not in" in ln]
    lost = "page 1 of two_column.pdf is not in paper.md: 'The penetration"
    assert any(lost in m for m in missing)
    assert any("is not in the image figures/fig2.png: 'Photon energy (eV)'" in m for m in missing)
    assert not any("612.3" in m or "Drude" in m for m in missing)
    (out / ACCOUNT).write_text("{not json")
    assert main(["check", str(out)]) == 1
    assert f"{ACCOUNT}: cannot be read" in capsys.readouterr().err
