"""Failures are never rewards in training: an episode whose env raised or hung is dropped with its group
before advantages are computed, contributes no gradient, and is counted in ``episodes_failed``."""

import itertools
import math
import threading

import pytest

pytest.importorskip("torch")  # the [train] extra; a [dev]-only install skips this module
pytest.importorskip("transformers")

from helpers.tiny_models import tiny_model_path

from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.trainer import GRPOTrainer
from envgym.core import Env, Task, action_text
from envgym.tasks.sources import ListTaskSource

TASKS = [
    Task(id="doomed", messages=[{"role": "user", "content": "Say something."}]),
    Task(id="healthy", messages=[{"role": "user", "content": "Say something else."}]),
]


class Faults:
    """What the envs of the "doomed" task do, in reset order: the first raises at its step, the second hangs
    until ``release`` is set, the others behave. ``everywhere`` makes every step of every task raise."""

    def __init__(self, everywhere: bool = False):
        self.release, self.everywhere = threading.Event(), everywhere
        self._lock, self._resets = threading.Lock(), itertools.count()

    def next_fault(self, task_id: str) -> str | None:
        if self.everywhere:
            return "raise"
        if task_id != "doomed":
            return None
        with self._lock:
            return {0: "raise", 1: "hang"}.get(next(self._resets))


class FaultyChatter(Env):
    """One turn rewarded with the reply's length / 10 (it differs between samples, so a group has a gradient);
    some envs fail (see Faults)."""

    def __init__(self, faults: Faults):
        self.tasks, self.faults = ListTaskSource(TASKS), faults

    def _reset(self, task, options):
        self.fault = self.faults.next_fault(task.id)
        return task.prompt(), {}

    def _step(self, action):
        if self.fault == "raise":
            raise RuntimeError("the verifier crashed")
        if self.fault == "hang":
            self.faults.release.wait(60)
        return [], len(action_text(action)) / 10, True, False, {}


def tiny():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_model_path()
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def trainer_for(faults: Faults, **overrides) -> GRPOTrainer:
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=2,
        max_completion_length=4,
        learning_rate=1e-3,
        max_steps=1,
        seed=0,
        step_timeout=1.0,
        **overrides,
    )
    tasks = itertools.cycle([0, 1])  # the first group plays "doomed", the second "healthy"
    model, tokenizer = tiny()
    return GRPOTrainer(
        model,
        tokenizer,
        lambda: FaultyChatter(faults),
        config,
        device="cpu",
        task_sampler=lambda step, rng: next(tasks),
    )


@pytest.fixture()
def faults():
    faults = Faults()
    yield faults
    faults.release.set()  # let the hung env's thread finish


def test_a_raising_and_a_hanging_env_drop_their_group_and_add_no_gradient(faults):
    trainer = trainer_for(faults)
    metrics = trainer.train_step()
    doomed, healthy = trainer.last_rollouts
    errors = sorted(t.error for t in doomed if t.failed)
    assert len(errors) == 2 and errors[0] == "RuntimeError: the verifier crashed" and "timeout" in errors[1]
    assert metrics["episodes_failed"] == 2 and metrics["groups_failed"] == 1 and metrics["groups"] == 1
    assert metrics["policy_tokens"] == sum(t.num_policy_tokens for t in healthy)  # no token of the doomed group

    # The same update computed from the healthy group alone, on the same initial weights, is identical.
    alone = trainer_for(Faults())._update([healthy])
    assert metrics["loss"] == alone["loss"] and metrics["grad_norm"] == alone["grad_norm"]
    assert alone["grad_norm"] > 0


def test_without_drop_failed_groups_the_healthy_members_of_a_group_still_train(faults):
    trainer = trainer_for(faults, drop_failed_groups=False)
    metrics = trainer.train_step()
    doomed, healthy = trainer.last_rollouts
    assert metrics["episodes_failed"] == 2 and metrics["groups"] == 2
    kept = [t for t in doomed if not t.failed] + list(healthy)
    assert metrics["policy_tokens"] == sum(t.num_policy_tokens for t in kept)


def test_a_step_whose_every_episode_failed_finishes_without_an_update(tmp_path):
    trainer = trainer_for(Faults(everywhere=True))
    trainer.out_dir = tmp_path
    before = [p.detach().clone() for p in trainer.model.parameters()]
    metrics = trainer.train_step()
    assert metrics["episodes_failed"] == 8 and metrics["groups"] == 0 and metrics["update_skipped"] is True
    assert metrics["loss"] == 0.0 and "reward_mean" not in metrics  # a failure's 0 is no reward
    assert all(math.isfinite(v) for v in metrics.values() if isinstance(v, float))
    assert all(p.equal(q) for p, q in zip(before, trainer.model.parameters()))
    assert '"episodes_failed": 8' in (tmp_path / "metrics.jsonl").read_text()
