"""The seed recipes (issue 20 item 7, docs/seed-recipes.md) say what their settings claim, through the path
`envgym train --config` takes (``read_recipe``, then the trainer). That every recipe loads and validates is
tests/test_recipes.py::test_every_recipe_is_a_valid_training_config_that_names_env_and_model."""

import dataclasses
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from envgym.agents.engines.policy import Generation, SamplingParams, encode  # noqa: E402
from envgym.agents.training.recipe import Recipe, read_recipe  # noqa: E402

RECIPES = Path(__file__).parents[2] / "envgym" / "recipes"
SEEDS = ["ttrl", "noisy-reward", "clean-reward", "rpr", "judge", "process"]


def _recipe(name: str) -> Recipe:
    return read_recipe(RECIPES / f"{name}-arithmetic-cpu.yaml")


@pytest.mark.parametrize("name", SEEDS)
def test_each_seed_recipe_fits_the_cpu_budget(name):
    """<= 15 min on 2 cores: at most 30 steps and 960 episodes of at most 40 new tokens (the noisy pair's 30 steps
    of 32 episodes are the largest; docs/seed-recipes.md has each recipe's measured wall)."""
    recipe = _recipe(name)
    model, config = recipe.model, recipe.config
    episodes = config.max_steps * config.num_generations * config.num_tasks_per_step
    assert model == "smollm2" and config.max_steps <= 30 and episodes <= 960 and config.max_completion_length <= 40


def test_the_ttrl_recipe_holds_its_labels_back_and_rewards_only_the_vote():
    spec = _recipe("ttrl").reward
    assert spec.hold_out_labels and [c.source for c in spec.components] == ["majority_vote"]


def test_the_noisy_recipe_is_its_clean_twin_plus_the_flips_and_nothing_else():
    noisy, clean = _recipe("noisy-reward"), _recipe("clean-reward")
    same = (noisy.env, noisy.env_kwargs, noisy.model, noisy.config)
    assert same == (clean.env, clean.env_kwargs, clean.model, clean.config)  # env, prompt, model, settings, seed
    noisy_reward = noisy.reward.to_dict()["components"]
    clean_reward = clean.reward.to_dict()["components"]
    flips = [c for c in noisy_reward if c not in clean_reward]
    assert flips == [{"name": "noise", "source": "flip", "rate": 0.4, "applies_to": "correct", "seed": 0}]
    assert len(noisy_reward) == len(clean_reward) + 1


def test_the_rpr_recipe_rewards_phrases_and_not_the_answer():
    spec = _recipe("rpr").reward
    assert [c.source for c in spec.components] == ["pattern"] and not spec.needs_labels


def test_the_process_recipe_scores_every_computation_line_of_the_example_as_a_good_step():
    recipe = _recipe("process")
    steps = next(c for c in recipe.reward.components if c.source == "process")
    example = recipe.env_kwargs["few_shot"][-1]["content"]
    lines = [line for line in example.splitlines() if line.strip()]
    assert len(lines) >= 2 and all(re.search(steps.options["rule"], line) for line in lines)


class HalfRightPolicy:
    """Answers each task's expression: the first 5 samples of a prompt correctly, the other 3 with distinct wrong
    values, so a group's vote has a majority that the labels can agree with or not."""

    def __init__(self, tokenizer):
        self.tokenizer, self.eos_ids, self.seen = tokenizer, [tokenizer.eos_token_id], Counter()

    def generate(self, prompts: list[list[int]], params: SamplingParams) -> list[Generation]:
        out = []
        for ids in prompts:
            text = self.tokenizer.decode(ids)
            a, op, b = re.findall(r"Compute (\d+) ([+-]) (\d+)\.", text)[-1]  # the last: the task, not an example
            value = int(a) + int(b) if op == "+" else int(a) - int(b)
            sample = self.seen[text]
            self.seen[text] += 1
            answer = value if sample % 8 < 5 else value + sample % 8
            tokens = encode(self.tokenizer, f"\\boxed{{{answer}}}") + self.eos_ids
            out.append(Generation(self.tokenizer.decode(tokens), tokens, [-0.5] * len(tokens), "stop"))
        return out

    def turn_text(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode(token_ids[:-1] if token_ids[-1:] == self.eos_ids else token_ids)


def _ttrl_step() -> tuple[dict, list[list[float]], list[str]]:
    """One training step of the TTRL recipe as `envgym train --config` builds it, on the tiny model."""
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    recipe = _recipe("ttrl")
    env, env_kwargs, config = recipe.env, recipe.env_kwargs, recipe.config
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(tiny_model_path()),
        tokenizer,
        env,
        dataclasses.replace(config, max_steps=1),
        device="cpu",
        env_kwargs=env_kwargs,
        reward=recipe.reward,
        policy=HalfRightPolicy(tokenizer),
    )
    metrics = trainer.train_step()
    rewards = [[t.total_reward for t in group] for group in trainer.last_rollouts]
    labels = [_label(group[0]) for group in trainer.last_rollouts]
    return metrics, rewards, labels


