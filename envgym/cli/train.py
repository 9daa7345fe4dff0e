"""``envgym train``: GRPO on any registered env from the command line (flags or a YAML/JSON config file).

Every input (env id, env arguments, recipe file, model name, checkpoint) is checked before the model loads,
and a mistake is one line (exit code 2; ``--debug`` shows the traceback). A checkpoint the run writes is a
model name for ``eval``, ``train`` and ``serve model``; the run ends by printing the command that evaluates it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from envgym.agents.runs import ROLLOUTS_FILE
from envgym.cli.output import (
    DEBUG_HELP,
    VERBOSE_HELP,
    StepProgress,
    one_line_errors,
    quiet_libraries,
    training_callback,
)
from envgym.config import BadInput

if TYPE_CHECKING:
    from envgym.agents.training.recipe import Recipe

DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def train_command(
    env: str = typer.Option(
        None, "--env", help="Env id to train on, e.g. math/Arithmetic-v0 (default: the config's env)."
    ),
    model: str = typer.Option(
        None,
        "--model",
        help="Model: a local folder, a training checkpoint (LoRA or full), a .gguf file, a "
        "cached Hub id, or 'smollm2' (packaged); default: the config's model, else "
        "SmolLM2-135M-Instruct (with --resume: the checkpoint's model).",
    ),
    steps: int = typer.Option(None, "--steps", help="Training steps (overrides the config's max_steps)."),
    num_generations: int = typer.Option(
        None, "--num-generations", help="G: episodes per task (config num_generations)."
    ),
    out: Path = typer.Option(Path("runs/grpo"), "--out", help="Folder for metrics.jsonl, checkpoints and the plot."),
    config: str = typer.Option(
        None,
        "--config",
        help="YAML or JSON file of GRPOConfig fields, or the name of an installed recipe "
        "(e.g. smollm2-arithmetic-cpu).",
    ),
    learning_rate: float = typer.Option(None, "--lr", help="Learning rate (overrides the config)."),
    resume: Path = typer.Option(None, "--resume", help="A checkpoint folder to continue from exactly."),
    device: str = typer.Option(None, "--device", help="cpu or cuda (default: cuda when available)."),
    env_kwargs: str = typer.Option(
        None, "--env-kwargs", help="JSON object of env arguments, e.g. '{\"difficulty\": 1}'."
    ),
    engine: str = typer.Option(
        None,
        "--engine",
        help="Rollout engine: transformers (the trained model generates), vllm (an "
        "in-process vLLM engine on the same model, weights synced after each step) or "
        "vllm-server (a running vLLM server at --base-url, LoRA adapters loaded into it "
        "after each step); default: vllm where it is installed, else transformers.",
    ),
    base_url: str = typer.Option(
        None, "--base-url", help="With --engine vllm-server: the server's OpenAI URL, e.g. http://host:8000/v1."
    ),
    report_to: str = typer.Option(
        None,
        "--report-to",
        help="Also log metrics, config and sample episodes to these trackers, comma-"
        "separated: trackio, wandb, tensorboard (overrides the config's report_to; "
        "none for none).",
    ),
    save_rollouts: int = typer.Option(
        0,
        "--save-rollouts",
        min=0,
        help="Write this many sampled episodes per step to OUT/rollouts.jsonl (the "
        "samples.jsonl format of envgym eval, with token ids for envgym "
        "export --tokens).",
    ),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Train a model with GRPO on an env; writes OUT/metrics.jsonl, OUT/checkpoints/ and OUT/reward_curve.png.

    The config file (a recipe, e.g. recipes/smollm2-arithmetic-cpu.yaml) holds GRPOConfig fields and optionally
    ``env``, ``env_kwargs`` (arguments for the env), ``model`` and ``reward`` (a reward spec, docs/rewards.md),
    or ``envs`` (a weighted mixture) and ``curriculum`` (docs/training.md); flags win (``--env`` replaces
    ``envs``)."""
    with one_line_errors(debug):
        quiet_libraries(verbose)
        plan = plan_training(
            env=env,
            model=model,
            config=config,
            env_kwargs=env_kwargs,
            resume=resume,
            engine=engine,
            base_url=base_url,
            overrides={
                "max_steps": steps,
                "num_generations": num_generations,
                "learning_rate": learning_rate,
                "report_to": report_to,
            },
        )
        run_training(plan, out=out, device=device, save_rollouts=save_rollouts)


