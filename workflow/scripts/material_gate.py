from reprolab.smk import step
from reprolab.steps.material import MATERIAL_GATE, material_gate

with step(snakemake) as run:
    material_gate(
        run.paper_id,
        snakemake.input.plan,
        snakemake.input.stage0,
        snakemake.input.decision[0] if snakemake.input.decision else None,
        snakemake.output.validated,
        wait_s=run.gate_wait_s,
        auto_approve=MATERIAL_GATE in run.auto_approve,
    )
