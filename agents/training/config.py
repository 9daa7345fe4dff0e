"""``GRPOConfig``: every knob of the algorithm and the training loop, one validated model (torch-free, so a recipe is
checked before anything heavy loads). The objective it configures is in :mod:`envgym.agents.training.grpo`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pydantic

from envgym.agents.training.tracking import parse_report_to
from envgym.config import STRICT

ENTROPY_CONTROLS = ("none", "clip_cov", "kl_cov")
ADVANTAGES = ("grpo", "dr_grpo", "rloo", "rebn", "gdpo", "turn_grpo")
LOSS_TYPES = ("token_mean", "seq_mean_token_mean", "constant")
SCALE_REWARDS = ("group", "batch", "none")


@pydantic.dataclasses.dataclass(config=STRICT)
class GRPOConfig:
    """Every knob of the algorithm and the training loop. Names follow TRL's ``GRPOConfig`` where the concept is
    the same (``num_generations``, ``epsilon``, ``epsilon_high``, ``beta``, ``loss_type``, ``scale_rewards``,
    ``mask_truncated_completions``, ``num_iterations``, ``learning_rate``, ``max_grad_norm``...). A validated
    model: a value of the wrong type or out of range is refused when the config is made, and a recipe's
    fields are read through it (:mod:`envgym.agents.training.recipe`)."""

    # --- sampling -------------------------------------------------------------------------------------
    num_generations: int = 8
    """G: episodes per task (one group). Advantages compare the episodes of a group, so G >= 2."""
    num_tasks_per_step: int = 4
    """Groups per optimizer step; the batch holds ``num_tasks_per_step * num_generations`` episodes."""
    max_completion_length: int = 256
    """Most new tokens the policy may generate per turn."""
    temperature: float = 1.0
    """Sampling temperature of rollouts. The trainer scores tokens with the same temperature (logits / T, as in
    TRL), so the policy it optimises is the distribution rollouts were drawn from at any T (0: greedy, scored
    with plain logits)."""
    top_p: float = 1.0
    """Nucleus sampling for rollouts (1.0 = off). Anything else makes rollouts off-policy: the engine reports the
    logprobs of the renormalised nucleus, the trainer scores the full softmax, and the difference shows in
    ``rollout_logprob_gap`` and is what ``importance_sampling_correction`` weighs."""
    dynamic_sampling: bool = False
    """DAPO's dynamic sampling: drop groups whose episodes all got the same rewards (no contrast within the
    task, so no gradient from it) and roll out fresh tasks in their place. "The same" means what the estimator
    reads (see :func:`~envgym.agents.training.advantages.group_has_contrast`): per-turn rewards for
    ``rebn``/``turn_grpo``, reward components for ``gdpo``, episode totals otherwise."""
    dynamic_sampling_max_rounds: int = 3
    """Cap on refill rounds per step; after it the step trains on what it has (possibly fewer groups)."""

    # --- advantages -----------------------------------------------------------------------------------
    advantage: str = "grpo"
    """Estimator, one of ``grpo, dr_grpo, rloo, rebn, gdpo, turn_grpo`` (see
    :mod:`envgym.agents.training.advantages`)."""
    scale_rewards: str = "group"
    """For ``grpo``/``turn_grpo``: divide centred rewards by the std of the ``group``, of the whole ``batch``,
    or ``none`` (Dr. GRPO's fix for the difficulty bias; TRL's ``scale_rewards``). ``gdpo`` always divides, as
    published."""
    advantage_epsilon: float = 1e-4
    """Added to every std before dividing (TRL uses 1e-4); a group with equal rewards gets advantage 0."""
    gamma: float = 1.0
    """Discount of per-turn returns for ``rebn`` (verl/GEM's ``gamma``)."""

    # --- loss -----------------------------------------------------------------------------------------
    loss_type: str = "token_mean"
    """Aggregation over tokens: ``token_mean`` (DAPO; TRL ``dapo``: every policy token of the batch weighs
    the same), ``seq_mean_token_mean`` (original GRPO; TRL ``grpo``: mean per sequence, then over sequences)
    or ``constant`` (Dr. GRPO; TRL ``dr_grpo``: sum divided by sequences × ``loss_constant``)."""
    loss_constant: int | None = None
    """Token count per sequence for ``constant``; None uses the episode's generation budget,
    ``max_completion_length`` × the env's turn limit (its ``max_turns``), see :func:`dr_grpo_constant`."""
    epsilon: float = 0.2
    """Lower clip range: ratios below 1-ε stop contributing gradient for negative advantages."""
    epsilon_high: float | None = None
    """Upper clip range (DAPO's clip-higher, e.g. 0.28); None means the same as ``epsilon``."""
    beta: float = 0.0
    """Weight of the k3 KL penalty to the reference (initial) model. 0 loads no reference model at all."""
    entropy_coef: float = 0.0
    """Entropy bonus c: each policy token's loss gets -c·H_t (verl's ``entropy_coeff``); costs a softmax over the
    vocabulary per token with gradient. See :mod:`envgym.agents.training.entropy_control`."""
    entropy_control: str = "none"
    """``none``, ``clip_cov`` or ``kl_cov``: the covariance-based controls of arXiv:2505.22617 (verl's
    ``policy_loss.loss_mode``), formulas in :mod:`envgym.agents.training.entropy_control`."""
    clip_cov_ratio: float = 2e-4
    """Clip-Cov: share r of the policy tokens whose gradient is detached (at least one)."""
    clip_cov_lb: float = 1.0
    """Clip-Cov: lower bound ω_low of the covariance band tokens are drawn from."""
    clip_cov_ub: float = 5.0
    """Clip-Cov: upper bound ω_high of the covariance band."""
    kl_cov_ratio: float = 2e-4
    """KL-Cov: share k of the policy tokens, highest covariance first, that get the KL penalty (at least one)."""
    kl_cov_coef: float = 1.0
    """KL-Cov: weight β of the penalty |log π_θ - log π_old| (verl's ``ppo_kl_coef``)."""
    mask_truncated_completions: bool = False
    """Give truncated episodes (turn or token limit hit) no loss: their ending is not the policy's doing.
    They still count in their group's advantage statistics (as in TRL/DAPO). Failed episodes are another
    matter, see ``drop_failed_groups``."""
    drop_failed_groups: bool = True
    """An episode whose env, verifier, sandbox or model request failed (``Episode.error``) is never trained on:
    its reward says nothing about the policy. True also drops the rest of its group, because the group's mean
    and std without the missing member are biased (a hard task whose failures hit the slow, long answers looks
    easier than it is); False keeps the group's healthy episodes and computes their advantages among them."""
    importance_sampling_correction: bool = False
    """Rollout logprobs came from another engine (vLLM, a quantized copy): weight each token by the truncated
    ratio min(π_old/π_rollout, ``importance_sampling_cap``) (TRL's ``vllm_importance_sampling_correction``)."""
    importance_sampling_cap: float = 2.0
    """Truncation C of the importance weight above (TRL's ``vllm_importance_sampling_cap``)."""
    async_rollouts: bool = False
    """Off-policy training with bounded staleness: the rollouts of steps n+1..n+k (``max_staleness``) run (in a
    background thread, on an engine with weights of its own) while step n updates the model, so batch t was
    sampled by the weights of update t - k (``staleness`` k in the metrics; less in the first k steps). Paced,
    not discarded: the trainer waits for each batch, and the staleness is fixed, not a matter of timing, so runs
    repeat exactly and resume exactly. Turns ``importance_sampling_correction`` on. With the transformers engine
    the rollouts run on a copy of the model that gets the weights like vLLM would."""
    max_staleness: int = 1
    """k of ``async_rollouts``: how many updates old a batch's sampling weights are. Each k above 1 keeps one
    more batch in flight and, while a rollout runs, one more copy of the weights for the engine to load."""
    num_iterations: int = 1
    """μ: optimizer passes over each batch (ratios move away from 1 only when μ > 1)."""

    # --- optimisation ---------------------------------------------------------------------------------
    learning_rate: float = 1e-6
    """AdamW peak learning rate."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    adam_beta1: float = 0.9
    """AdamW β1."""
    adam_beta2: float = 0.99
    """AdamW β2 (0.99 as in most RL recipes: faster-moving second moments)."""
    lr_scheduler_type: str = "constant"
    """``constant``, ``linear`` (decay to 0 at the end) or ``cosine``; all after ``warmup_steps``. The schedule
    counts optimizer steps, as TRL's does: ``max_steps * num_iterations`` of them in a run."""
    warmup_steps: int = 0
    """Linear warm-up from 0 to ``learning_rate`` over this many optimizer steps."""
    max_steps: int = 100
    """Training steps (one optimizer step per batch and iteration)."""
    max_grad_norm: float | None = 1.0
    """Clip the global gradient norm to this (None: no clipping, the norm is still logged)."""
    max_tokens_per_microbatch: int = 8192
    """Token budget (padded prompt + completion) of one forward/backward; sequences are packed by length into
    micro-batches under it and gradients accumulate, so memory is bounded whatever the batch size."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass: less memory, about a third more compute."""
    bf16: bool | None = None
    """Autocast to bfloat16. None: on when training on a CUDA GPU, off on CPU."""
    lora_r: int = 0
    """LoRA rank through ``peft``; 0 trains all weights."""
    lora_alpha: int = 32
    """LoRA scaling α."""
    lora_dropout: float = 0.0
    """LoRA dropout."""
    lora_target_modules: str | list[str] = "all-linear"
    """Modules LoRA adapts (peft's ``target_modules``)."""
    seed: int = 0
    """Seeds torch, numpy and the task sampler: two runs with one seed on one machine are identical."""

    # --- bookkeeping ----------------------------------------------------------------------------------
    step_timeout: float | None = None
    """Seconds one env step may take (``make_vec``'s ``step_timeout``): a hung env is reported as that
    episode's error, replaced by a fresh one, and the batch goes on. None waits for ever."""
    logging_entropy: bool = True
    """Log the mean token entropy of the policy (one softmax over the vocabulary per token, no gradient)."""
    save_steps: int = 0
    """Write a checkpoint every this many steps (0: only at the end)."""
    report_to: str | list[str] = dataclasses.field(default_factory=list)
    """Trackers that also get every numeric metric, the config and sample episodes: ``trackio``, ``wandb``,
    ``tensorboard`` (a list or comma string; TRL's ``report_to``), see :mod:`envgym.agents.training.tracking`."""
    report_samples: int = 4
    """Episodes per step sent to the trackers as the table ``rollouts`` (0: none)."""

    def __post_init__(self) -> None:
        self.report_to = parse_report_to(self.report_to)
        if self.async_rollouts:
            self.importance_sampling_correction = True  # off-policy by k updates: weigh it
        if self.max_staleness < 1:
            raise ValueError(
                f"max_staleness must be >= 1 (updates between sampling and training), got {self.max_staleness}"
            )
        _choice("advantage", self.advantage, ADVANTAGES)
        _choice("loss_type", self.loss_type, LOSS_TYPES)
        _choice("scale_rewards", self.scale_rewards, SCALE_REWARDS)
        _choice("lr_scheduler_type", self.lr_scheduler_type, ("constant", "linear", "cosine"))
        _choice("entropy_control", self.entropy_control, ENTROPY_CONTROLS)
        for name in ("entropy_coef", "kl_cov_coef"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("clip_cov_ratio", "kl_cov_ratio"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be a share in [0, 1], got {getattr(self, name)}")
        if self.clip_cov_lb >= self.clip_cov_ub:
            raise ValueError(f"need clip_cov_lb < clip_cov_ub, got {self.clip_cov_lb} and {self.clip_cov_ub}")
        for name in ("num_generations",):
            if getattr(self, name) < 2:
                raise ValueError(
                    f"{name} must be >= 2 (advantages compare episodes within a group), got {getattr(self, name)}"
                )
        if self.report_samples < 0:
            raise ValueError(f"report_samples must be >= 0, got {self.report_samples}")
        for name in (
            "num_tasks_per_step",
            "max_completion_length",
            "num_iterations",
            "max_steps",
            "max_tokens_per_microbatch",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.epsilon < 0 or (self.epsilon_high is not None and self.epsilon_high < 0):
            raise ValueError(f"epsilon and epsilon_high must be >= 0, got {self.epsilon} and {self.epsilon_high}")
        if self.beta < 0:
            raise ValueError(f"beta must be >= 0, got {self.beta}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma}")
        if self.step_timeout is not None and self.step_timeout <= 0:
            raise ValueError(f"step_timeout must be > 0 seconds (or None for no limit), got {self.step_timeout}")


def _choice(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