@dataclasses.dataclass
class TrainingPlan:
    """A training run with every input checked and nothing loaded yet: the recipe (flags applied), the model to
    load and the rollout engine."""

    recipe: Recipe
    model: str
    engine: str
    resume: Path | None
    base_url: str | None = None
    """The vLLM server of ``--engine vllm-server``."""

    @property
    def env(self) -> str:
        """The env id, or a mixture's label."""
        return self.recipe.label

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return self.recipe.env_kwargs

    @property
    def config(self) -> Any:
        return self.recipe.config

    @property
    def mixture(self) -> Any:
        return self.recipe.mixture


def plan_training(
    *,
    env: str | None,
    model: str | None,
    config: str | Path | None,
    env_kwargs: str | None,
    resume: Path | None,
    engine: str | None,
    overrides: dict[str, Any],
    base_url: str | None = None,
    default_model: str = DEFAULT_MODEL,
) -> TrainingPlan:
    """Check every input, cheapest first, without loading a model; raises :class:`BadInput` (one line). The model
    is ``model``, else the checkpoint's with ``resume``, else the recipe's, else ``default_model``."""
    from envgym.agents.engines.policy import ENGINES, default_engine
    from envgym.agents.training.recipe import read_recipe
    from envgym.cli.preflight import check_model_name, check_report_to, env_kwargs_object

    engine = engine or default_engine()
    engines = (*ENGINES, "vllm-server")
    if engine not in engines:
        raise BadInput(f"--engine: unknown engine {engine!r}; choose {', '.join(engines)}")
    if (engine == "vllm-server") != (base_url is not None):
        raise BadInput("--engine vllm-server and --base-url go together (the server's URL, e.g. http://host:8000/v1)")
    extra = env_kwargs_object(env_kwargs) if env_kwargs else None
    recipe = read_recipe(config, env=env, env_kwargs=extra, overrides=overrides)
    model = _resumed_model(resume, model) or recipe.model or default_model
    check_model_name(model)
    check_report_to(recipe.config.report_to, where="report_to")  # its library is installed
    if engine == "vllm-server" and recipe.config.lora_r == 0:
        raise BadInput(
            "--engine vllm-server loads the trained LoRA adapters into the server after each step: set lora_r "
            "(e.g. 16), or use --engine vllm for full-weight training"
        )
    return TrainingPlan(recipe, model, engine, resume, base_url)


def _resumed_model(resume: Path | None, model: str | None) -> str | None:
    """The model to load: ``model``, or with ``--resume`` (and no other model) the checkpoint's own."""
    if resume is None:
        return model
    if not (resume / "trainer_state.pt").exists():
        raise BadInput(
            f"--resume: {resume} is not a training checkpoint (no trainer_state.pt); give a folder "
            "like OUT/checkpoints/step-N"
        )
    from envgym.agents.engines.models import resume_model

    if model is None or Path(model).resolve() == resume.resolve():  # the adapter comes back with the state
        return resume_model(resume)
    return model


