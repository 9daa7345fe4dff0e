"""The agent loop: drive a vector env turn by turn until every episode ends, keeping token trajectories.

Each round, the envs still in an episode are batched into one ``policy.generate`` call; only those envs
are stepped. With a token-level policy the conversation is kept as tokens (see
:mod:`envgym.agents.engines.tokens`), and every episode also yields a
:class:`~envgym.agents.trajectory.Trajectory`; with a message-level policy only episodes are returned.

GRPO groups: ``num_generations=G`` resets G consecutive envs on the same task (``options={"task_index": i}``
when ``task_indices`` are given, otherwise the same seed), and their trajectories share a ``group_id``.

Limits: ``sampling.max_completion_length`` per turn and ``max_episode_tokens`` for all completion tokens of an
episode (policy and env); the turn limit is the env's own (``envgym.make(..., max_turns=N)``, a ``TimeLimit``, the
one owner of it), which ends an episode truncated like any env. An episode cut by the loop's token limits
is marked truncated (``turn.truncated``, ``episode.metadata["truncated_by"]``).

Each env's episode is a :class:`Lane`: the episode being recorded, the message history and token conversation the
policy continues. A multi-agent env (:class:`~envgym.multiagent.MultiAgentEnv`, seen from ``info["agents"]`` at
reset) has :class:`~envgym.agents.seats.Seats` behind the same methods instead: the policy plays every seat, and
each seat that moved yields its own episode and trajectory (its own prompt, tokens, loss mask and rewards,
``metadata["agent"]``, a per-seat ``group_id``), in env order.

Failures are not rewards: when the env's reset or step reports ``info["error"]`` (an exception, a step
timeout, a sandbox ``infra_error``) or the policy's request for a turn failed (``Generation.error``), the
episode ends there with ``episode.error`` set, and the other episodes go on.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import envgym
from envgym.agents.engines.policy import Generation, Policy, SamplingParams
from envgym.agents.engines.templates import template_deltas
from envgym.agents.engines.tokens import TokenConversation
from envgym.agents.seats import Seats, assistant_message
from envgym.agents.trajectory import Trajectory
from envgym.core import Message
from envgym.multiagent import is_multi_agent


@dataclasses.dataclass
class RolloutResult:
    """Episodes in env order, their trajectories (token-level policies only), and where the time went."""

    episodes: list[envgym.Episode]
    trajectories: list[Trajectory]
    stats: dict[str, float]


def rollout(
    policy: Policy,
    envs: envgym.VectorEnv,
    *,
    sampling: SamplingParams | None = None,
    num_generations: int = 1,
    task_indices: Sequence[int] | None = None,
    seed: int | None = None,
    max_episode_tokens: int | None = None,
    template_tools: bool = False,
    on_round: Callable[[int, int], None] | None = None,
) -> RolloutResult:
    """Play one episode in every env of ``envs`` with ``policy`` (see the module docstring).

    template_tools: pass the env's ``info["tools"]`` (OpenAI schemas) to the chat template; leave it off
        for envs that already describe their tools in the prompt.
    on_round: called with (round number, envs still active) after each round, e.g. for a progress bar.
    """
    sampling = sampling or SamplingParams()
    n = envs.num_envs
    if num_generations < 1 or n % num_generations:
        raise ValueError(
            f"{n} envs cannot be split into groups of {num_generations}; num_envs must be a multiple of it"
        )
    groups = n // num_generations
    if task_indices is not None and len(task_indices) != groups:
        raise ValueError(
            f"got {len(task_indices)} task indices for {groups} groups ({n} envs / num_generations {num_generations})"
        )
    if num_generations > 1 and task_indices is None and seed is None:
        raise ValueError("a group must play one task: give task_indices (or a seed, which each group shares)")
    if max_episode_tokens is not None and max_episode_tokens < 1:
        raise ValueError(f"max_episode_tokens must be >= 1, got {max_episode_tokens}")

    seeds = [None if seed is None else seed + i // num_generations for i in range(n)]
    options = (
        None if task_indices is None else [{"task_index": int(task_indices[i // num_generations])} for i in range(n)]
    )
    started = time.perf_counter()
    prompts, infos = envs.reset(seed=seeds, options=options)
    env_seconds = time.perf_counter() - started

    token_level = getattr(policy, "tokenizer", None) is not None
    deltas = template_deltas(policy.tokenizer) if token_level else None  # checks the template once, logs a verdict

    def conversation_for(messages: list[Message], tools_i: Any) -> TokenConversation | None:
        """The token conversation that starts with ``messages`` (None for message-level policies)."""
        return (
            TokenConversation(policy.tokenizer, deltas, messages, tools_i, getattr(policy, "eos_ids", None))
            if token_level
            else None
        )

    lanes: list[Lane | Seats] = []
    tools: list[Any] = []
    for i in range(n):
        info = infos[i]
        episode = envgym.Episode(
            env_id=envs.env_ids[i],
            task_id=info.get("task_id"),
            prompt=prompts[i],
            seed=seeds[i],
            reset_info=_light(info),
        )
        group_key = info.get("task_id") if info.get("task_id") is not None else f"seed{seeds[i]}"
        episode.metadata["group_id"] = f"{envs.env_ids[i]}#{group_key}#{i // num_generations}"
        episode.metadata["sample_index"] = i % num_generations
        episode.metadata["group_index"] = i // num_generations
        if task_indices is not None:
            episode.metadata["task_index"] = int(task_indices[i // num_generations])
        tools.append(info.get("tools") if template_tools else None)
        if "error" in info:  # the env never started: no prompt, no tokens
            episode.error = str(info["error"])
        lane = Lane(episode, conversation_for(prompts[i], tools[i]) if not episode.failed else None, list(prompts[i]))
        if is_multi_agent(info) and not episode.failed:  # every seat played by the policy, recorded seat by seat
            lanes.append(Seats(info["agent"], lane, lambda messages, t=tools[i]: conversation_for(messages, t)))
        else:
            lanes.append(lane)

    active = [not lane.episode.failed for lane in lanes]
    generation_seconds, rounds, generated_tokens = 0.0, 0, 0
    while any(active):
        indices = [i for i in range(n) if active[i]]
        limits = {i: _turn_limit(sampling, lanes[i].conversation, max_episode_tokens) for i in indices}
        for i in (i for i in indices if limits[i] <= 0):
            _cut(lanes[i].episode, "token_budget")
            active[i] = False
        batch = [i for i in indices if limits[i] > 0]
        if not batch:
            break
        # Each turn gets a seed of its own: reseeding every turn alike would replay the same random draws.
        turn_params = sampling.replace(
            max_completion_length=max(limits[i] for i in batch), seed=derive_seed(sampling.seed, rounds)
        )
        started = time.perf_counter()
        if token_level:
            generations = policy.generate([lanes[i].conversation.ids for i in batch], turn_params)
        else:
            generations = policy.chat([lanes[i].history for i in batch], turn_params, [tools[i] for i in batch])
        generation_seconds += time.perf_counter() - started
        generations = {i: _trim(g, limits[i]) for i, g in zip(batch, generations)}
        for i in [i for i in batch if generations[i].error is not None]:  # the request failed: nothing to step
            lanes[i].episode.error = f"policy request failed: {generations[i].error}"
            active[i] = False
            batch.remove(i)
        actions: dict[int, Any] = {}
        for i in batch:
            generated_tokens += len(generations[i].token_ids)
            if token_level:
                lanes[i].conversation.add_policy_turn(generations[i])
                actions[i] = policy.turn_text(generations[i].token_ids)
            else:
                actions[i] = generations[i].action or generations[i].text
        # A turn cut by the episode's token budget never reaches the env: the episode ends there, truncated.
        out_of_budget = {
            i for i in batch if generations[i].finish_reason == "length" and limits[i] < sampling.max_completion_length
        }
        started = time.perf_counter()
        messages, rewards, terminated, truncated, step_infos = envs.step(
            {i: a for i, a in actions.items() if i not in out_of_budget}
        )
        env_seconds += time.perf_counter() - started
        rounds += 1
        for i in batch:
            lane = lanes[i]
            if i in out_of_budget:
                lane.record(actions[i], [], 0.0, False, True, {})
                _cut(lane.episode, "token_budget")
                active[i] = False
            else:
                lane.record(actions[i], messages[i], rewards[i], terminated[i], truncated[i], step_infos[i])
            lane.episode.turns[-1].info["policy_tokens"] = len(generations[i].token_ids)
            lane.episode.turns[-1].info["finish_reason"] = generations[i].finish_reason
            if not active[i]:
                continue
            if "error" in step_infos[i]:
                lane.episode.error = str(step_infos[i]["error"])
            ended = terminated[i] or truncated[i] or lane.episode.failed
            lane.after_turn(actions[i], messages[i], terminated[i], truncated[i], step_infos[i], ended)
            active[i] = not ended
        if on_round is not None:
            on_round(rounds, sum(active))

    records = [record for lane in lanes for record in lane.finish()]  # env order; a multi-agent env: every seat
    trajectories = [_trajectory(episode, conversation) for episode, conversation in records] if token_level else []
    for episode, conversation in records:
        if conversation is not None:
            episode.metadata["completion_tokens"] = len(conversation.completion_ids)
            episode.metadata["policy_tokens"] = sum(conversation.loss_mask)
    stats = {
        "rounds": rounds,
        "generation_s": generation_seconds,
        "env_s": env_seconds,
        "generated_tokens": generated_tokens,
        "episodes": len(records),
    }
    return RolloutResult([episode for episode, _ in records], trajectories, stats)


@dataclasses.dataclass
class Lane:
    """One env's episode in the loop: the episode being recorded and what the policy sees next, its message
    history and (with a token-level policy) its token conversation. A multi-agent env's lane is
    :class:`~envgym.agents.seats.Seats`, which keeps one of each per seat behind the same methods."""

    episode: envgym.Episode
    conversation: TokenConversation | None
    history: list[Message]

    def record(
        self, action: Any, messages: list[Message], reward: float, terminated: bool, truncated: bool, info: dict
    ) -> None:
        self.episode.add_turn(action, messages, reward, terminated, truncated, info)

    def after_turn(
        self, action: Any, messages: list[Message], terminated: bool, truncated: bool, info: dict, ended: bool
    ) -> None:
        """Unless the episode ended, the action and the env's answer join what the policy sees next."""
        if ended:
            return
        self.history.append(assistant_message(action))
        self.history.extend(messages)
        if self.conversation is not None:
            self.conversation.add_env_messages(messages)

    def finish(self) -> list[tuple[envgym.Episode, TokenConversation | None]]:
        return [(self.episode, self.conversation)]


