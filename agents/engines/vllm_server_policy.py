"""VLLMServerPolicy: rollouts on a vLLM server that runs apart from the trainer, with the trained weights pushed to it.

Generation goes to the server's ``/v1/completions`` with token ids in and out (:class:`OpenAIPolicy`'s token level,
so the agent loop's token contract holds). After each update the trainer calls :meth:`load_weights`: the LoRA
adapters are saved to a folder the server can read (the same machine, or a shared file system: ``adapter_dir``)
and loaded through vLLM's own runtime adapter API (``/v1/load_lora_adapter``); the following requests name that
adapter, and the one before is unloaded. Start the server with LoRA enabled and runtime updates allowed:

    VLLM_ALLOW_RUNTIME_LORA_UPDATING=True vllm serve MODEL --enable-lora --max-lora-rank 16 \\
        --logprobs-mode processed_logprobs

Full-weight training is refused here: vLLM's server has no public route that takes new base weights, and this
class uses only vLLM's public API (the in-process engine, ``--engine vllm``, syncs full weights).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from envgym.agents.engines.openai_policy import OpenAIPolicy, OpenAIPolicyError


class VLLMServerPolicy(OpenAIPolicy):
    """A vLLM server's completions with the trainer's LoRA adapters loaded into it after every update."""

    def __init__(
        self, base_url: str, model: str, tokenizer: Any, *, adapter_dir: str | Path | None = None, **options: Any
    ):
        super().__init__(base_url, model, endpoint="completions", tokenizer=tokenizer, **options)
        self.base_model = model
        self._own_dir = adapter_dir is None  # a folder of ours goes when the policy closes; a given one stays
        self.adapter_dir = Path(adapter_dir) if adapter_dir is not None else Path(tempfile.mkdtemp(prefix="envgym-"))
        self.version = 0
        # Adapter names of this policy alone: other runs and data-parallel ranks may share the server.
        rank = f"-rank{os.environ['RANK']}" if int(os.environ.get("WORLD_SIZE", "1")) > 1 else ""
        self.run = f"envgym-{uuid.uuid4().hex[:8]}{rank}"
        self.settings["engine"] = "vllm-server"

    def load_weights(self, model: Any) -> int:
        """Save ``model``'s LoRA adapters, load them into the server under a new name and sample with them from
        now on; returns how many adapter tensors went over."""
        if not hasattr(model, "peft_config"):
            raise ValueError(
                "--engine vllm-server sends the trained weights as LoRA adapters (vLLM's runtime adapter loading): "
                "train with lora_r > 0, or use --engine vllm (in-process) for full weights"
            )
        self.version += 1
        name = f"{self.run}-{self.version}"
        path = self.adapter_dir / name
        model.save_pretrained(path)
        self._admin("/load_lora_adapter", {"lora_name": name, "lora_path": str(path.resolve())})
        previous, self.name = self.name, name
        self.settings["model"] = self.base_model  # what shapes the samples is the base model and the step
        if previous != self.base_model:
            self._admin("/unload_lora_adapter", {"lora_name": previous})
            shutil.rmtree(self.adapter_dir / previous, ignore_errors=True)
        return sum(1 for n, _ in model.named_parameters() if "lora_" in n)

    def close(self) -> None:
        """Unload this policy's adapter from the server (the server keeps running) and remove its folder."""
        if self.name != self.base_model:
            try:
                self._admin("/unload_lora_adapter", {"lora_name": self.name})
            except Exception:  # a server already gone has nothing left to unload
                pass
            self.name = self.base_model
        super().close()
        if self._own_dir:
            shutil.rmtree(self.adapter_dir, ignore_errors=True)

    def _admin(self, path: str, body: dict[str, Any]) -> None:
        """POST to one of vLLM's adapter routes; an error names the route, the answer and how to start the server."""
        response = self._client.post(f"{self.base_url}{path}", json=body)
        if response.status_code != 200:
            raise OpenAIPolicyError(
                f"POST {self.base_url}{path} answered HTTP {response.status_code}: {response.text[:300]}. The server "
                "needs --enable-lora, a --max-lora-rank at least the adapters' r, and "
                "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True in its environment"
            )


def served_model(base_url: str, timeout: float = 30.0) -> str:
    """The id of the model a server serves (its first in ``/v1/models``): the base model the requests name."""
    import httpx

    response = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout)
    response.raise_for_status()
    return response.json()["data"][0]["id"]
