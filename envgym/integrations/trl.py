"""Train any envgym env with TRL's ``GRPOTrainer`` (TRL >= 1.16), through either of its two hooks.

**How TRL's rows map to envgym tasks.** :func:`envgym_dataset` builds the ``train_dataset``: one row per task
index ``i``, whose ``prompt`` is the env's first messages for task ``i`` (each message also carries
``"envgym_task_index": i``), plus ``task_index`` and ``task_id`` columns. TRL's sampler repeats every row
``num_generations`` times in a row, so the G completions of a GRPO group are G episodes of the same task: the
env is reset with ``options={"task_index": i}``, which is deterministic. The task index travels inside the
prompt messages because TRL hands a ``rollout_func`` the prompts alone, not the rows.

**rollout_func** (any env): ``GRPOTrainer(rollout_func=envgym_rollout_func(env_id), reward_funcs=
envgym_reward_func, train_dataset=envgym_dataset(env_id, n))``. envgym's own token-level agent loop
(:func:`envgym.agents.rollout.rollout`) plays whole multi-turn episodes with the model TRL is training; TRL
gets the episode's tokens as they were sampled (never re-tokenized), ``env_mask`` = envgym's loss mask (0 for
env, tool and template tokens, which TRL then leaves out of the loss), and per-turn rewards as extra fields
its reward functions read.

**environment_factory** (tool envs): ``GRPOTrainer(environment_factory=envgym_environment_factory(env_id,
prompt_format=None), reward_funcs=envgym_environment_reward, train_dataset=...)``. TRL's own tool loop plays
the episode: each tool of the env's :class:`~envgym.tools.ToolEnv` is a method of the environment object
(see :mod:`envgym.integrations.trl_environment`).

Failures of the env, its verifier or a sandbox are never a reward of 0: such an episode's reward is ``None``
(TRL gives it advantage 0) and its loss mask is all 0; a batch in which every episode failed raises.
See docs/integrations.md for runnable examples and the limits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import envgym
from envgym.core import Message
from envgym.integrations.trl_environment import (
    EnvgymToolEnvironment,
    check_prompt,
    envgym_environment_factory,
    require_trl,
)

TASK_KEY = "envgym_task_index"
"""The key, on every prompt message of a row of :func:`envgym_dataset`, that names the row's task index."""

__all__ = [
    "TASK_KEY",
    "EnvgymRolloutFunc",
    "EnvgymToolEnvironment",
    "envgym_component_reward",
    "envgym_dataset",
    "envgym_environment_factory",
    "envgym_environment_reward",
    "envgym_reward_func",
    "envgym_rollout_func",
    "task_index_of",
    "trl_batch",
]


def envgym_dataset(env_id: str, tasks: int | Sequence[int], **env_kwargs: Any) -> Any:
    """A ``datasets.Dataset`` with one row per task: ``prompt`` (tagged with :data:`TASK_KEY`), ``task_index``,
    ``task_id``.

    tasks: how many (task indices ``0..tasks-1``) or which task indices, e.g. ``range(1000, 1100)`` for a
        held-out split of a procedural env. ``env_kwargs`` go to :func:`envgym.make`; build the rollout function
        or environment factory with the same ones (their ``reset`` checks that the prompts agree).
    """
    from datasets import Dataset

    indices = list(range(tasks)) if isinstance(tasks, int) else [int(i) for i in tasks]
    if not indices:
        raise ValueError("envgym_dataset needs at least one task: give a count >= 1 or a non-empty list of indices")
    env = envgym.make(env_id, **env_kwargs)
    try:
        source = env.unwrapped.tasks
        if source is None:
            raise ValueError(f"{env_id} has no task source, so a dataset row cannot name the task a GRPO group plays")
        out_of_range = [i for i in indices if not 0 <= i < len(source)]
        if out_of_range:
            raise ValueError(f"task indices {out_of_range[:5]} are out of range: {env_id} has {len(source)} tasks")
        rows = []
        for index in indices:
            messages, info = env.reset(seed=index, options={"task_index": index})
            rows.append(
                {
                    "prompt": [{**message, TASK_KEY: index} for message in messages],
                    "task_index": index,
                    "task_id": info.get("task_id"),
                }
            )
    finally:
        env.close()
    return Dataset.from_list(rows)


def task_index_of(prompt: Any) -> int:
    """The task index a prompt from :func:`envgym_dataset` carries; a clear error for any other prompt."""
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict) and prompt[0].get(TASK_KEY) is not None:
        return int(prompt[0][TASK_KEY])
    raise ValueError(
        f"this prompt does not come from envgym_dataset (its messages carry no {TASK_KEY!r}), so the "
        f"envgym task it stands for is unknown; build train_dataset with envgym_dataset(env_id, n). "
        f"Got {prompt!r:.200}"
    )


