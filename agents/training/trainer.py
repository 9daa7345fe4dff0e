"""GRPOTrainer: the loop around :mod:`envgym.agents.training.grpo` — rollouts, batching, optimisation, logging;
checkpoints are in :mod:`~envgym.agents.training.checkpoint`, step metrics in
:mod:`~envgym.agents.training.step_metrics`.

One step: sample tasks -> G rollouts per task from the policy being trained (the model itself, or an engine
such as vLLM given its weights after every step) -> drop failed episodes (env,
verifier, sandbox or request failures: no reward to learn from) with their groups -> (dynamic sampling: drop
groups whose rewards are all equal, refill) -> per-turn advantages -> micro-batches under a token budget, forward and
backward with gradient accumulation -> clip, AdamW step, schedule -> one line of ``metrics.jsonl``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import torch

import envgym
from envgym.agents.seats import seat_groups, task_groups
from envgym.agents.training.advantages import group_has_contrast, token_advantages, turn_advantages
from envgym.agents.training.batching import decoder_and_head, micro_batches, pad_batch, predictors
from envgym.agents.training.checkpoint import load_checkpoint, save_checkpoint
from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.data_parallel import DataParallel
from envgym.agents.training.entropy_control import token_entropies
from envgym.agents.training.group_rewards import apply_group_rewards
from envgym.agents.training.grpo import dr_grpo_constant, policy_loss, token_logprobs
from envgym.agents.training.learning_signal import learning_signal
from envgym.agents.training.mixture import EnvMixture, MixtureMember, Source
from envgym.agents.training.model_setup import has_dropout, lr_schedule, prepare_model, seed_everything, twin_model
from envgym.agents.training.process_rewards import process_token_advantages, step_reward_metrics
from envgym.agents.training.step_metrics import (
    RolloutBatch,
    entropy_sum,
    failure_metrics,
    reward_metrics,
    source_metrics,
)
from envgym.agents.trajectory import Trajectory
from envgym.rewards import RewardSpec

TaskSampler = Callable[[int, np.random.Generator], int]
"""``sampler(step, rng) -> task_index``: which task the next group plays (curricula plug in here). A sampler
with an ``update(task_index, rewards)`` method is told each group's episode rewards after the rollouts."""