def derive_seed(seed: int | None, *keys: int) -> int | None:
    """A seed for ``keys`` (e.g. step, round, turn) under ``seed``, mixed by NumPy's ``SeedSequence`` (None stays
    None: unseeded). Distinct keys give unrelated seeds, where offsets such as ``seed + turn`` would give turn 1 of
    one round the seed of turn 0 of the next. Fits in 53 bits, like
    :func:`~envgym.agents.engines.policy.request_seed`."""
    if seed is None:
        return None
    state = np.random.SeedSequence([seed % 2**64, *(key % 2**64 for key in keys)]).generate_state(1, dtype=np.uint64)[0]
    return int(state >> np.uint64(11))


def _turn_limit(
    sampling: SamplingParams, conversation: TokenConversation | None, max_episode_tokens: int | None
) -> int:
    """Most tokens this turn may have: ``max_completion_length``, lowered to what is left of the episode budget."""
    if max_episode_tokens is None or conversation is None:
        return sampling.max_completion_length
    return min(sampling.max_completion_length, max_episode_tokens - len(conversation.completion_ids))


def _trim(generation: Generation, limit: int) -> Generation:
    """Cut a generation to ``limit`` tokens (the batch was generated with the largest limit in it)."""
    if len(generation.token_ids) <= limit:
        return generation
    return Generation(generation.text, generation.token_ids[:limit], generation.logprobs[:limit], "length")


