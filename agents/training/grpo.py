"""GRPO: the config and the clipped policy loss (advantages are in :mod:`envgym.agents.training.advantages`).

Objective (per optimizer step, over a batch of groups; G episodes of one task form a group)::

    L(θ) = agg_{i,t} [ -min(ρ_t A_{i,t}, clip(ρ_t, 1-ε, 1+ε_high) A_{i,t}) · w_t  +  β · KL3_t ]   over policy tokens
    ρ_t  = π_θ(y_t | ·) / π_old(y_t | ·)
    KL3  = exp(q) - q - 1,  q = log π_ref(y_t) - log π_θ(y_t)                        (Schulman's k3 estimator)
    w_t  = min(π_old(y_t) / π_rollout(y_t), cap)   only with importance-sampling correction, else 1

``A_{i,t}`` is the advantage of the *turn* that token t belongs to (:mod:`envgym.agents.training.advantages`),
so multi-turn episodes get per-turn credit; with process rewards in the reward spec, each token of step k of a
response also gets that step's advantage (PURE's min-form credit or a sum). Tokens the
env or chat template wrote (loss mask 0) never count.
Optional entropy control changes the per-token term: an entropy bonus -c·H_t, Clip-Cov (drop a random few
high-covariance tokens from the loss) or KL-Cov (no clip; |log ρ_t| penalty on the top-covariance tokens); the
formulas are in :mod:`envgym.agents.training.entropy_control`.

Simplifications, stated: π_old is the model at the start of the step (its logprobs are taken from the first
pass over the batch, detached, so on-policy training needs one forward per token, like TRL with
``num_iterations=1``); there is no value function; the reference model for β > 0 is the initial policy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch

from envgym.agents.training.entropy_control import (ENTROPY_CONTROLS, clip_cov_selection, kl_cov_selection,
                                                    token_covariance)
from envgym.agents.training.tracking import parse_report_to

ADVANTAGES = ("grpo", "dr_grpo", "rloo", "rebn", "gdpo", "turn_grpo")
LOSS_TYPES = ("token_mean", "seq_mean_token_mean", "constant")
SCALE_REWARDS = ("group", "batch", "none")


@dataclasses.dataclass
class GRPOConfig:
    """Every knob of the algorithm and the training loop. Names follow TRL's ``GRPOConfig`` where the concept is
    the same (``num_generations``, ``epsilon``, ``epsilon_high``, ``beta``, ``loss_type``, ``scale_rewards``,
    ``mask_truncated_completions``, ``num_iterations``, ``learning_rate``, ``max_grad_norm``...)."""

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
    ``max_completion_length`` × the turn limit (``max_turns`` or the env's own), see :func:`dr_grpo_constant`."""
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
    """One-step off-policy training: the rollouts of step n+1 run (in a background thread, on an engine with
    weights of its own) while step n updates the model, so every batch after the first was sampled by the
    weights of one update before (``staleness`` 1 in the metrics). Paced, not discarded: the trainer waits for
    each batch and syncs the engine between batches, so staleness never exceeds 1. Turns
    ``importance_sampling_correction`` on. With the transformers engine the rollouts run on a copy of the
    model that gets the weights like vLLM would."""
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
    max_turns: int | None = None
    """Turn limit per episode passed to the rollout loop (None: the env's registered ``max_turns``)."""
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
            self.importance_sampling_correction = True  # off-policy by one update: weigh it
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
                raise ValueError(f"{name} must be >= 2 (advantages compare episodes within a group), got {getattr(self, name)}")
        if self.report_samples < 0:
            raise ValueError(f"report_samples must be >= 0, got {self.report_samples}")
        for name in ("num_tasks_per_step", "max_completion_length", "num_iterations", "max_steps", "max_tokens_per_microbatch"):
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GRPOConfig:
        """Build from a dict (a config file), refusing unknown keys with the list of known ones."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown GRPOConfig fields {unknown}; known fields are {sorted(known)}")
        return cls(**data)


def _choice(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def dr_grpo_constant(config: GRPOConfig, max_turns: int | None, turns_seen: int) -> int:
    """C of ``loss_type="constant"``: ``loss_constant`` when set, else the episode's generation budget,
    ``max_completion_length × max_turns``. Dr. GRPO (Liu et al. 2025, arXiv:2503.20783) divides by the most
    tokens a sequence can hold; a multi-turn episode holds every turn's allowance, not one turn's. Without a
    turn limit (``max_turns`` None) the budget is known only while no episode has more than one turn."""
    if config.loss_constant:
        return config.loss_constant
    if max_turns is None:
        if turns_seen > 1:
            raise ValueError("loss_type='constant' divides by the episode's generation budget, max_completion_length "
                             "x the turn limit, and this env's episodes have several turns but no known limit: set "
                             "max_turns (or loss_constant) in the config, or register the env with max_turns")
        max_turns = 1
    return config.max_completion_length * max_turns


# ----------------------------------------------------------------------------------------------------
# Loss
# ----------------------------------------------------------------------------------------------------


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log softmax(logits)[target] per position, without materializing the full log-softmax."""
    logits = logits.float()
    return logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)


