"""The campaign index step: with two or more papers in the config, one page linking
each paper's report (`reprolab.report.index`), written after the reports and, when a
run stops early, beside the PARTIAL reports."""

from __future__ import annotations

from pathlib import Path


def campaign_papers(config: dict) -> list[str]:
    from reprolab.settings import paper_entries

    return list(paper_entries(config))


def write_campaign_index(
    config: dict, out_md: str | Path | None = None, log: str | Path | None = None
) -> Path | None:
    """The index of a campaign (None for a single paper: its report is the page)."""
    from reprolab.fileio import atomic_write_text
    from reprolab.report import index

    papers = campaign_papers(config)
    if len(papers) < 2:
        return None
    outputs = Path(out_md).parent if out_md else Path(config.get("outputs_dir", "outputs"))
    path = index.write_index(outputs, papers)
    if log:
        atomic_write_text(log, f"{path}: index of {len(papers)} papers: {', '.join(papers)}\n")
    return path


def write_index_after_error(config: dict) -> Path | None:
    """The workflow's onerror: the index of what stands; its own failure is one line
    (the run's error is what matters)."""
    import sys

    try:
        path = write_campaign_index(config)
    except Exception as exc:  # noqa: BLE001 - never hide the run's own error
        print(f"[reprolab] no campaign index ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
    if path is not None:
        print(f"[reprolab] campaign index: {path}", file=sys.stderr)
    return path
