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
    localrule: True
    script:
        "../scripts/report.py"


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
