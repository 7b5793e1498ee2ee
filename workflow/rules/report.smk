# `snakemake --report` needs every report()-flagged file of the DAG to exist, so only
# papers whose report was written flag it (REPORTED, common.smk); the others
# (unfinished) have the same rule without the flag: a campaign with an unfinished
# paper still reports.


rule report:
    input:
        unpack(get_report_inputs),
    output:
        report=report(
            f"{PAPER_OUT}/REPRODUCTION_REPORT_{{paper}}.md",
            caption="../report/report_md.rst",
            category="Reproduction report",
        ),
        html=report(
            f"{PAPER_OUT}/REPRODUCTION_REPORT_{{paper}}.html",
            caption="../report/report_html.rst",
            category="Reproduction report",
        ),
    log:
        f"{PAPER_OUT}/logs/report.log",
    wildcard_constraints:
        paper=papers_regex(REPORTED),
    localrule: True
    script:
        "../scripts/report.py"


use rule report as report_first with:
    output:
        report=f"{PAPER_OUT}/REPRODUCTION_REPORT_{{paper}}.md",
        html=f"{PAPER_OUT}/REPRODUCTION_REPORT_{{paper}}.html",
    wildcard_constraints:
        paper=papers_regex([p for p in PAPERS if p not in REPORTED]),
    localrule: True


rule debug_summary:
    input:
        unpack(get_debug_inputs),
    output:
        summary=f"{PAPER_OUT}/debug_summary.json",
    log:
        f"{PAPER_OUT}/logs/debug_summary.log",
    localrule: True
    script:
        "../scripts/debug_summary.py"


# A campaign (two or more papers): one index linking every paper's report.
if len(PAPERS) > 1 and not DEBUG:

    rule report_index:
        input:
            expand(f"{OUT}/{{paper}}/REPRODUCTION_REPORT_{{paper}}.md", paper=PAPERS),
        output:
            md=f"{OUT}/REPORTS_INDEX.md",
            html=f"{OUT}/REPORTS_INDEX.html",
        log:
            f"{OUT}/.logs/report_index.log",
        localrule: True
        script:
            "../scripts/report_index.py"
