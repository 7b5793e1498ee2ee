"""Cost presets: which model each agent uses, chosen by name (config provider.preset).

`top` puts every agent on the provider's model (claude-opus-4-5 by default);
`balanced` moves the reviewers and validators, whose answers code checks again, to
claude-sonnet-4-5; `economy` puts the authors on claude-sonnet-4-5 and the reviewers
and validators on claude-haiku-4-5. `provider.models` still overrides any agent.
What each costs on the example papers is in docs/agents.md ("Cost presets").
"""

from __future__ import annotations

from reprolab.errors import ReproLabError

REVIEWERS_AND_VALIDATORS = (
    "plan_reviewer",
    "design_reviewer",
    "code_reviewer",
    "execution_validator",
    "physics_sanity",
    "comparison_validator",
)
AUTHORS = (
    "prompt_adaptor",
    "planner",
    "simulation_designer",
    "code_generator",
    "results_analyzer",
    "supervisor",
)
DEFAULT_MODEL = "claude-opus-4-5"
"""The provider's model when config names none: every agent's under `top`."""
PRESETS: dict[str, dict[str, str]] = {
    "top": {},
    "balanced": dict.fromkeys(REVIEWERS_AND_VALIDATORS, "claude-sonnet-4-5"),
    "economy": dict.fromkeys(AUTHORS, "claude-sonnet-4-5")
    | dict.fromkeys(REVIEWERS_AND_VALIDATORS, "claude-haiku-4-5"),
}


def preset_models(name: str | None) -> dict[str, str]:
    """The per-agent models of preset `name` (none: every agent on the default model)."""
    if name is None:
        return {}
    if name not in PRESETS:
        raise ReproLabError(
            f"config provider.preset: '{name}' is not a preset (valid: {', '.join(PRESETS)})"
        )
    return dict(PRESETS[name])
