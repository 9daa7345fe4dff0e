"""TrainerPolicy: envgym's token-level policy over the model a TRL ``GRPOTrainer`` is training.

Kept apart from :mod:`envgym.integrations.trl` so that module imports ``envgym.agents`` (and ``trl``) only when a
rollout actually runs.
"""

from __future__ import annotations

from typing import Any

from envgym.agents.engines.policy import Generation, SamplingParams
from envgym.agents.engines.transformers_policy import TransformersPolicy


class TrainerPolicy(TransformersPolicy):
    """:class:`~envgym.agents.engines.transformers_policy.TransformersPolicy`'s batched generation, on ``trainer``'s
    model, unwrapped for generation the way TRL itself does it (DeepSpeed/FSDP parameters gathered, gradient
    checkpointing off while generating). The model is used as it is: never copied, moved or put in eval mode
    (TRL reads ``model.training`` right after the rollout to tell training from evaluation)."""

    def __init__(self, trainer: Any):  # no super().__init__: it would load or move the model and call eval()
        self.trainer = trainer
        processing_class = trainer.processing_class
        self.tokenizer = getattr(processing_class, "tokenizer", processing_class)  # a VLM processor holds one
        self.name = "trl-trainer-model"
        self.device = str(trainer.accelerator.device)
        self.eos_ids = list(trainer.eos_token_ids)

    def generate(self, prompts: list[list[int]], params: SamplingParams) -> list[Generation]:
        from trl.models.utils import unwrap_model_for_generation

        args = self.trainer.args
        with unwrap_model_for_generation(
            self.trainer.model_wrapped,
            self.trainer.accelerator,
            gather_deepspeed3_params=args.ds3_gather_for_generation,
            gradient_checkpointing_kwargs=args.gradient_checkpointing_kwargs,
        ) as model:
            self.model = model
            return super().generate(prompts, params)
