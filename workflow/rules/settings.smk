# Settings that decide what some steps compute, as files whose jobs rerun only when
# the setting changes (params). A rule output, not an input read at load time: a
# rerunning job here reaches every consumer, while a newer input file is not seen by
# jobs downstream of another rerunning job across an ancient() edge (Snakemake masks
# them), as the stages' dependency edges are.


rule simulation_settings:
    output:
        settings=SIMULATION_SETTINGS,
    log:
        f"{OUT}/.settings/logs/simulation_settings.log",
    localrule: True
    params:
        # What changes a run (ranks, memory, a sweep point's time share), not where
        # it runs (executor, launcher, Slurm options).
        value=lambda wildcards: simulation_params(config),
    script:
        "../scripts/write_setting.py"


rule figure_x_range:
    output:
        x_range=f"{PAPER_OUT}/.inputs/{{figure}}.x_range.json",
    log:
        f"{PAPER_OUT}/logs/settings/{{figure}}.x_range.log",
    localrule: True
    params:
        # The x range of each of the figure's digitized curves: what a design's lint
        # reads of the data (a changed y value does not redo a design).
        value=lambda wildcards: figure_x_ranges(paper_of(wildcards))[wildcards.figure],
    script:
        "../scripts/write_setting.py"


rule figure_data:
    output:
        stamps=f"{PAPER_OUT}/.inputs/{{figure}}.data.json",
    log:
        f"{PAPER_OUT}/logs/settings/{{figure}}.data.log",
    localrule: True
    params:
        # When the metadata and the figure's digitized data last changed: read beside
        # those files by the judging steps, it reaches a stage downstream of another
        # stage that reruns for the same edit (there the files' own edges are masked).
        value=lambda wildcards: figure_stamps(wildcards, "data"),
    script:
        "../scripts/write_setting.py"


rule figure_image:
    output:
        stamps=f"{PAPER_OUT}/.inputs/{{figure}}.image.json",
    log:
        f"{PAPER_OUT}/logs/settings/{{figure}}.image.log",
    localrule: True
    params:
        # When the figure's image last changed: read by the analysis (as above).
        value=lambda wildcards: figure_stamps(wildcards, "image"),
    script:
        "../scripts/write_setting.py"


rule stated_result:
    output:
        stated=f"{PAPER_OUT}/.inputs/{{figure}}.stated.json",
    log:
        f"{PAPER_OUT}/logs/settings/{{figure}}.stated.log",
    localrule: True
    params:
        # What the comparison reads of metadata.yaml for one figure or table (a table's
        # stated values, key values): an edit reruns the judgement of the stage that
        # targets it, and nothing else.
        value=lambda wildcards: stated_results(paper_of(wildcards))[wildcards.figure],
    script:
        "../scripts/write_setting.py"


rule stage_inputs:
    input:
        plan=get_plan_kept,
        adaptations=ADAPTATIONS_KEPT,
    output:
        # Beside the paper's other settings, not in the stage's folder: nothing of a
        # stage exists before it may run (e.g. while the material gate waits).
        stage=f"{PAPER_OUT}/.inputs/{{stage}}.stage.json",
    log:
        f"{PAPER_OUT}/logs/settings/{{stage}}.stage_inputs.log",
    localrule: True
    params:
        # A replan or a rerun of prompt adaptation that leaves this stage's entry and
        # the adaptations as they were redoes nothing of the stage.
        value=stage_inputs_value,
    script:
        "../scripts/write_setting.py"
