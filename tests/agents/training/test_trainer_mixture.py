"""GRPOTrainer on a mixture of envs and with a curriculum, end to end on a tiny model built in code."""

import json
import re

import pytest

pytest.importorskip("torch")

from helpers.tiny_models import tiny_model_path  # noqa: E402

from envgym.agents.training.config import GRPOConfig  # noqa: E402
from envgym.agents.training.curriculum import LevelCurriculum  # noqa: E402
from envgym.agents.training.mixture import EnvMixture, MixtureMember  # noqa: E402
from envgym.agents.training.trainer import GRPOTrainer  # noqa: E402
from envgym.core import Env, Task, action_text  # noqa: E402
from envgym.tasks.sources import ListTaskSource  # noqa: E402


class SayDigit(Env):
    """One turn: "Say the digit d."; reward 1 when the first digit of the reply is d."""

    def __init__(self):
        self.tasks = ListTaskSource(
            [
                Task(id=f"digit-{d}", messages=[{"role": "user", "content": f"Say the digit {d}."}], answer=str(d))
                for d in range(10)
            ]
        )

    def _reset(self, task, options):
        self.answer = task.answer
        return task.prompt(), {}

    def _step(self, action):
        correct = float(re.findall(r"\d", action_text(action))[:1] == [self.answer])
        return [], correct, True, False, {"reward_components": {"correct": correct}, "correct": bool(correct)}


class SayLetter(Env):
    """One turn: "Say a letter."; reward 1 when the reply holds a letter."""

    def __init__(self):
        self.tasks = ListTaskSource(
            [Task(id=f"letter-{i}", messages=[{"role": "user", "content": "Say a letter."}]) for i in range(3)]
        )

    def _reset(self, task, options):
        return task.prompt(), {}

    def _step(self, action):
        reward = float(bool(re.search(r"[a-zA-Z]", action_text(action))))
        return [], reward, True, False, {"reward_components": {"letter": reward}}


SKILL = {"level": 0}
"""The toy model's skill for ScriptedLevels: the test raises it, as training would."""


class ScriptedLevels(Env):
    """An env with difficulty levels whose pass rate is scripted: an episode passes when its difficulty is at most
    the toy skill, whatever the reply."""

    def __init__(self, difficulty=1):
        self.difficulty = difficulty
        self.tasks = ListTaskSource([Task(id=f"level-{difficulty}", messages=[{"role": "user", "content": "Go."}])])

    def _reset(self, task, options):
        return task.prompt(), {}

    def _step(self, action):
        reward = float(self.difficulty <= SKILL["level"])
        return [], reward, True, False, {"reward_components": {"correct": reward}}


def tiny():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_model_path()
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def two_envs():
    return EnvMixture([MixtureMember(SayDigit, weight=3), MixtureMember(SayLetter, weight=1)])


CONFIG = dict(num_generations=2, num_tasks_per_step=4, max_completion_length=2, learning_rate=1e-3, max_steps=2, seed=5)


def test_two_steps_on_a_mixture_log_metrics_per_env(tmp_path):
    model, tokenizer = tiny()
    GRPOTrainer(model, tokenizer, two_envs(), GRPOConfig(**CONFIG), device="cpu", out_dir=tmp_path).train()
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in lines] == [1, 2]
    for line in lines:
        drawn = sum(line.get(f"env/{name}/groups_drawn", 0) for name in ("SayDigit", "SayLetter"))
        assert drawn == 4  # every group of the step came from one of the two envs
    digit = [m for m in lines if "env/SayDigit/reward_mean" in m]
    letter = [m for m in lines if "env/SayLetter/reward_mean" in m]
    assert digit and letter
    assert "env/SayDigit/reward/correct" in digit[0] and "env/SayLetter/reward/letter" in letter[0]
    assert (tmp_path / "reward_curve.png").stat().st_size > 0


def test_episodes_carry_their_envs_name_and_play_that_env():
    model, tokenizer = tiny()
    trainer = GRPOTrainer(model, tokenizer, two_envs(), GRPOConfig(**CONFIG), device="cpu")
    trainer.train_step()
    for group in trainer.last_rollouts:
        episode = group[0].episode
        assert episode.task_id.startswith({"SayDigit": "digit-", "SayLetter": "letter-"}[episode.env_id])


def drawn_sources(trainer):
    return [(g[0].episode.env_id, g[0].episode.task_id) for g in trainer.last_rollouts]