class EnvgymRolloutFunc:
    """A TRL ``rollout_func``: plays one envgym episode per prompt with the model the trainer is training.

    Made by :func:`envgym_rollout_func`. ``last_result`` holds the last call's
    :class:`~envgym.agents.rollout.RolloutResult` (episodes and token trajectories), e.g. to write episodes to
    JSONL from a callback.
    """

    def __init__(
        self,
        env_id: str,
        *,
        max_turn_tokens: int | None = None,
        template_tools: bool = False,
        vector_mode: str = "sync",
        **env_kwargs: Any,
    ):
        if max_turn_tokens is not None and max_turn_tokens < 1:
            raise ValueError(f"max_turn_tokens must be >= 1 or None, got {max_turn_tokens}")
        require_trl()
        envgym.spec(env_id)  # an unknown id fails here, with "did you mean", not at the first training step
        self.env_id, self.env_kwargs = env_id, env_kwargs
        self.max_turn_tokens = max_turn_tokens
        self.template_tools, self.vector_mode = template_tools, vector_mode
        self.last_result: Any = None
        self._envs: dict[int, envgym.VectorEnv] = {}
        self._calls = 0

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """TRL's hook: ``prompts`` are this process's rows (each repeated ``num_generations`` times in a row)."""
        from envgym.agents.engines.policy import SamplingParams
        from envgym.agents.rollout import rollout
        from envgym.integrations.trl_policy import TrainerPolicy

        _check_trainer(trainer)
        indices = [task_index_of(prompt) for prompt in prompts]
        num_generations = _num_generations(indices)
        budget = trainer.max_completion_length
        sampling = SamplingParams(
            max_completion_length=min(self.max_turn_tokens or budget, budget),
            temperature=trainer.temperature,
            top_p=trainer.top_p,
        )
        # Seeds depend on (TRL's seed, call) only; a group shares one seed, so its G envs start identically.
        seed = trainer.args.seed * 1_000_003 + self._calls * len(prompts)
        self._calls += 1
        result = rollout(
            TrainerPolicy(trainer),
            self._vector_env(len(prompts)),
            sampling=sampling,
            num_generations=num_generations,
            task_indices=indices[::num_generations],
            seed=seed,
            max_episode_tokens=budget,
            template_tools=self.template_tools,
        )
        self.last_result = result
        for prompt, index, episode in zip(prompts, indices, result.episodes):
            if not episode.failed:  # an env that failed at reset has no prompt to compare
                check_prompt(prompt, episode.prompt, self.env_id, index)
        _refuse_all_failed([episode.error for episode in result.episodes], self.env_id)
        return trl_batch(result.trajectories, trainer.eos_token_ids[0])

    def _vector_env(self, num_envs: int) -> envgym.VectorEnv:
        """Envs are made once per batch size and reused (TRL's batch size is fixed, so usually once)."""
        if num_envs not in self._envs:
            self._envs[num_envs] = envgym.make_vec(self.env_id, num_envs, mode=self.vector_mode, **self.env_kwargs)
        return self._envs[num_envs]

    def close(self) -> None:
        for envs in self._envs.values():
            envs.close()
        self._envs.clear()


def envgym_rollout_func(
    env_id: str,
    *,
    max_turn_tokens: int | None = None,
    template_tools: bool = False,
    vector_mode: str = "sync",
    **env_kwargs: Any,
) -> EnvgymRolloutFunc:
    """A ``rollout_func`` for ``GRPOTrainer`` that plays ``env_id`` (made with ``env_kwargs``) with envgym's loop.

    Sampling follows the trainer's ``GRPOConfig``: ``temperature``, ``top_p``, and ``max_completion_length`` as
    the token budget of a whole episode (policy, env and template tokens together, as TRL counts them).
    The env's turn limit is its own: ``max_turns`` in ``env_kwargs`` sets it, as for :func:`envgym.make`.
    max_turn_tokens: most tokens of one assistant turn (default: the whole budget).
    template_tools: pass the env's tool schemas to the chat template (for envs made with ``prompt_format=None``).
    vector_mode: ``sync``, ``thread`` or ``process`` (see :func:`envgym.make_vec`).
    """
    return EnvgymRolloutFunc(
        env_id,
        max_turn_tokens=max_turn_tokens,
        template_tools=template_tools,
        vector_mode=vector_mode,
        **env_kwargs,
    )


