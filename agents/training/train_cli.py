"""``envgym train``: GRPO on any registered env from the command line (flags or a YAML/JSON config file).

Every input (env id, env arguments, recipe file, model name, checkpoint) is checked before the model loads,
and a mistake is one line (exit code 2; ``--debug`` shows the traceback). A checkpoint the run writes is a
model name for ``eval``, ``train`` and ``serve model``; the run ends by printing the command that evaluates it.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path
from typing import Any

import typer

from envgym.agents.cli_output import DEBUG_HELP, VERBOSE_HELP, StepProgress, one_line_errors, quiet_libraries, \
    training_callback
from envgym.agents.preflight import BadInput

DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
ROLLOUTS_FILE = "rollouts.jsonl"


def train_command(
    env: str = typer.Option(None, "--env", help="Env id to train on, e.g. math/Arithmetic-v0 (default: the config's env)."),
    model: str = typer.Option(None, "--model",
                              help="Model: a local folder, a training checkpoint (LoRA or full), a .gguf file, a "
                                   "cached Hub id, or 'smollm2' (packaged); default: the config's model, else "
                                   "SmolLM2-135M-Instruct (with --resume: the checkpoint's model)."),
    steps: int = typer.Option(None, "--steps", help="Training steps (overrides the config's max_steps)."),
    group_size: int = typer.Option(None, "--group-size", help="G: episodes per task (config num_generations)."),
    out: Path = typer.Option(Path("runs/grpo"), "--out", help="Folder for metrics.jsonl, checkpoints and the plot."),
    config: str = typer.Option(None, "--config",
                               help="YAML or JSON file of GRPOConfig fields, or the name of an installed recipe "
                                    "(e.g. smollm2-arithmetic-cpu)."),
    learning_rate: float = typer.Option(None, "--lr", help="Learning rate (overrides the config)."),
    resume: Path = typer.Option(None, "--resume", help="A checkpoint folder to continue from exactly."),
    device: str = typer.Option(None, "--device", help="cpu or cuda (default: cuda when available)."),
    env_kwargs: str = typer.Option(None, "--env-kwargs", help='JSON object of env arguments, e.g. \'{"difficulty": 1}\'.'),
    engine: str = typer.Option(None, "--engine",
                               help="Rollout engine: transformers (the trained model generates) or vllm (an "
                                    "in-process vLLM engine on the same model, weights synced after each step); "
                                    "default: vllm where it is installed, else transformers."),
    report_to: str = typer.Option(None, "--report-to",
                                  help="Also log metrics, config and sample episodes to these trackers, comma-"
                                       "separated: trackio, wandb, tensorboard (overrides the config's report_to; "
                                       "none for none)."),
    save_rollouts: int = typer.Option(0, "--save-rollouts", min=0,
                                      help="Write this many sampled episodes per step to OUT/rollouts.jsonl (the "
                                           "samples.jsonl format of envgym eval, with token ids for envgym "
                                           "export --tokens)."),
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
        plan = plan_training(env=env, model=model, config=config, env_kwargs=env_kwargs, resume=resume,
                             engine=engine, overrides={"max_steps": steps, "num_generations": group_size,
                                                       "learning_rate": learning_rate, "report_to": report_to})
        run_training(plan, out=out, device=device, save_rollouts=save_rollouts)


@dataclasses.dataclass
class TrainingPlan:
    """A training run with every input checked and nothing loaded yet."""

    env: str
    env_kwargs: dict[str, Any]
    """What ``envgym.make`` gets (a recipe's reward spec built)."""
    env_kwargs_json: dict[str, Any]
    """The same as plain JSON, for the eval command printed at the end."""
    model: str
    config: Any
    engine: str
    resume: Path | None
    mixture: Any = None
    """An ``EnvMixture`` when the recipe has ``envs:`` or a ``curriculum:`` (then ``env`` is its label)."""

    @property
    def trainer_env(self) -> Any:
        """What ``GRPOTrainer`` trains on: the mixture, or the env id."""
        return self.mixture if self.mixture is not None else self.env


def plan_training(*, env: str | None, model: str | None, config: str | Path | None, env_kwargs: str | None,
                  resume: Path | None, engine: str | None, overrides: dict[str, Any]) -> TrainingPlan:
    """Check every input, cheapest first, without loading a model; raises :class:`BadInput` (one line)."""
    from envgym.agents.engines.policy import ENGINES, default_engine
    from envgym.agents.preflight import check_model_name, check_report_to, find_config

    engine = engine or default_engine()
    if engine not in ENGINES:
        raise BadInput(f"--engine: unknown engine {engine!r}; choose transformers or vllm")
    path = find_config(config, "recipes") if config is not None else None
    config_env, kwargs, config_model, fields, mixture_fields = read_recipe_file(path)
    if env is None and "envs" in mixture_fields:
        if env_kwargs:
            raise BadInput(f"--env-kwargs sets one env's arguments, but {path} trains on a mixture (envs:); put "
                           "env_kwargs in its entries")
        mixture = build_mixture(None, kwargs, mixture_fields, where=str(path))
        env = mixture.label
    else:
        mixture_fields.pop("envs", None)  # --env replaces the recipe's mixture: flags win
        env = _check_env(env or config_env, kwargs, env_kwargs, path)
        mixture = None
    model = _resumed_model(resume, model) or config_model or DEFAULT_MODEL
    check_model_name(model)
    grpo_config = grpo_config_from(fields, overrides, where=str(path) if path else "flags")
    check_report_to(grpo_config.report_to, where="report_to")  # its library is installed
    built = dict(kwargs)
    if "reward" in built:
        from envgym.rewards import RewardSpec

        try:
            built["reward"] = RewardSpec.coerce(built["reward"], where=f"{path}: reward")
        except ValueError as error:
            raise BadInput(str(error)) from None
    if mixture is None and mixture_fields:  # one env with a curriculum
        mixture = build_mixture(env, built, mixture_fields, where=str(path))
    return TrainingPlan(env, built, kwargs, model, grpo_config, engine, resume, mixture)


def _check_env(env: str | None, kwargs: dict[str, Any], env_kwargs: str | None, path: Path | None) -> str:
    """The one env to train on, checked with its arguments (``--env-kwargs`` JSON merged into ``kwargs``)."""
    from envgym.agents.preflight import check_env_id, check_env_kwargs, env_kwargs_object

    if env is None:
        raise BadInput(f"{path or 'the command line'} names no env: give --env ID, or a config file with a line "
                       "`env: namespace/Name-v0` or an `envs:` mixture")
    if env_kwargs:
        kwargs.update(env_kwargs_object(env_kwargs))
    check_env_kwargs(env, kwargs, where="--env-kwargs" if env_kwargs else f"{path}: env_kwargs")
    spec = check_env_id(env)
    if spec.unsafe and not kwargs.get("allow_unsafe"):  # a policy trained on a known exploit learns the exploit
        raise BadInput(f"{env} is registered unsafe ({spec.unsafe_reason or 'see docs/audit.md'}); train on it only "
                       "on purpose: --env-kwargs '{\"allow_unsafe\": true}'")
    return env


def _resumed_model(resume: Path | None, model: str | None) -> str | None:
    """The model to load: ``model``, or with ``--resume`` (and no other model) the checkpoint's own."""
    if resume is None:
        return model
    if not (resume / "trainer_state.pt").exists():
        raise BadInput(f"--resume: {resume} is not a training checkpoint (no trainer_state.pt); give a folder "
                       "like OUT/checkpoints/step-N")
    from envgym.agents.engines.models import resume_model

    if model is None or Path(model).resolve() == resume.resolve():  # the adapter comes back with the state
        return resume_model(resume)
    return model


def build_mixture(env: str | None, env_kwargs: dict[str, Any], mixture_fields: dict[str, Any], where: str) -> Any:
    """The ``EnvMixture`` of a recipe's ``envs:`` list (``env`` None), or of one ``env`` with a top-level
    ``curriculum:``; every entry checked, nothing loaded."""
    from envgym.agents.training.mixture import EnvMixture, read_member, read_mixture

    if env is None:
        if mixture_fields.get("curriculum") is not None:
            raise BadInput(f"{where}: with envs:, give each entry its own curriculum: (a top-level one is for one env:)")
        if env_kwargs:
            raise BadInput(f"{where}: with envs:, put env_kwargs and reward inside each entry, not at the top level")
        return read_mixture(mixture_fields["envs"], where)
    return EnvMixture([read_member({"env": env, "env_kwargs": env_kwargs}, where, mixture_fields.get("curriculum"))])


def run_training(plan: TrainingPlan, *, out: Path, device: str | None, save_rollouts: int = 0) -> Any:
    """Load the model, train, checkpoint; prints progress and, at the end, how to evaluate the result."""
    from rich.console import Console

    from envgym.agents.evaluation.evaluate import tokenizer_name
    from envgym.agents.training.trainer import GRPOTrainer

    console = Console()
    console.print(f"rollout engine: {plan.engine}")
    loaded, tokenizer = load_model(plan.model)
    policy = None
    if plan.engine == "vllm":
        try:
            from envgym.agents.engines.vllm_policy import VLLMPolicy

            policy = VLLMPolicy(plan.model)
        except ImportError as error:  # its message names the extra to install, envgym[vllm]
            raise BadInput(str(error)) from None
    trainer = GRPOTrainer(loaded, tokenizer, plan.trainer_env, plan.config, out_dir=out, device=device,
                          env_kwargs=plan.env_kwargs if plan.mixture is None else None, policy=policy)
    if plan.resume is not None:
        trainer.load_checkpoint(plan.resume)
    with StepProgress(console, "GRPO", plan.config.max_steps, trainer.step) as progress:
        show = training_callback(progress, console)

        def on_step(metrics: dict[str, Any]) -> None:
            show(metrics)
            if save_rollouts:
                write_rollouts(out / ROLLOUTS_FILE, trainer.last_rollouts, metrics["step"], save_rollouts,
                               tokenizer_name(tokenizer, plan.model))

        trainer.train(on_step=on_step)
    console.print(f"wrote {out / 'metrics.jsonl'}, {out / 'checkpoints'} and {out / 'reward_curve.png'}", soft_wrap=True)
    if plan.mixture is not None:
        from envgym.agents.training.mixture import summary_lines

        for line in summary_lines(plan.mixture, trainer.history):
            console.print(line, soft_wrap=True, markup=False, highlight=False)
    checkpoint = out / "checkpoints" / f"step-{trainer.step}"
    env_ids = ",".join(dict.fromkeys(m.env for m in plan.mixture.members)) if plan.mixture is not None else plan.env
    console.print(f"evaluate it: {eval_command(checkpoint, env_ids, plan.env_kwargs_json)}", soft_wrap=True,
                  markup=False, highlight=False)
    return trainer


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


def load_model(name: str, dtype: Any = None) -> tuple[Any, Any]:
    """Load a model to train (float32 unless told otherwise: GGUF weights are de-quantized, a LoRA checkpoint is
    merged into its base) and its tokenizer."""
    from envgym.agents.engines.models import load_causal_lm, load_tokenizer

    return load_causal_lm(name, dtype=dtype), load_tokenizer(name)


def read_recipe(path: str | Path | None, overrides: dict[str, Any]) -> tuple[str | None, dict[str, Any], str | None, Any]:
    """``(env, env_kwargs, model, GRPOConfig)`` from a YAML/JSON training config (a path or an installed
    recipe's name; None: defaults only); ``overrides`` that are not None replace the file's GRPOConfig fields.
    A ``reward:`` section (see ``docs/rewards.md``) is validated here, before any rollout, and travels in
    ``env_kwargs["reward"]``."""
    from envgym.agents.preflight import find_config

    path = find_config(path, "recipes") if path is not None else None
    env, env_kwargs, model, fields, mixture_fields = read_recipe_file(path)
    if "reward" in env_kwargs:
        from envgym.rewards import RewardSpec

        env_kwargs["reward"] = RewardSpec.from_dict(env_kwargs["reward"], where="reward")
    if mixture_fields:  # GRPOTrainer takes the mixture where it takes an env id
        env = build_mixture(env, env_kwargs, mixture_fields, where=str(path))
    return env, env_kwargs, model, grpo_config_from(fields, overrides, where=str(path) if path else "flags")


def read_recipe_file(path: Path | None) -> tuple[str | None, dict[str, Any], str | None, dict[str, Any], dict[str, Any]]:
    """``(env, env_kwargs, model, GRPOConfig fields, mixture fields)`` as written in a recipe (light: nothing is
    built). A ``reward:`` section goes into ``env_kwargs["reward"]`` as written; ``envs:`` and ``curriculum:``
    into the mixture fields."""
    from envgym.agents.preflight import read_mapping

    fields = read_mapping(path) if path is not None else {}
    mixture_fields = {key: fields.pop(key) for key in ("envs", "curriculum") if key in fields}
    if "envs" in mixture_fields and "env" in fields:
        raise BadInput(f"{path}: give env: (one env) or envs: (a mixture), not both")
    env, model = fields.pop("env", None), fields.pop("model", None)
    for key, value in (("env", env), ("model", model)):
        if value is not None and not isinstance(value, str):
            raise BadInput(f"{path}: {key} must be a string, got {value!r}")
    env_kwargs = fields.pop("env_kwargs", None) or {}
    if not isinstance(env_kwargs, dict):
        raise BadInput(f"{path}: env_kwargs must be a mapping of env arguments, got {env_kwargs!r}")
    env_kwargs = dict(env_kwargs)
    if "reward" in fields:
        env_kwargs["reward"] = fields.pop("reward")
    return env, env_kwargs, model, fields, mixture_fields


def grpo_config_from(fields: dict[str, Any], overrides: dict[str, Any], where: str) -> Any:
    """A ``GRPOConfig`` from a recipe's fields (types checked against its annotations) and the flags that
    override them; a bad value raises :class:`BadInput` naming the file and the field."""
    from envgym.agents.preflight import check_config_fields
    from envgym.agents.training.grpo import GRPOConfig

    fields = check_config_fields(fields, GRPOConfig, where)
    fields.update({key: value for key, value in overrides.items() if value is not None})
    try:
        return GRPOConfig.from_dict(fields)
    except (TypeError, ValueError) as error:
        raise BadInput(f"{where}: {error}") from None
