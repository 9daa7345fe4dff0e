"""Single-turn episodes played by hand and recorded as the rollout loop records them, for group-reward tests that
need no model."""

from __future__ import annotations

import envgym
from envgym.agents.trajectory import Trajectory


def played(env, task_index: int, response: str, seed: int = 0) -> Trajectory:
    """One single-turn episode of ``env`` (task ``task_index``) answered with ``response``."""
    env.reset(seed=seed, options={"task_index": task_index})
    episode = envgym.Episode(env_id="test", task_id=env.task.id, prompt=env.task.prompt())
    _, reward, terminated, truncated, info = env.step(response)
    turn = episode.add_turn(response, [], reward, terminated, truncated, info)
    return Trajectory(
        episode=episode,
        prompt_ids=[1],
        completion_ids=[2],
        logprobs=[0.0],
        loss_mask=[1],
        turn_ends=[0],
        turn_rewards=[turn.reward],
        turn_reward_components=[dict(turn.reward_components)],
        truncated=False,
        group_id=str(task_index),
        turn_reward_weights=[dict(info.get("reward_weights") or {})],
    )
