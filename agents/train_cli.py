"""``envgym train``: GRPO on any registered env from the command line (flags or a YAML/JSON config file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def train_command(
    env: str = typer.Option(None, "--env", help="Env id to train on, e.g. math/Arithmetic-v0 (default: the config's env)."),
    model: str = typer.Option(None, "--model",
                              help="Model: a local folder, a .gguf file, a cached Hub id, or 'smollm2' (packaged); "
                                   "default: the config's model, else SmolLM2-135M-Instruct."),
    steps: int = typer.Option(None, "--steps", help="Training steps (overrides the config's max_steps)."),
    group_size: int = typer.Option(None, "--group-size", help="G: episodes per task (config num_generations)."),
    out: Path = typer.Option(Path("runs/grpo"), "--out", help="Folder for metrics.jsonl, checkpoints and the plot."),
    config: Path = typer.Option(None, "--config", help="YAML or JSON file of GRPOConfig fields."),
    learning_rate: float = typer.Option(None, "--lr", help="Learning rate (overrides the config)."),
    resume: Path = typer.Option(None, "--resume", help="A checkpoint folder to continue from exactly."),
    device: str = typer.Option(None, "--device", help="cpu or cuda (default: cuda when available)."),
    env_kwargs: str = typer.Option(None, "--env-kwargs", help='JSON object of env arguments, e.g. \'{"difficulty": 1}\'.'),
    engine: str = typer.Option(None, "--engine",
                               help="Rollout engine: transformers (the trained model generates) or vllm (an "
                                    "in-process vLLM engine on the same model, weights synced after each step); "
                                    "default: vllm where it is installed, else transformers."),
) -> None:
    """Train a model with GRPO on an env; writes OUT/metrics.jsonl, OUT/checkpoints/ and OUT/reward_curve.png.

    The config file (a recipe, e.g. recipes/smollm2-arithmetic-cpu.yaml) holds GRPOConfig fields and optionally
    ``env``, ``env_kwargs`` (arguments for the env), ``model`` and ``reward`` (a reward spec, docs/rewards.md);
    flags win."""
    from rich.console import Console
    from rich.markup import escape  # the message names the extra to install, "envgym[vllm]"
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from envgym.agents.trainer import GRPOTrainer

    console = Console(stderr=True)
    overrides = {"max_steps": steps, "num_generations": group_size, "learning_rate": learning_rate}
    try:
        config_env, make_kwargs, config_model, grpo_config = read_recipe(config, overrides)
    except (TypeError, ValueError) as error:
        console.print(f"[red]bad training config: {error}[/red]")
        raise typer.Exit(2) from None
    env = env or config_env
    if env is None:
        raise typer.BadParameter("give --env ID or a config file with `env: ID`")
    model = model or config_model or "HuggingFaceTB/SmolLM2-135M-Instruct"
    if env_kwargs:
        import json

        try:
            make_kwargs.update(json.loads(env_kwargs))
        except (json.JSONDecodeError, TypeError, ValueError) as error:
            raise typer.BadParameter(f"--env-kwargs must be a JSON object, e.g. '{{\"difficulty\": 1}}' ({error})")
    from envgym.agents.policy import ENGINES, default_engine

    engine = engine or default_engine()
    if engine not in ENGINES:
        raise typer.BadParameter(f"unknown engine {engine!r}; choose transformers or vllm")
    console.print(f"rollout engine: {engine}")
    loaded, tokenizer = load_model(model)
    policy = None
    if engine == "vllm":
        try:
            from envgym.agents.vllm_policy import VLLMPolicy

            policy = VLLMPolicy(model)
        except ImportError as error:
            console.print(f"[red]{escape(str(error))}[/red]")
            raise typer.Exit(2) from None
    trainer = GRPOTrainer(loaded, tokenizer, env, grpo_config, out_dir=out, device=device, env_kwargs=make_kwargs,
                          policy=policy)
    if resume is not None:
        trainer.load_checkpoint(resume)
    columns = [TextColumn("[bold]GRPO[/bold]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[status]}")]
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task("train", total=grpo_config.max_steps, completed=trainer.step, status="")

        def show(metrics: dict[str, Any]) -> None:
            status = f"reward {metrics.get('reward_mean', float('nan')):.3f}  loss {metrics['loss']:+.4f}"
            progress.update(bar, completed=metrics["step"], status=status)

        trainer.train(on_step=show)
    console.print(f"wrote {out / 'metrics.jsonl'}, {out / 'checkpoints'} and {out / 'reward_curve.png'}")


def load_model(name: str, dtype: Any = None) -> tuple[Any, Any]:
    """Load a model to train (float32 unless told otherwise: GGUF weights are de-quantized) and its tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.models import resolve_model

    resolved = resolve_model(name)
    tokenizer = AutoTokenizer.from_pretrained(resolved.path, **resolved.load_kwargs())
    model = AutoModelForCausalLM.from_pretrained(resolved.path, dtype=dtype or torch.float32, **resolved.load_kwargs())
    return model, tokenizer


def read_recipe(path: Path | None, overrides: dict[str, Any]) -> tuple[str | None, dict[str, Any], str | None, Any]:
    """``(env, env_kwargs, model, GRPOConfig)`` from a YAML/JSON training config (None: defaults only);
    ``overrides`` that are not None replace the file's GRPOConfig fields. A ``reward:`` section (see
    ``docs/rewards.md``) is validated here, before any rollout, and travels in ``env_kwargs["reward"]``."""
    from envgym.agents.grpo import GRPOConfig
    from envgym.rewards import RewardSpec

    fields = _read_config(path) if path is not None else {}
    env, model = fields.pop("env", None), fields.pop("model", None)
    env_kwargs = dict(fields.pop("env_kwargs", None) or {})
    if "reward" in fields:
        env_kwargs["reward"] = RewardSpec.from_dict(fields.pop("reward"), where="reward")
    fields.update({key: value for key, value in overrides.items() if value is not None})
    return env, env_kwargs, model, GRPOConfig.from_dict(fields)


def _read_config(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise typer.BadParameter(f"config file {path} does not exist")
    text = path.read_text()
    if path.suffix == ".json":
        import json

        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise typer.BadParameter(f"{path} must hold a mapping of GRPOConfig fields, got {type(data).__name__}")
    return data