def policy_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    config: GRPOConfig,
    *,
    num_sequences: int,
    num_tokens: int,
    ref_logprobs: torch.Tensor | None = None,
    rollout_logprobs: torch.Tensor | None = None,
    loss_constant: int | None = None,
    entropy: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The clipped surrogate of the module docstring for one micro-batch of shape (B, T).

    ``num_sequences`` and ``num_tokens`` are counts over the *whole* optimizer batch (sequences with at least
    one policy token, and policy tokens), so the micro-batch losses add up to the batch loss and gradient
    accumulation is exact. Aggregations over token losses ℓ_{i,t} with mask m_{i,t}:

    - ``token_mean``:          Σ_{i,t} m ℓ / Σ_{i,t} m
    - ``seq_mean_token_mean``: (1/N) Σ_i (Σ_t m ℓ / Σ_t m)
    - ``constant``:            Σ_{i,t} m ℓ / (N · C), C = ``loss_constant`` (from :func:`dr_grpo_constant`;
                               None: the one-turn budget ``dr_grpo_constant(config, 1, 1)``)

    ``entropy_control`` changes ℓ as :mod:`envgym.agents.training.entropy_control` describes (``cov_selected`` counts
    the tokens it picked), and ``entropy`` (B, T), the per-token entropy with gradient, is needed for ``entropy_coef``.

    Returns the loss and sums (not means) of the statistics, for the trainer to normalize over the batch.
    """
    mask = mask.to(logprobs.dtype)
    log_ratio = logprobs - old_logprobs
    ratio = torch.exp(log_ratio)
    low, high = 1.0 - config.epsilon, 1.0 + (config.epsilon if config.epsilon_high is None else config.epsilon_high)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, low, high) * advantages
    per_token = -torch.min(unclipped, clipped)
    selected = None
    if config.entropy_control != "none":
        covariance = token_covariance(logprobs, advantages, mask)
        if config.entropy_control == "clip_cov":
            selected = clip_cov_selection(covariance, mask, config.clip_cov_ratio, config.clip_cov_lb,
                                          config.clip_cov_ub, already_clipped=clipped < unclipped)
            per_token = per_token * (~selected).to(per_token.dtype)  # no loss, so no gradient, from these tokens
        else:  # kl_cov: no ratio clipping; the top tokens by covariance are held near π_old instead
            selected = kl_cov_selection(covariance, mask, config.kl_cov_ratio)
            per_token = -unclipped + config.kl_cov_coef * selected.to(per_token.dtype) * log_ratio.abs()
    if config.importance_sampling_correction:
        if rollout_logprobs is None:
            raise ValueError("importance_sampling_correction needs the rollout engine's logprobs")
        weight = torch.exp(old_logprobs - rollout_logprobs).clamp(max=config.importance_sampling_cap)
        per_token = per_token * weight.detach()
    kl = None
    if config.beta > 0:
        if ref_logprobs is None:
            raise ValueError("beta > 0 needs reference logprobs")
        q = ref_logprobs - logprobs
        kl = torch.exp(q) - q - 1.0
        per_token = per_token + config.beta * kl
    if config.entropy_coef > 0:
        if entropy is None:
            raise ValueError("entropy_coef > 0 needs the per-token entropies")
        per_token = per_token - config.entropy_coef * entropy

    if config.loss_type == "token_mean":
        loss = (per_token * mask).sum() / max(num_tokens, 1)
    elif config.loss_type == "seq_mean_token_mean":
        loss = ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).sum() / max(num_sequences, 1)
    else:
        constant = loss_constant or dr_grpo_constant(config, 1, 1)
        loss = (per_token * mask).sum() / (max(num_sequences, 1) * constant)

    with torch.no_grad():
        stats = {
            "clip_low": (((ratio < low) & (advantages < 0)).to(mask.dtype) * mask).sum(),
            "clip_high": (((ratio > high) & (advantages > 0)).to(mask.dtype) * mask).sum(),
            "kl": (kl.detach() * mask).sum() if kl is not None else torch.zeros(()),
            "ratio": (ratio.detach() * mask).sum(),
        }
        if selected is not None:
            stats["cov_selected"] = (selected.to(mask.dtype) * mask).sum()
    return loss, stats
