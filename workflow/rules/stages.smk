# One stage: design -> code -> simulate -> checks -> comparison -> analysis -> verdict.
# Agent steps run where snakemake was launched (localrule); the simulation is
# submitted through submitit (Slurm or local) by the simulate rule, which waits for it.


rule design:
    input:
        unpack(get_design_inputs),
    output:
        design=f"{STAGE_OUT}/design.json",
    log:
        f"{STAGE_OUT}/logs/design.log",
    priority: stage_priority
    localrule: True
    script:
        "../scripts/design.py"


rule generate_code:
    input:
        design=f"{STAGE_OUT}/design.json",
        adaptations=ADAPTATIONS_KEPT,
    output:
        code=f"{STAGE_OUT}/code.json",
        script=f"{STAGE_OUT}/simulation.py",
    log:
        f"{STAGE_OUT}/logs/generate_code.log",
    priority: stage_priority
    localrule: True
    script:
        "../scripts/generate_code.py"


rule simulate:
    input:
        code=f"{STAGE_OUT}/code.json",
        script=f"{STAGE_OUT}/simulation.py",
        design=f"{STAGE_OUT}/design.json",
        plan=get_plan_kept,
        # Settings that change what a run is (ranks, memory, a sweep point's time
        # share): changing one reruns the simulation; executor and launcher do not.
        settings=SIMULATION_SETTINGS,
    output:
        result=f"{STAGE_OUT}/result.json",
    log:
        f"{STAGE_OUT}/logs/simulate.log",
    priority: stage_priority
    localrule: True
    conda:
        "../../envs/reprolab.yaml"
    # Its ranks, counted against --cores; the job keeps within what it is given.
    threads: simulate_threads
    script:
        "../scripts/simulate.py"


rule check_results:
    input:
        result=f"{STAGE_OUT}/result.json",
        code=f"{STAGE_OUT}/code.json",
        design=f"{STAGE_OUT}/design.json",
    output:
        checks=report(
            f"{STAGE_OUT}/checks.json",
            caption="../report/checks.rst",
            category="Checks",
        ),
    log:
        f"{STAGE_OUT}/logs/check_results.log",
    localrule: True
    script:
        "../scripts/check_results.py"


rule validate_run:
    input:
        result=f"{STAGE_OUT}/result.json",
        checks=f"{STAGE_OUT}/checks.json",
        code=f"{STAGE_OUT}/code.json",
        design=f"{STAGE_OUT}/design.json",
        plan=get_plan_kept,
        adaptations=ADAPTATIONS_KEPT,
    output:
        validation=f"{STAGE_OUT}/run_validation.json",
    log:
        f"{STAGE_OUT}/logs/validate_run.log",
    localrule: True
    script:
        "../scripts/validate_run.py"


rule compare_figures:
    input:
        design=f"{STAGE_OUT}/design.json",
        checks=f"{STAGE_OUT}/checks.json",
        paper=get_figure_data,
        # What carries an edit of those files past a stage rerunning for the same edit.
        stamps=get_figure_stamps,
    output:
        comparison=report(
            f"{STAGE_OUT}/comparison.json",
            caption="../report/comparison.rst",
            category="Comparisons",
        ),
    log:
        f"{STAGE_OUT}/logs/compare_figures.log",
    localrule: True
    script:
        "../scripts/compare_figures.py"


rule analyze:
    input:
        plan=get_plan_kept,
        comparison=f"{STAGE_OUT}/comparison.json",
        checks=f"{STAGE_OUT}/checks.json",
        validation=f"{STAGE_OUT}/run_validation.json",
        design=f"{STAGE_OUT}/design.json",
        adaptations=ADAPTATIONS_KEPT,
        paper=get_figure_data,
        images=get_figure_images,
        stamps=get_figure_stamps,
        image_stamps=get_image_stamps,
    output:
        analysis=f"{STAGE_OUT}/analysis.json",
    log:
        f"{STAGE_OUT}/logs/analyze.log",
    localrule: True
    script:
        "../scripts/analyze.py"


rule stage_verdict:
    input:
        plan=get_plan_kept,
        checks=f"{STAGE_OUT}/checks.json",
        comparison=f"{STAGE_OUT}/comparison.json",
        analysis=f"{STAGE_OUT}/analysis.json",
        validation=f"{STAGE_OUT}/run_validation.json",
        adaptations=ADAPTATIONS_KEPT,
        convergence=get_stage_convergence,
    output:
        verdict=f"{STAGE_OUT}/verdict.json",
    log:
        f"{STAGE_OUT}/logs/stage_verdict.log",
    localrule: True
    script:
        "../scripts/stage_verdict.py"


rule convergence:
    input:
        design=f"{STAGE_OUT}/design.json",
        code=f"{STAGE_OUT}/code.json",
        script=f"{STAGE_OUT}/simulation.py",
        checks=f"{STAGE_OUT}/checks.json",
        result=f"{STAGE_OUT}/result.json",
        plan=get_plan_kept,
        # the figure's x grid and key values; a changed one recompares (no rerun)
        paper=get_figure_data,
        stamps=get_figure_stamps,
    output:
        convergence=f"{STAGE_OUT}/convergence.json",
    log:
        f"{STAGE_OUT}/logs/convergence.log",
    localrule: True
    # A rerun starts the stage's job again: its ranks count against --cores too.
    threads: simulate_threads
    script:
        "../scripts/convergence.py"