def _label(trajectory) -> str:
    """The label of the task the trajectory played, as the env's task source gives it now."""
    from envgym.envs.math.arithmetic import Arithmetic

    return Arithmetic(difficulty=1).tasks.get(trajectory.episode.metadata["task_index"]).answer


def test_the_ttrl_recipes_training_reward_is_unchanged_when_the_labels_are_shuffled(monkeypatch):
    from envgym.envs.math.arithmetic import Arithmetic

    metrics, rewards, labels = _ttrl_step()
    make_task = Arithmetic._make_task

    def shuffled(self, rng, index):  # each task carries the next task's label
        return dataclasses.replace(
            make_task(self, rng, index), answer=make_task(self, np.random.default_rng(index + 1), index + 1).answer
        )

    monkeypatch.setattr(Arithmetic, "_make_task", shuffled)
    shuffled_metrics, shuffled_rewards, shuffled_labels = _ttrl_step()
    assert shuffled_labels != labels  # the labels did change
    assert shuffled_rewards == rewards and all(sorted(g) == [0.0] * 3 + [1.0] * 5 for g in rewards)
    assert shuffled_metrics["reward/vote"] == metrics["reward/vote"] == pytest.approx(5 / 8)
    assert metrics["label_accuracy"] == pytest.approx(5 / 8)  # the labels are measured, never rewarded
    assert shuffled_metrics["label_accuracy"] < metrics["label_accuracy"]


def test_the_judge_recipe_killed_mid_run_counts_episodes_failed_not_zeros():
    """The recipe's judge spec pointed at a local judge that grades the first task's answers, then dies on the
    first request about another task (the spec's timeouts, retries and examples as written; only the address is
    the test server's)."""
    from helpers.scripted_judge import scripted_judge, user_text
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer
    from envgym.rewards import RewardSpec

    recipe = _recipe("judge")
    env, env_kwargs, config = recipe.env, recipe.env_kwargs, recipe.config
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    first_question: list[str] = []

    def another_task(body: dict) -> bool:
        question = user_text(body).split("</question>")[0]
        first_question[:] = first_question or [question]
        return question != first_question[0]

    with scripted_judge(lambda body: '{"score": 1}', die_when=another_task) as server:
        spec = recipe.reward.to_dict()
        spec["components"][0]["base_url"] = server.base_url
        trainer = GRPOTrainer(
            AutoModelForCausalLM.from_pretrained(tiny_model_path()),
            tokenizer,
            env,
            dataclasses.replace(config, max_steps=1, max_completion_length=4),
            device="cpu",
            env_kwargs=env_kwargs,
            reward=RewardSpec.from_dict(spec),
        )
        metrics = trainer.train_step()
    assert metrics["episodes_failed"] == 8 and metrics["groups_failed"] == 1 and metrics["groups"] == 1
    assert metrics["reward_mean"] == 1.0  # only the judged group counts; the failed one is not a row of zeros
    assert "judge 'judged' failed" in metrics["failure_example"]
    assert all(len(body["messages"]) == 2 + 8 for body in server.requests)  # rubric, 4 graded examples, request