def test_resume_draws_the_same_envs_and_tasks_as_the_uninterrupted_run(tmp_path):
    config = GRPOConfig(**{**CONFIG, "max_steps": 3})
    model, tokenizer = tiny()
    first = GRPOTrainer(model, tokenizer, two_envs(), config, device="cpu", out_dir=tmp_path / "a")
    first.train(steps=1)
    checkpoint = first.save_checkpoint()
    uninterrupted = [(first.train_step(), drawn_sources(first)) for _ in range(2)]

    model, tokenizer = tiny()
    resumed = GRPOTrainer(model, tokenizer, two_envs(), config, device="cpu", out_dir=tmp_path / "b")
    resumed.load_checkpoint(checkpoint)
    for metrics, sources in uninterrupted:
        again = resumed.train_step()
        assert drawn_sources(resumed) == sources
        assert again["loss"] == metrics["loss"]


def test_a_task_sampler_is_refused_with_a_mixture():
    model, tokenizer = tiny()
    with pytest.raises(ValueError, match="task_sampler"):
        GRPOTrainer(model, tokenizer, two_envs(), GRPOConfig(**CONFIG), device="cpu", task_sampler=lambda step, rng: 0)


def curriculum_run(tmp_path, raise_skill):
    """Twelve steps on ScriptedLevels with a curriculum over difficulty 1..3; the toy skill starts at 1 and, with
    ``raise_skill``, reaches 3 after step 4. Returns each step's curriculum level."""
    SKILL["level"] = 1
    mixture = EnvMixture(
        [MixtureMember(ScriptedLevels, name="levels", curriculum=LevelCurriculum({"difficulty": [1, 2, 3]}, window=8))]
    )
    model, tokenizer = tiny()
    config = GRPOConfig(num_generations=2, num_tasks_per_step=4, max_completion_length=1, max_steps=12, seed=0)
    trainer = GRPOTrainer(model, tokenizer, mixture, config, device="cpu", out_dir=tmp_path)
    levels = []
    for step in range(12):
        if raise_skill and step == 4:
            SKILL["level"] = 3
        levels.append(trainer.train_step()["curriculum/levels/level"])
    return levels, trainer


def test_the_curriculum_moves_up_as_the_pass_rate_rises(tmp_path):
    levels, trainer = curriculum_run(tmp_path, raise_skill=True)
    assert levels[0] == 1  # difficulty 1 passes from the start: the first window unlocks level 2
    assert levels[3] == 1  # difficulty 2 fails at skill 1
    assert levels[-1] == 2
    resumed_model, tokenizer = tiny()
    mixture = EnvMixture(
        [MixtureMember(ScriptedLevels, name="levels", curriculum=LevelCurriculum({"difficulty": [1, 2, 3]}, window=8))]
    )
    resumed = GRPOTrainer(resumed_model, tokenizer, mixture, trainer.config, device="cpu")
    resumed.load_checkpoint(trainer.save_checkpoint())
    assert mixture.members[0].curriculum.state_dict() == trainer.mixture.members[0].curriculum.state_dict()


def test_the_curriculum_stays_when_the_pass_rate_does_not_rise(tmp_path):
    levels, _ = curriculum_run(tmp_path, raise_skill=False)
    assert levels == [1] * 12


def test_asynchronous_rollouts_report_the_curriculum_of_their_own_batch(tmp_path):
    SKILL["level"] = 3
    mixture = EnvMixture(
        [MixtureMember(ScriptedLevels, name="levels", curriculum=LevelCurriculum({"difficulty": [1, 2, 3]}, window=8))]
    )
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=2, num_tasks_per_step=4, max_completion_length=1, max_steps=3, seed=0, async_rollouts=True
    )
    history = GRPOTrainer(model, tokenizer, mixture, config, device="cpu").train()
    # Every batch passes and unlocks the next level; the next batch is already sampled when a step is logged,
    # but each step reports the state its own rollouts left.
    assert [m["curriculum/levels/level"] for m in history] == [1, 2, 2]


def test_env_kwargs_beside_a_mixture_are_refused():
    model, tokenizer = tiny()
    with pytest.raises(ValueError, match="members carry their own"):
        GRPOTrainer(model, tokenizer, two_envs(), GRPOConfig(**CONFIG), device="cpu", env_kwargs={"difficulty": 2})
