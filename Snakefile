from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


# What the user set before the schema fills in defaults (reprolab.settings.apply_executor).
USER_SIMULATION = dict(config.get("simulation") or {})


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/settings.smk"
include: "workflow/rules/plan.smk"
include: "workflow/rules/stages.smk"
include: "workflow/rules/gates.smk"
include: "workflow/rules/report.smk"


onstart:
    # One run per outputs folder, even from another working directory.
    lock_outputs_or_stop(config.get("outputs_dir", "outputs"))
    # The executor is known only once the run starts; steps read this config.
    apply_executor(config, USER_SIMULATION, workflow.executor_plugin.name)


onerror:
    write_partial_reports_on_error(sys.argv)


rule all:
    default_target: True
    input:
        all_targets(),
