"""The project explains itself: its code, comments and documents point only to things in
a clone of the repository (no ticket numbers, no design documents kept elsewhere), and
every link of README.md and docs/*.md leads to a file and heading that exist."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]
SELF = Path(__file__).resolve()

# Where the project speaks: code, comments, docstrings, documents, configuration.
SCANNED = [
    REPO / "README.md",
    REPO / "Makefile",
    REPO / "Snakefile",
    *sorted((REPO / "docs").glob("*.md")),
    *(
        path
        for folder in ("reprolab", "agents", "workflow", "benchmarks", "tests", "knowledge")
        for path in sorted((REPO / folder).rglob("*"))
        if path.suffix in {".py", ".smk", ".md", ".yaml"} and "__pycache__" not in path.parts
    ),
    *sorted((REPO / "prompts").glob("*.md")),
    *sorted((REPO / "config").glob("*.yaml")),
    *sorted((REPO / "envs").glob("*")),
    *sorted((REPO / "scripts").glob("*.sh")),
]

# Each pattern names a kind of pointer out of the repository. Random seeds ("seed=",
# "rng seed", `font_cache.seed`) and colours ("color:#222") are not such pointers.
OUTSIDE = {
    "the design documents the project started from": re.compile(
        r"\bthe seed\b(?!\s*[=(])|\bseed's\b|\bseeds? \d+|\bseeds/", re.IGNORECASE
    ),
    "a ticket number": re.compile(
        r"\b(issues?|tickets?) ?#?\d+|\bPR #\d+|(?<![\w&/:#'\"-])#\d+\b(?!;)", re.IGNORECASE
    ),
    "a document outside the repository": re.compile(
        r"\bshared/|PHYSICS_CHECKS|\b(ENVIRONMENT|DESIGN|STYLE)\.md\b"
    ),
}


def outside_references(text: str) -> list[str]:
    """`line: text (what it points to)` for each pointer out of the repository."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if re.search(r"random|rng|np\.random", line, re.IGNORECASE):
            continue
        for what, pattern in OUTSIDE.items():
            if pattern.search(line):
                found.append(f"{number}: {line.strip()} ({what})")
    return found


def test_the_patterns_tell_outside_references_from_ordinary_text():
    outside = [
        "Backtracks (the seed's decision matrix).",
        "One protocol (seed 004) for every gate.",
        "The floors under issue #19's three targets.",
        "A stop (issue 18, items 1-2).",
        "What the record costs (#14: its sampler).",
        "Thresholds from shared/PHYSICS_CHECKS.md rows 5 and 6.",
        "As in DESIGN.md.",
    ]
    ordinary = [
        "np.random.seed(3)  # the seed of the generator",
        "font_cache.seed(run_cache, python)",
        "def seed(run_cache: Path, python: str) -> list[str]:",
        "body{color:#222}",
        "## 3. Checks",
        "| # | check | fail |",
        "a shared project folder (umask 002)",
        "the agent's issues: blocking issues force a revision",
        "    # A comment about MPI rank 0",
        'for text in ("#3 is the sharpest resonance.", "#tag"):  # a quoted string',
    ]
    assert all(outside_references(line) for line in outside), [
        line for line in outside if not outside_references(line)
    ]
    assert not any(outside_references(line) for line in ordinary), [
        outside_references(line) for line in ordinary
    ]


@pytest.mark.parametrize(
    "path",
    [p for p in SCANNED if p.is_file() and p.resolve() != SELF],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_no_reference_outside_the_repository(path):
    found = outside_references(path.read_text(encoding="utf-8", errors="replace"))
    assert not found, (
        f"{path.relative_to(REPO)} points outside the repository; say it in the "
        f"project's own words, or write the fact into docs/ and point there:\n" + "\n".join(found)
    )


def slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_leads_to_a_file_and_heading_that_exist(doc):
    text = doc.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, f"{doc.relative_to(REPO)}: " + "; ".join(broken)


def test_the_readme_links_every_page_of_docs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in (REPO / "docs").glob("*.md")}
    assert pages and not {p for p in pages if f"docs/{p}" not in readme}, pages
