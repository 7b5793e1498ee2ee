# The mandatory material checkpoint after stage 0. It blocks only this paper's
# branch: the gate rule fails with instructions until the decision file exists.

if "material_checkpoint" in AUTO_APPROVE:

    rule auto_approve_material:
        input:
            unpack(get_stage0_for_gate),
            plan=get_plan_kept,
        output:
            decision=f"{PAPER_OUT}/gates/material_checkpoint.json",
        log:
            f"{PAPER_OUT}/logs/auto_approve_material.log",
        localrule: True
        script:
            "../scripts/auto_approve_material.py"


rule material_gate:
    input:
        unpack(get_stage0_for_gate),
        plan=get_plan_kept,
        decision=get_gate_decision,
    output:
        validated=f"{PAPER_OUT}/validated_materials.json",
    log:
        f"{PAPER_OUT}/logs/material_gate.log",
    localrule: True
    script:
        "../scripts/material_gate.py"
