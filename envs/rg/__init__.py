"""reasoning-gym tasks as envs: ``rg/<task>-v0`` for every task (needs ``pip install envgym[data]``).

Tasks in :data:`envgym.envs.rg.excluded.EXCLUDED` are registered ``unsafe=True`` with the reason: their
rewards do not hold under attack, so ``envgym.make`` builds them only with ``allow_unsafe=True``.
"""

import importlib.util

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group; registers nothing when reasoning-gym is not installed."""
    if importlib.util.find_spec("reasoning_gym") is None:
        return
    from envgym.envs.rg.excluded import EXCLUDED
    from envgym.envs.rg.tasks import TASKS

    for task in TASKS:
        register(
            f"rg/{task}-v0",
            "envgym.envs.rg.env:ReasoningGymEnv",
            max_turns=1,
            description=f"reasoning-gym task {task!r}; answer in <answer></answer>, scored by the task's own scorer.",
            unsafe=task in EXCLUDED,
            unsafe_reason=EXCLUDED.get(task, ""),
            task=task,
        )
