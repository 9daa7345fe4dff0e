"""Science environments: multiple-choice questions with computed answers (Guru's science domain)."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the science envs."""
    register(
        "science/MultipleChoice-v0",
        "envgym.envs.science.multiple_choice:MultipleChoice",
        max_turns=1,
        description="Physics/chemistry/units multiple choice with computed answers, or GPQA/MMLU-Pro files "
        "(path=...); a letter or the option's text in \\boxed{}.",
    )
