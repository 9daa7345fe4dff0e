"""Data-parallel GRPO over ``torch.distributed`` (launched by ``torchrun`` or ``accelerate launch``).

Every rank holds the whole model and the whole step's groups; each rank rolls out its share of the step's tasks,
the groups are gathered so every rank sees the same batch (metrics, curricula and dynamic sampling stay identical),
and each rank takes the gradient of its share of the groups (a group stays on one rank). The per-rank losses use
the global batch's normalisers, so their gradients sum to the one-process gradient exactly; the sum is taken with
one ``all_reduce`` per step and iteration. DDP's wrapper is not used because the loss runs the decoder and the
vocabulary head separately (``batching.decoder_and_head``), outside the module's ``forward`` that DDP hooks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import torch
import torch.distributed as dist

T = TypeVar("T")


class DataParallel:
    """This process's place among the ranks; one process (world size 1) makes every call a no-op."""

    def __init__(self, rank: int = 0, world_size: int = 1):
        self.rank, self.world_size = rank, world_size

    @classmethod
    def from_environment(cls, device: torch.device) -> DataParallel:
        """The ranks ``torchrun``/``accelerate launch`` started (``WORLD_SIZE`` > 1 in the environment), with the
        process group joined (gloo on CPU, nccl on CUDA); else one process."""
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        if world_size == 1:
            return cls()
        if device.type == "cuda":
            torch.cuda.set_device(device)  # NCCL's collectives (all_gather_object too) use the current device
        if not dist.is_initialized():
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        return cls(dist.get_rank(), dist.get_world_size())

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0 logs, writes checkpoints and plots."""
        return self.rank == 0

    def mine(self, items: Sequence[T]) -> list[T]:
        """This rank's share: every ``world_size``-th item from its rank."""
        return list(items[self.rank :: self.world_size])

    def gather(self, value: Any) -> list[Any]:
        """Every rank's ``value`` (picklable), in rank order."""
        if not self.enabled:
            return [value]
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, value)
        return out

    def broadcast_parameters(self, module: torch.nn.Module) -> None:
        """Rank 0's weights everywhere (a randomly initialised adapter would differ by rank)."""
        if self.enabled:
            for tensor in [*module.parameters(), *module.buffers()]:
                dist.broadcast(tensor.data, src=0)

    def sum_gradients(self, params: Iterable[torch.nn.Parameter]) -> None:
        """Sum the gradients over ranks in one flat ``all_reduce``; a parameter this rank did not reach counts 0."""
        if not self.enabled:
            return
        params = list(params)
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        dist.all_reduce(flat)
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p.grad))
            offset += p.numel()

    def sum_floats(self, values: dict[str, float]) -> dict[str, float]:
        """Per-key sums over ranks (keys a rank lacks count 0)."""
        if not self.enabled:
            return values
        total: dict[str, float] = {}
        for part in self.gather(values):
            for key, value in part.items():
                total[key] = total.get(key, 0.0) + value
        return total

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()