def run_training(plan: TrainingPlan, *, out: Path, device: str | None, save_rollouts: int = 0) -> Any:
    """Load the model, train, checkpoint; prints progress and, at the end, how to evaluate the result."""
    from rich.console import Console

    from envgym.agents.engines.models import load_model
    from envgym.agents.evaluation.evaluate import tokenizer_name
    from envgym.agents.training.trainer import GRPOTrainer

    main = int(os.environ.get("RANK", "0")) == 0  # under torchrun, rank 0 prints and writes; all ranks train
    console = Console(quiet=not main)
    console.print(f"rollout engine: {plan.engine}")
    if main:
        console.print(f"audit: {write_audit_status(plan, out)}", soft_wrap=True, markup=False, highlight=False)
    loaded, tokenizer = load_model(plan.model)
    policy = None
    if plan.engine == "vllm":
        try:
            from envgym.agents.engines.vllm_policy import VLLMPolicy

            policy = VLLMPolicy(plan.model)
        except ImportError as error:  # its message names the extra to install, envgym[vllm]
            raise BadInput(str(error)) from None
    elif plan.engine == "vllm-server":
        from envgym.agents.engines.vllm_server_policy import VLLMServerPolicy, served_model

        policy = VLLMServerPolicy(plan.base_url, served_model(plan.base_url), tokenizer)
    trainer = GRPOTrainer(
        loaded,
        tokenizer,
        plan.recipe.trainer_env,
        plan.config,
        out_dir=out,
        device=device,
        env_kwargs=plan.env_kwargs if plan.mixture is None else None,
        reward=plan.recipe.reward if plan.mixture is None else None,
        policy=policy,
    )
    if plan.resume is not None:
        trainer.load_checkpoint(plan.resume)
    with StepProgress(console, "GRPO", plan.config.max_steps, trainer.step) as progress:
        show = training_callback(progress, console)

        def on_step(metrics: dict[str, Any]) -> None:
            show(metrics)
            if save_rollouts and main:
                write_rollouts(
                    out / ROLLOUTS_FILE,
                    trainer.last_rollouts,
                    metrics["step"],
                    save_rollouts,
                    tokenizer_name(tokenizer, plan.model),
                )

        trainer.train(on_step=on_step)
    console.print(
        f"wrote {out / 'metrics.jsonl'}, {out / 'checkpoints'} and {out / 'reward_curve.png'}", soft_wrap=True
    )
    if plan.mixture is not None:
        from envgym.agents.training.mixture import summary_lines

        for line in summary_lines(plan.mixture, trainer.history):
            console.print(line, soft_wrap=True, markup=False, highlight=False)
    checkpoint = out / "checkpoints" / f"step-{trainer.step}"
    env_ids = ",".join(dict.fromkeys(m.env for m in plan.mixture.members)) if plan.mixture is not None else plan.env
    console.print(
        f"evaluate it: {eval_command(checkpoint, env_ids, plan.recipe.env_kwargs)}",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )
    return trainer


def write_audit_status(plan: TrainingPlan, out: Path) -> str:
    """Write ``OUT/audit.json``: what the trust record says of each env of the run with the reward it trains on
    (docs/audit.md); returns a one-line summary."""
    from envgym.audit.record import audit_status

    members = (
        [(m.env, m.reward) for m in plan.mixture.members if isinstance(m.env, str)]
        if plan.mixture is not None
        else [(plan.env, plan.recipe.reward)]
    )
    statuses = {env: audit_status(env, reward) for env, reward in members}
    out.mkdir(parents=True, exist_ok=True)
    (out / "audit.json").write_text(json.dumps(statuses, indent=2, default=str))
    return ", ".join(f"{env} {status['status']}" for env, status in statuses.items())


def eval_command(checkpoint: Path, env: str, env_kwargs: dict[str, Any]) -> str:
    """The ``envgym eval`` command line that evaluates ``checkpoint`` on the env it was trained on."""
    words = ["envgym", "eval", "--model", str(checkpoint), "--env", env]
    if env_kwargs:
        words += ["--env-kwargs", json.dumps(env_kwargs, ensure_ascii=False)]
    return " ".join(shlex.quote(word) for word in words)


def write_rollouts(path: Path, groups: list[list[Any]], step: int, count: int, tokenizer: str | None = None) -> None:
    """Append ``count`` episodes of this step's rollouts, drawn at random (seeded by the step: the same ones
    the trackers get), to ``path`` as ``samples.jsonl`` records with the step, each with its token ids (of
    ``tokenizer``), so ``envgym export --tokens`` needs no re-tokenizing (they are few, unlike eval samples)."""
    from envgym.agents.training.tracking import step_samples

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for record in step_samples(groups, step, count, keep_tokens=True, tokenizer=tokenizer):
            handle.write(json.dumps({"step": step, **record}, ensure_ascii=False) + "\n")