def _cut(episode: envgym.Episode, reason: str) -> None:
    """Mark an episode the loop stopped (a limit outside the MDP, hence truncated, not terminated)."""
    episode.metadata["truncated_by"] = reason
    if episode.turns and not episode.turns[-1].terminated:
        episode.turns[-1].truncated = True


def _trajectory(episode: envgym.Episode, conversation: TokenConversation | None) -> Trajectory:
    if conversation is None:  # failed at reset
        return Trajectory(
            episode=episode,
            prompt_ids=[],
            completion_ids=[],
            logprobs=[],
            loss_mask=[],
            turn_ends=[],
            turn_rewards=[],
            turn_reward_components=[],
            truncated=False,
            group_id=episode.metadata["group_id"],
        )
    turns = episode.turns
    return Trajectory(
        episode=episode,
        prompt_ids=conversation.prompt_ids,
        completion_ids=conversation.completion_ids,
        logprobs=conversation.logprobs,
        loss_mask=conversation.loss_mask,
        turn_ends=conversation.turn_ends,
        turn_rewards=[t.reward for t in turns],
        turn_reward_components=[dict(t.reward_components) for t in turns],
        truncated=episode.truncated or "truncated_by" in episode.metadata,
        group_id=episode.metadata["group_id"],
        turn_reward_weights=[dict(t.info.get("reward_weights") or {}) for t in turns],
    )


def _light(info: dict[str, Any]) -> dict[str, Any]:
    """The reset info worth keeping in the episode record (tool schemas are the same for every episode)."""
    return {k: v for k, v in info.items() if k not in ("tools", "traceback")}


def conversation_messages(episode: envgym.Episode) -> list[Message]:
    """The episode as chat messages (what a message-level policy saw, plus the final env answer)."""
    return episode.messages()