class GRPOTrainer:
    """Train ``model`` with GRPO on the env ``env`` (an id for :func:`envgym.make` or a zero-arg factory), or on
    an :class:`~envgym.agents.training.mixture.EnvMixture` (each group drawn from one of its envs, by weight, or from a
    curriculum's levels; per-env metrics ``env/<name>/...`` and ``curriculum/<name>/...``).

    ``policy``: the engine rollouts sample from; by default a ``TransformersPolicy`` over ``model`` itself. An
    engine with weights of its own (``VLLMPolicy`` on the same checkpoint) gets the model's weights through its
    ``load_weights(model)`` when training starts and after every step's updates, so it always samples from the
    policy being trained (``time_sync_s`` in the metrics).

    ``reward``: the reward spec (a :class:`~envgym.rewards.RewardSpec`, or its dict form, read here once): its
    per-turn components wrap the env, its group and process components run after each step's rollouts. It is never
    one of ``env_kwargs``; a mixture's members carry their own (``MixtureMember.reward``)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        env: str | Callable[[], envgym.Env] | EnvMixture,
        config: GRPOConfig | None = None,
        *,
        out_dir: str | Path | None = None,
        task_sampler: TaskSampler | None = None,
        device: str | None = None,
        env_kwargs: dict[str, Any] | None = None,
        policy: Any = None,
        reward: RewardSpec | Mapping[str, Any] | None = None,
    ):
        if isinstance(env, EnvMixture) and (env_kwargs or reward is not None):
            raise ValueError(
                "env_kwargs and reward are one env's; a mixture's members carry their own "
                "(MixtureMember.env_kwargs, MixtureMember.reward)"
            )
        if env_kwargs and "reward" in env_kwargs:
            raise ValueError(
                "env_kwargs['reward']: the reward spec is GRPOTrainer's own argument, GRPOTrainer(..., reward=spec), "
                "read once; env_kwargs are the env's arguments"
            )
        self.config = config = config or GRPOConfig()
        if config.report_to:
            from envgym.agents.training.tracking import check_installed

            check_installed(config.report_to)  # now, not after the first step's rollouts
        local_rank = os.environ.get("LOCAL_RANK") if int(os.environ.get("WORLD_SIZE", "1")) > 1 else None
        cuda = f"cuda:{local_rank}" if local_rank is not None else "cuda"  # one device per rank under torchrun
        self.device = torch.device(device or (cuda if torch.cuda.is_available() else "cpu"))
        self.ranks = DataParallel.from_environment(self.device)
        if self.ranks.enabled and config.async_rollouts:
            raise ValueError(
                "async_rollouts is one process's: with several ranks (torchrun) every step's rollouts are "
                "synchronous; drop async_rollouts or run one process"
            )
        seed_everything(config.seed)
        self.tokenizer = tokenizer
        self.model = prepare_model(model, config).to(self.device)
        self.ranks.broadcast_parameters(self.model)
        self.use_bf16 = config.bf16 if config.bf16 is not None else self.device.type == "cuda"
        self.reference = None
        if config.beta > 0 and config.lora_r == 0:  # with LoRA the reference is the model with adapters off
            self.reference = copy.deepcopy(self.model).eval().requires_grad_(False)
        single = not isinstance(env, EnvMixture)
        self.mixture = (
            EnvMixture([MixtureMember(env, env_kwargs=dict(env_kwargs or {}), reward=reward)]) if single else env
        )
        self.env_name = self.mixture.label
        # Each member's group rewards run after the rollouts of its groups.
        self.reward_specs = [member.reward for member in self.mixture.members]
        self.envs: dict[tuple[Source, int], envgym.VectorEnv] = {}
        if task_sampler is not None and len(self.mixture.sources()) > 1:
            raise ValueError("task_sampler picks task indices of one env; a mixture or a curriculum draws its own")
        self.task_sampler = task_sampler
        self.sampler_rng = np.random.default_rng(config.seed)
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            params,
            lr=config.learning_rate,
            betas=(config.adam_beta1, config.adam_beta2),
            weight_decay=config.weight_decay,
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_schedule(config))
        self.step = 0
        self.out_dir = Path(out_dir) if out_dir is not None else None
        """Where metrics, checkpoints and plots go; with several ranks only rank 0 writes (all hold the same state)."""
        self.history: list[dict[str, Any]] = []
        self.last_rollouts: list[list[Trajectory]] = []
        """Every group the last step rolled out (trained, dropped and failed alike), for inspection."""
        self._trackers = None
        """The runs of ``config.report_to`` (:mod:`envgym.agents.training.tracking`), open from the first logged
        step."""
        if policy is None:
            from envgym.agents.engines.transformers_policy import TransformersPolicy

            # Asynchronous rollouts cannot sample from the weights being updated: they get a copy of their own.
            policy = TransformersPolicy(
                twin_model(self.model) if config.async_rollouts else self.model, tokenizer, device=str(self.device)
            )
        if config.async_rollouts and getattr(policy, "model", None) is self.model:
            raise ValueError(
                "async_rollouts needs an engine with weights of its own (VLLMPolicy, or no policy: "
                "the trainer then rolls out with a copy of the model), not the model being trained"
            )
        self.policy = policy
        self._engine_version = -1  # how many updates the engine's weights have seen
        self._in_flight: dict[int, Future[RolloutBatch]] = {}
        """Asynchronous rollouts: the batches of the next steps, sampled or being sampled (checkpointed as
        :attr:`pending_batches`, so a resumed run trains on them as the uninterrupted run would)."""
        self._sync_weights()

    # --- the loop -----------------------------------------------------------------------------------
    def train(
        self, steps: int | None = None, on_step: Callable[[dict[str, Any]], None] | None = None
    ) -> list[dict[str, Any]]:
        """Run until ``steps`` more steps are done (default: up to ``config.max_steps``); checkpoint at
        ``save_steps`` and at the end; returns the metrics of the steps run."""
        target = self.config.max_steps if steps is None else self.step + steps
        self._open_trackers()  # a tracker that cannot start fails now, not after the first step
        run = []
        for metrics in self._async_steps(target) if self.config.async_rollouts else self._sync_steps(target):
            run.append(metrics)
            if on_step is not None:
                on_step(metrics)
            if self.out_dir is not None and self.config.save_steps and self.step % self.config.save_steps == 0:
                self.save_checkpoint()
        if self.out_dir is not None and run:
            self.save_checkpoint()
            self.plot()
        self.finish_tracking()
        return run

    def train_step(self) -> dict[str, Any]:
        """One rollout-and-update step, on-policy; returns (and logs) its metrics."""
        started = time.perf_counter()
        metrics = self._train_on(self._produce(self.step, self._engine_version), started)
        if not metrics["update_skipped"]:
            metrics["time_sync_s"] = self._sync_weights()
        else:
            self._engine_version = self.step  # nothing changed: the engine is still current
        return self._finish(metrics, started)

    def _sync_steps(self, target: int) -> Iterator[dict[str, Any]]:
        while self.step < target:
            yield self.train_step()

    def _async_steps(self, target: int) -> Iterator[dict[str, Any]]:
        """Steps whose update overlaps the rollouts of the next ``k = config.max_staleness`` steps
        (``config.async_rollouts``). Batch t is sampled by the weights of update max(t - k, 0), always: its
        staleness is a fixed k (less in the first k steps), never a matter of timing, so runs repeat exactly. The
        weights go to the engine between two batches (a direct sync when no rollout is in flight, else a copy of
        the model taken now that the next batch's job loads first: at most k - 1 copies alive). A checkpoint holds the
        batches already sampled (:attr:`pending_batches`), so a resumed run trains on the same tasks at the same
        staleness as the uninterrupted one; batches are sampled up to ``max_steps`` even when this call stops
        earlier."""
        k, horizon = self.config.max_staleness, max(target, self.config.max_steps)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="envgym-rollouts") as pool:
            started = time.perf_counter()
            self._in_flight = {step: _done(b) for step, b in self._in_flight_results().items() if step >= self.step}
            # Fresh or resumed without sampled batches: the first k come from the weights there are now.
            for step in range(self.step, min(self.step + k, horizon)):
                if step not in self._in_flight:
                    self._in_flight[step] = pool.submit(self._produce, step, self.step)
            while self.step < target:
                waited = time.perf_counter()
                batch = self._in_flight.pop(self.step).result()
                wait = time.perf_counter() - waited
                sync, ahead = 0.0, self.step + k
                if ahead < horizon and ahead not in self._in_flight:
                    if all(job.done() for job in self._in_flight.values()):  # the engine is idle: sync directly
                        sync = self._sync_weights()
                        self._in_flight[ahead] = pool.submit(self._produce, ahead, self.step)
                    else:  # a rollout is running: the job after it loads this copy first
                        self._in_flight[ahead] = pool.submit(self._produce_from, self._weights_copy(), ahead, self.step)
                metrics = self._train_on(batch, started)
                metrics.update(time_sync_s=sync, time_wait_s=wait)
                yield self._finish(metrics, started)
                started = time.perf_counter()

    def _produce_from(self, weights: Any, step: int, version: int) -> RolloutBatch:
        """Load ``weights`` (a copy of the model at ``version``) into the engine, then sample ``step``: in the
        rollout thread, so the engine never changes under a running rollout."""
        if hasattr(self.policy, "load_weights"):
            self.policy.load_weights(weights)
        self._engine_version = version
        return self._produce(step, version)

    def _weights_copy(self) -> Any:
        """The model as it is now, for an engine to load later: a full copy (LoRA adapters kept as adapters, since
        an engine such as ``VLLMServerPolicy`` loads them as such) without gradients."""
        snapshot = copy.deepcopy(self.model).eval().requires_grad_(False)
        for parameter in snapshot.parameters():
            parameter.grad = None
        return snapshot

    def _in_flight_results(self) -> dict[int, RolloutBatch]:
        """The batches sampled ahead, waiting for any still running (their content does not depend on when)."""
        return {step: future.result() for step, future in sorted(self._in_flight.items())}

    @property
    def pending_batches(self) -> list[RolloutBatch]:
        """Batches sampled ahead of the step (asynchronous rollouts), in step order: what a checkpoint keeps."""
        return list(self._in_flight_results().values())

    @pending_batches.setter
    def pending_batches(self, batches: list[RolloutBatch]) -> None:
        self._in_flight = {b.step: _done(b) for b in batches}

    def _produce(self, step: int, version: int) -> RolloutBatch:
        """The rollouts of ``step`` (0-based), sampled by engine weights that have seen ``version`` updates."""
        started = time.perf_counter()
        groups, rollouts, dropped, rounds = self._collect_groups(step)
        # The curricula's state now, in this thread: asynchronous rollouts of the next batch update it meanwhile.
        return RolloutBatch(
            step,
            groups,
            rollouts,
            dropped,
            rounds,
            version,
            time.perf_counter() - started,
            curriculum=self.mixture.metrics(),
        )

    def _train_on(self, batch: RolloutBatch, started: float) -> dict[str, Any]:
        lr = self.optimizer.param_groups[0]["lr"]
        t_train = time.perf_counter()
        metrics = self._update(batch.groups)  # with no groups left (all dropped) nothing changes but the metrics line
        metrics["time_train_s"] = time.perf_counter() - t_train
        metrics["staleness"] = self.step - batch.version  # updates between the sampling weights and these
        self.step += 1
        self.last_rollouts = batch.rollouts
        metrics.update(reward_metrics(batch.groups, batch.rollouts))
        metrics.update(failure_metrics(batch.rollouts))
        metrics.update(learning_signal(seat_groups(batch.rollouts), self.config))  # zero_advantage_groups, warning
        metrics.update(source_metrics(self.mixture, self.reward_specs, batch.groups, batch.rollouts))
        metrics.update(batch.curriculum)
        metrics.update(step_reward_metrics(batch.rollouts))
        metrics.update(
            {
                "step": self.step,
                "groups": len(batch.groups),
                "groups_dropped": batch.dropped,
                "refill_rounds": batch.rounds,
                "lr": lr,
                "time_rollout_s": batch.seconds,
            }
        )
        return metrics

    def _finish(self, metrics: dict[str, Any], started: float) -> dict[str, Any]:
        metrics["time_step_s"] = time.perf_counter() - started
        metrics = {key: metrics[key] for key in ["step", *sorted(k for k in metrics if k != "step")]}
        self.history.append(metrics)
        self._log(metrics)
        return metrics

    def _sync_weights(self) -> float:
        """Give an engine with weights of its own the model's current ones; returns the seconds it took."""
        started = time.perf_counter()
        if hasattr(self.policy, "load_weights"):
            self.policy.load_weights(self.model)
        self._engine_version = self.step
        return time.perf_counter() - started

    # --- rollouts -----------------------------------------------------------------------------------
    def _collect_groups(self, step: int) -> tuple[list[list[Trajectory]], list[list[Trajectory]], int, int]:
        """The groups to train on, every group rolled out (dropped and failed ones too), and how many groups
        dynamic sampling dropped in how many refill rounds."""
        config = self.config
        groups: list[list[Trajectory]] = []
        rollouts: list[list[Trajectory]] = []
        dropped, rounds = 0, 0
        while len(groups) < config.num_tasks_per_step:
            needed = config.num_tasks_per_step - len(groups)
            new_groups = self._rollout([self._sample_task(step) for _ in range(needed)], step, rounds)
            rollouts.extend(new_groups)
            for group in new_groups:
                healthy = [t for t in group if not t.failed]  # a failure is no reward: never trained on
                if not healthy or (len(healthy) < len(group) and config.drop_failed_groups):
                    continue  # counted as groups_failed; refilled like a dropped group under dynamic sampling
                if config.dynamic_sampling and not any(
                    group_has_contrast(  # per seat, as the advantages see it
                        [t.turn_rewards for t in seat], config, [t.turn_reward_components for t in seat]
                    )
                    for seat in seat_groups([healthy])
                ):
                    dropped += 1
                else:
                    groups.append(healthy)
            if not config.dynamic_sampling or rounds >= config.dynamic_sampling_max_rounds:
                break
            rounds += 1
        return groups, rollouts, dropped, rounds

    def _sample_task(self, step: int) -> tuple[Source, int]:
        """``(source, task index)`` of the next group: the mixture's draw (no draw for a single env), then a task
        of that source's env."""
        if self.task_sampler is not None:
            return (0, None), int(self.task_sampler(step, self.sampler_rng))
        source = self.mixture.draw(self.sampler_rng)
        return source, int(self.sampler_rng.integers(min(len(self._task_source(source)), 2**31 - 1)))

    def _task_source(self, source: Source = (0, None)) -> Any:
        tasks = getattr(self._vector_env(self.config.num_generations, source).envs[0].unwrapped, "tasks", None)
        if tasks is None:
            raise ValueError(
                f"{self.env_name} has no task source, so GRPO cannot play one task G times; "
                "give the env a TaskSource or pass task_sampler"
            )
        return tasks

    def _vector_env(self, count: int, source: Source = (0, None)) -> envgym.VectorEnv:
        """Envs are made once per source and batch size and reused (a refill round may need fewer groups). Their
        episodes carry the member's name as ``env_id``, which the per-env metrics group by."""
        if (source, count) not in self.envs:
            member = self.mixture.members[source[0]]
            self.envs[source, count] = envgym.VectorEnv(
                [member.factory(source[1])] * count,
                env_ids=[member.name] * count,
                step_timeout=self.config.step_timeout,
            )
        return self.envs[source, count]

    def _turn_limit(self) -> int | None:
        """The most turns an episode can have: its env's turn limit (``max_turns``, which ``envgym.make`` gives a
        ``TimeLimit``; in a mixture, the highest over its envs; None where one has no limit)."""
        limits = []
        for source in self.mixture.sources():
            env = self._vector_env(self.config.num_generations, source).envs[0]
            try:
                limits.append(env.get_wrapper_attr("max_turns"))
            except AttributeError:  # no TimeLimit: no limit
                return None
        return max(limits)

    def _rollout(self, tasks: list[tuple[Source, int]], step: int, round_: int = 0) -> list[list[Trajectory]]:
        """The groups of ``tasks`` (``(source, task index)`` pairs), in their order; one rollout per source."""
        from envgym.agents.engines.policy import SamplingParams
        from envgym.agents.rollout import derive_seed

        config = self.config
        if not config.async_rollouts:  # the model itself may generate; asynchronous rollouts never touch it
            self.model.eval()
        groups: list[list[Trajectory]] = [[] for _ in tasks]
        update = getattr(self.task_sampler, "update", None)
        for part, source in enumerate(dict.fromkeys(source for source, _ in tasks)):  # sources in order of draw
            every = [i for i, (drawn, _) in enumerate(tasks) if drawn == source]
            positions = self.ranks.mine(every)  # several ranks: each plays its share, then all see every group
            task_indices = [tasks[i][1] for i in positions]
            # Sampling depends on (seed, step, round) only, and on the source's place among the round's (and the
            # rank's number after rank 0); turns mix it on. The first source keeps the seed a single env has had.
            extra = [part, self.ranks.rank] if self.ranks.rank else [part] if part else []
            seed = derive_seed(config.seed, step, round_, *extra)
            sampling = SamplingParams(
                max_completion_length=config.max_completion_length,
                temperature=config.temperature,
                top_p=config.top_p,
                seed=seed,
            )
            part_groups = self._play_part(source, task_indices, sampling, seed) if task_indices else []
            played = dict(zip(positions, part_groups))
            for share in self.ranks.gather(played) if self.ranks.enabled else []:
                played.update(share)
            for position in every:
                index, group = tasks[position][1], played[position]
                groups[position] = group
                rewards = [t.total_reward for t in group if not t.failed]
                if rewards:
                    self.mixture.update(source, rewards)
                    if update is not None:
                        update(index, rewards)
        return groups

    def _play_part(self, source: Source, task_indices: list[int], sampling: Any, seed: int) -> list[list[Trajectory]]:
        """The groups of ``task_indices`` of one source, with the source's group rewards applied."""
        from envgym.agents.rollout import rollout

        config = self.config
        envs = self._vector_env(len(task_indices) * config.num_generations, source)
        with torch.no_grad(), self._autocast():
            result = rollout(
                self.policy,
                envs,
                sampling=sampling,
                num_generations=config.num_generations,
                task_indices=task_indices,
                seed=seed,
            )
        part_groups = task_groups(result.trajectories, len(task_indices))  # a multi-agent task: every seat's
        spec = self.reward_specs[source[0]]
        if spec is not None:  # before anything reads the rewards: samplers, dynamic sampling
            # Self-certainty scores with the weights that sampled (asynchronous rollouts: the engine's own copy).
            scorer = getattr(self.policy, "model", None) if config.async_rollouts else self.model
            apply_group_rewards(
                part_groups,
                spec,
                envs.envs[0],
                task_indices=task_indices,
                model=scorer,
                tokenizer=self.tokenizer,
                device=self.device,
            )
        return part_groups

    # --- update ---------------------------------------------------------------------------------------
    def _update(self, groups: list[list[Trajectory]]) -> dict[str, Any]:
        config = self.config
        if not groups:  # every group failed or was dropped: no gradient to take, the step is still logged
            return {
                "loss": 0.0,
                "grad_norm": 0.0,
                "policy_tokens": 0,
                "total_tokens": 0,
                "micro_batches": 0,
                "update_skipped": True,
            }
        groups = seat_groups(groups)  # self-play: each seat is its own GRPO group, with its own rewards
        advantages = turn_advantages(
            [[t.turn_rewards for t in g] for g in groups],
            config,
            [[t.turn_reward_components for t in g] for g in groups],
            [[t.turn_reward_weights for t in g] for g in groups],
        )
        loss_constant = None
        if config.loss_type == "constant":
            loss_constant = dr_grpo_constant(
                config, self._turn_limit(), max(len(t.turn_rewards) for g in groups for t in g)
            )
        process = process_token_advantages(groups, config.advantage_epsilon)  # per-step credit, None without
        rows, mine = [], set(self.ranks.mine(range(len(groups))))  # a group's rows stay on one rank
        local_rows = []
        for number, (group, group_adv, group_process) in enumerate(zip(groups, advantages, process)):
            for trajectory, adv, steps in zip(group, group_adv, group_process):
                mask = (
                    [0] * len(trajectory.loss_mask)
                    if (config.mask_truncated_completions and trajectory.truncated)
                    else trajectory.loss_mask
                )
                per_token = token_advantages(len(trajectory.completion_ids), trajectory.turn_ends, adv)
                if steps is not None:
                    per_token = [a + s for a, s in zip(per_token, steps)]
                rows.append((trajectory, mask, per_token))
                if number in mine:
                    local_rows.append(rows[-1])
        # The normalisers are the whole batch's, on every rank: the ranks' gradients then sum to one process's.
        num_tokens = sum(sum(mask) for _, mask, _ in rows)
        num_sequences = sum(1 for _, mask, _ in rows if any(mask))
        batches = micro_batches(local_rows, config.max_tokens_per_microbatch)
        self.model.train()
        dropout = has_dropout(self.model)
        totals: dict[str, float] = {
            "loss": 0.0,
            "clip_low": 0.0,
            "clip_high": 0.0,
            "kl": 0.0,
            "ratio": 0.0,
            "entropy": 0.0,
            "rollout_gap": 0.0,
        }
        old_logprobs: list[torch.Tensor] = []
        ref_logprobs: list[torch.Tensor | None] = []
        grad_norms, gap_max = [], 0.0
        for iteration in range(config.num_iterations):
            self.optimizer.zero_grad(set_to_none=True)
            for b, batch in enumerate(batches):
                tensors = pad_batch(batch, self.device)
                logprobs, logits = self._logprobs(self.model, tensors)
                if iteration == 0:
                    old_logprobs.append(self._eval_logprobs(tensors) if dropout else logprobs.detach())
                    ref_logprobs.append(self._reference_logprobs(tensors) if config.beta > 0 else None)
                    gap = (old_logprobs[b] - tensors["rollout_logprobs"]).abs() * tensors["mask"]
                    totals["rollout_gap"] += float(gap.sum())
                    gap_max = max(gap_max, float(gap.max()))
                    if config.logging_entropy:
                        totals["entropy"] += entropy_sum(logits)
                loss, stats = policy_loss(
                    logprobs,
                    old_logprobs[b],
                    tensors["advantages"],
                    tensors["mask"],
                    config,
                    num_sequences=num_sequences,
                    num_tokens=num_tokens,
                    ref_logprobs=ref_logprobs[b],
                    rollout_logprobs=tensors["rollout_logprobs"],
                    loss_constant=loss_constant,
                    entropy=token_entropies(logits, tensors["mask"]) if config.entropy_coef > 0 else None,
                )
                loss.backward()
                totals["loss"] += loss.item() / config.num_iterations
                for key, value in stats.items():
                    totals[key] = totals.get(key, 0.0) + value.item() / config.num_iterations
            params = [p for p in self.model.parameters() if p.requires_grad]
            self.ranks.sum_gradients(params)
            max_norm = config.max_grad_norm if config.max_grad_norm is not None else float("inf")
            grad_norms.append(float(torch.nn.utils.clip_grad_norm_(params, max_norm)))
            self.optimizer.step()
            self.scheduler.step()  # the schedule counts optimizer steps, like TRL's (μ of them per train step)
        if self.ranks.enabled:
            totals = self.ranks.sum_floats(totals)
            gap_max = max(self.ranks.gather(gap_max))
        denominator = max(num_tokens, 1)
        return {
            "loss": totals["loss"],
            "grad_norm": sum(grad_norms) / len(grad_norms),
            "clip_fraction_low": totals["clip_low"] / denominator,
            "clip_fraction_high": totals["clip_high"] / denominator,
            "kl": totals["kl"] / denominator,
            "ratio_mean": totals["ratio"] / denominator,
            "entropy": totals["entropy"] / denominator,
            "policy_tokens": num_tokens,
            **(
                {"cov_selected_fraction": totals.get("cov_selected", 0.0) / denominator}
                if config.entropy_control != "none"
                else {}
            ),
            "rollout_logprob_gap": totals["rollout_gap"] / denominator,
            "rollout_logprob_gap_max": gap_max,
            "total_tokens": sum(len(t.prompt_ids) + len(t.completion_ids) for t, _, _ in rows),
            "micro_batches": sum(self.ranks.gather(len(batches))),
            "update_skipped": False,
        }

    def _logprobs(self, model: Any, tensors: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Logprobs (B, C) of the completion tokens, computed only where the loss mask is 1: the decoder runs over
        prompts (once per distinct prompt, see agents/training/batching.py) and completions, the vocabulary projection
        (the costliest matmul of a small model, and a (B, T, V) tensor in memory) only over policy tokens. Also
        returns those logits (N, V) for the entropy.

        Logits are divided by the sampling temperature (as TRL does), so π_θ is the distribution rollouts were drawn
        from. Top-p is not applied here: the engine reports the logprobs of the renormalised nucleus it sampled
        from, so a top_p < 1 shows as a rollout gap of log(nucleus mass), which importance_sampling_correction
        weighs (min(π_old/π_rollout, C)) instead of hiding it."""
        rows, cols = tensors["mask"].nonzero(as_tuple=True)
        split = decoder_and_head(model)
        with self._autocast():
            if split is not None:
                decoder, head = split
                logits = head(predictors(decoder, tensors, hidden=True)[rows, cols])
            else:  # models that post-process logits (soft-capping, scaling): their own head, then select
                logits = predictors(model, tensors, hidden=False)[rows, cols]
        if self.config.temperature > 0:  # score the distribution rollouts sampled from (0 = greedy: plain logits)
            logits = logits / self.config.temperature
        selected = token_logprobs(logits, tensors["targets"][rows, cols])
        logprobs = torch.zeros(tensors["mask"].shape, dtype=selected.dtype, device=selected.device)
        logprobs = logprobs.index_put((rows, cols), selected)
        return logprobs, logits

    def _eval_logprobs(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        """π_old for a model with dropout (LoRA dropout): logprobs in eval mode, those of the policy that sampled.
        In train mode every forward draws new dropout masks (shared by a prompt's G rows, agents/training/batching.py),
        so the update's own first-pass logprobs are not π_old: the ratio then starts away from 1 by dropout's
        noise, as in PPO with dropout, and the rollout gap measures the engine, not the noise."""
        self.model.eval()
        try:
            with torch.no_grad():
                return self._logprobs(self.model, tensors)[0]
        finally:
            self.model.train()

    def _reference_logprobs(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        model = self.reference if self.reference is not None else self.model
        adapters_off = model.disable_adapter() if self.reference is None else nullcontext()
        with torch.no_grad(), adapters_off:
            return self._logprobs(model, tensors)[0]

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16) if self.use_bf16 else nullcontext()

    # --- logging, checkpoints -------------------------------------------------------------------------
    def _log(self, metrics: dict[str, Any]) -> None:
        if self.out_dir is None or not self.ranks.is_main:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with (self.out_dir / "metrics.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(metrics) + "\n")
        if self.config.report_to:
            from envgym.agents.training.tracking import step_samples

            self._open_trackers()
            self._trackers.log_metrics(metrics, step=metrics["step"])
            if self.config.report_samples:
                self._trackers.log_samples(
                    "rollouts",
                    step_samples(self.last_rollouts, metrics["step"], self.config.report_samples),
                    metrics["step"],
                )

    def _open_trackers(self) -> None:
        """Open the runs of ``config.report_to`` unless open (only for training: a trainer never trained opens
        none; like ``metrics.jsonl``, they need an ``out_dir``)."""
        if self.config.report_to and self.out_dir is not None and self._trackers is None and self.ranks.is_main:
            from envgym.agents.training.tracking import open_trackers

            self._trackers = open_trackers(
                self.config.report_to,
                out_dir=self.out_dir,
                name=self.out_dir.name,
                config={"env": self.env_name, **dataclasses.asdict(self.config)},
            )

    def finish_tracking(self) -> None:
        """Close the tracker runs (``train`` does at its end); a later step opens new ones."""
        if self._trackers is not None:
            self._trackers.finish()
            self._trackers = None

    def save_checkpoint(self, path: str | Path | None = None) -> Path:
        """Write ``checkpoints/step-N`` (or ``path``): see
        :func:`~envgym.agents.training.checkpoint.save_checkpoint`. With several ranks only rank 0 writes (every
        rank holds the same state), and every rank returns once the checkpoint is complete."""
        if path is None and self.out_dir is not None:
            path = self.out_dir / "checkpoints" / f"step-{self.step}"
        if self.ranks.is_main or path is None:  # no path: save_checkpoint says so, on every rank
            path = save_checkpoint(self, path)
        self.ranks.barrier()
        return Path(path)

    def load_checkpoint(self, path: str | Path) -> None:
        """Continue exactly where ``save_checkpoint(path)`` left off (see
        :func:`~envgym.agents.training.checkpoint.load_checkpoint`)."""
        load_checkpoint(self, path)

    def plot(self) -> Path | None:
        """Save ``reward_curve.png`` (reward mean ± std per step) in ``out_dir``."""
        if self.out_dir is None or not self.history or not self.ranks.is_main:
            return None
        from envgym.agents.training.train_plot import plot_rewards

        members = self.mixture.members
        title = f"GRPO on {self.env_name}" if len(members) == 1 else f"GRPO on a mixture of {len(members)} envs"
        return plot_rewards(self.history, self.out_dir / "reward_curve.png", title=title)


def _done(batch: RolloutBatch) -> Future[RolloutBatch]:
    """A batch already sampled, as a finished job."""
    future: Future[RolloutBatch] = Future()
    future.set_result(batch)
    return future
