rule report:
    input:
        unpack(get_report_inputs),
    output:
        report=f"{PAPER_OUT}/REPRODUCTION_REPORT_{{paper}}.md",
    log:
        f"{PAPER_OUT}/logs/report.log",
    localrule: True
    script:
        "../scripts/report.py"