def trl_batch(trajectories: Sequence[Any], eos_id: int) -> dict[str, list[Any]]:
    """The dict TRL expects from a ``rollout_func``, one entry per trajectory.

    ``completion_ids`` end at the last policy token: the template text that closes the final turn comes after
    everything the model conditioned on, and TRL reads a completion that does not end in EOS as cut by the
    length limit. An episode that failed keeps its tokens with ``env_mask`` all 0 (it trains nothing); one
    with no turn at all gets a single masked EOS, since TRL cannot take an empty completion.
    """
    batch: dict[str, list[Any]] = {
        key: []
        for key in (
            "prompt_ids",
            "completion_ids",
            "logprobs",
            "env_mask",
            "envgym_return",
            "envgym_turn_rewards",
            "envgym_reward_components",
            "envgym_error",
            "envgym_truncated",
            "envgym_task_id",
        )
    }
    for trajectory in trajectories:
        end = trajectory.turn_ends[-1] + 1 if trajectory.turn_ends else 0
        ids, logprobs, mask = trajectory.completion_ids[:end], trajectory.logprobs[:end], trajectory.loss_mask[:end]
        if not ids:
            ids, logprobs, mask = [eos_id], [0.0], [0]
        if trajectory.failed:
            mask = [0] * len(ids)
        components: dict[str, float] = {}
        for turn in trajectory.turn_reward_components:
            for name, value in turn.items():
                components[name] = components.get(name, 0.0) + value
        batch["prompt_ids"].append(list(trajectory.prompt_ids))
        batch["completion_ids"].append(list(ids))
        batch["logprobs"].append(list(logprobs))
        batch["env_mask"].append(list(mask))
        batch["envgym_return"].append(None if trajectory.failed else trajectory.total_reward)
        batch["envgym_turn_rewards"].append(list(trajectory.turn_rewards))
        batch["envgym_reward_components"].append(components)
        batch["envgym_error"].append(trajectory.error)
        batch["envgym_truncated"].append(trajectory.truncated)
        batch["envgym_task_id"].append(trajectory.episode.task_id)
    return batch


def envgym_reward_func(
    completions: list[Any],
    envgym_return: list[float | None],
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """TRL reward function for :func:`envgym_rollout_func`: each episode's return (the sum of its per-turn
    rewards); ``None`` for an episode that failed (TRL gives it advantage 0). Logs
    ``envgym/failed_fraction``."""
    if log_metric is not None:
        log_metric("envgym/failed_fraction", sum(r is None for r in envgym_return) / max(len(envgym_return), 1))
    return list(envgym_return)


def envgym_component_reward(name: str) -> Callable[..., list[float | None]]:
    """A TRL reward function for one named reward component (summed over the episode's turns), so TRL logs
    each part apart and ``GRPOConfig.reward_weights`` weighs them; use these *instead of*
    :func:`envgym_reward_func`, not beside it. A component an episode never reported counts 0."""

    def component_reward(
        completions: list[Any],
        envgym_reward_components: list[dict[str, float]],
        envgym_error: list[str | None],
        **kwargs: Any,
    ) -> list[float | None]:
        return [
            None if error is not None else float(components.get(name, 0.0))
            for components, error in zip(envgym_reward_components, envgym_error)
        ]

    component_reward.__name__ = f"envgym_{name}"
    return component_reward


def envgym_environment_reward(
    completions: list[list[Message]],
    environments: list[EnvgymToolEnvironment],
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """TRL reward function for :func:`envgym_environment_factory`: hands each rollout's final assistant turn to
    its environment object (TRL never shows it to the environment, and envgym's verifiers grade it) and returns
    the episode's return; ``None`` for an episode that failed. Logs ``envgym/failed_fraction``."""
    if any(not isinstance(environment, EnvgymToolEnvironment) for environment in environments):
        raise TypeError(
            "envgym_environment_reward needs the environments of envgym_environment_factory; got "
            f"{sorted({type(e).__name__ for e in environments})}"
        )
    rewards = [environment._finish(completion) for completion, environment in zip(completions, environments)]
    _refuse_all_failed([environment.episode.error for environment in environments], "the environment factory")
    if log_metric is not None:
        log_metric("envgym/failed_fraction", sum(r is None for r in rewards) / max(len(rewards), 1))
    return rewards


def _refuse_all_failed(errors: list[str | None], source: str) -> None:
    """Training on a batch where nothing could be scored would silently learn nothing: say so instead."""
    if errors and all(error is not None for error in errors):
        raise RuntimeError(
            f"every one of the {len(errors)} episodes of this batch failed in {source} (first error: "
            f"{errors[0]}); these are env/verifier/sandbox failures, not rewards, so there is "
            "nothing to train on"
        )


def _num_generations(indices: list[int]) -> int:
    """Length of the runs of equal task indices (TRL's GRPO groups), when they all have one length, else 1."""
    runs, start = [], 0
    for position in range(1, len(indices) + 1):
        if position == len(indices) or indices[position] != indices[start]:
            runs.append(position - start)
            start = position
    return runs[0] if len(set(runs)) == 1 else 1


def _check_trainer(trainer: Any) -> None:
    """Refuse GRPOConfig settings this rollout function would otherwise silently ignore."""
    problems = []
    if getattr(trainer, "use_vllm", False):
        problems.append("use_vllm=True (episodes are generated with the trainer's own model through transformers)")
    if getattr(trainer, "tools", None):
        problems.append("tools or environment_factory (the envgym env runs the tools; TRL's tool loop would run too)")
    if trainer.top_k not in (0, None):
        problems.append(f"top_k={trainer.top_k} (only top_p filtering is applied)")
    if trainer.min_p is not None:
        problems.append(f"min_p={trainer.min_p}")
    if trainer.repetition_penalty != 1.0:
        problems.append(f"repetition_penalty={trainer.repetition_penalty}")
    if trainer.args.generation_kwargs:
        problems.append(f"generation_kwargs={trainer.args.generation_kwargs!r}")
    if problems:
        raise ValueError("envgym_rollout_func cannot honour these GRPOTrainer settings: " + "; ".join(problems))
