rule adapt_prompts:
    input:
        paper=get_paper_text,
    output:
        adaptations=f"{PAPER_OUT}/prompt_adaptations.json",
        log_md=f"{PAPER_OUT}/adaptation_log.md",
    log:
        f"{PAPER_OUT}/logs/adapt_prompts.log",
    localrule: True
    script:
        "../scripts/adapt_prompts.py"


checkpoint plan:
    input:
        paper=get_paper_text,
        adaptations=f"{PAPER_OUT}/prompt_adaptations.json",
        replan=get_replan_request,
    output:
        plan=f"{PAPER_OUT}/plan.json",
    log:
        f"{PAPER_OUT}/logs/plan.log",
    localrule: True
    script:
        "../scripts/plan.py"
