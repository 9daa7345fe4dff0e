"""Asynchronous rollouts (GRPOConfig.async_rollouts): step n+1's rollouts overlap step n's update, batch t is
sampled by the weights of update t - k (``max_staleness``), the importance weights correct for it, runs resume
exactly, and training still learns."""

import threading

import pytest

pytest.importorskip("torch")

import torch  # noqa: E402
from test_trainer import SayDigit, tiny

from envgym.agents.engines.transformers_policy import TransformersPolicy
from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.trainer import GRPOTrainer


def async_trainer(**overrides):
    model, tokenizer = tiny()
    settings = dict(
        num_generations=8,
        num_tasks_per_step=2,
        max_completion_length=4,
        learning_rate=3e-3,
        max_steps=4,
        seed=0,
        async_rollouts=True,
    )
    config = GRPOConfig(**{**settings, **overrides})
    return GRPOTrainer(model, tokenizer, SayDigit, config, device="cpu")


def test_the_next_steps_rollouts_run_while_this_step_updates(monkeypatch):
    trainer = async_trainer(max_steps=3)
    rollout_started = [threading.Event() for _ in range(4)]
    produce, update = trainer._produce, trainer._update

    def recording_produce(step, version):
        rollout_started[step].set()
        return produce(step, version)

    def waiting_update(groups):
        # The update of step n does not finish before the rollouts of step n+1 have begun: without overlap
        # this would wait out the timeout and fail.
        nxt = trainer.step + 1
        if nxt < 3:
            assert rollout_started[nxt].wait(timeout=60), (
                f"step {nxt + 1}'s rollouts did not start during step {nxt}'s update"
            )
        return update(groups)

    monkeypatch.setattr(trainer, "_produce", recording_produce)
    monkeypatch.setattr(trainer, "_update", waiting_update)
    run = trainer.train()
    assert [m["staleness"] for m in run] == [0, 1, 1]
    assert all("time_wait_s" in m and "time_sync_s" in m for m in run)


def test_one_update_old_batches_show_a_rollout_gap_that_the_importance_weights_see():
    trainer = async_trainer(seed=3)  # a seed whose first step has reward contrast (the untrained model rarely says 7)
    assert trainer.config.importance_sampling_correction  # turned on by async_rollouts
    assert trainer.policy.model is not trainer.model  # the rollouts' own copy
    run = trainer.train()
    assert [m["staleness"] for m in run] == [0, 1, 1, 1]
    assert run[0]["rollout_logprob_gap_max"] < 1e-3  # the first batch is on-policy
    moved = [m for m in run[1:] if m["policy_tokens"] and run[m["step"] - 2]["grad_norm"] > 0]
    assert moved and all(m["rollout_logprob_gap"] > 1e-4 for m in moved)
    # the engine got the weights of the last update but one: sync it now and it equals the model
    trainer._sync_weights()
    for name, tensor in trainer.policy.model.state_dict().items():
        torch.testing.assert_close(tensor, trainer.model.state_dict()[name])


def test_async_training_learns_say_the_digit():
    """test_trainer.py's learning proof, one update off-policy."""
    trainer = async_trainer(
        num_tasks_per_step=8, max_completion_length=1, learning_rate=2e-3, dynamic_sampling=True, max_steps=25
    )
    rewards = [m["reward_mean"] for m in trainer.train()]
    assert rewards[0] < 0.2 and max(rewards[-5:]) >= 0.9, rewards


def test_async_rollouts_refuse_an_engine_that_shares_the_trained_models_weights():
    model, tokenizer = tiny()
    config = GRPOConfig(async_rollouts=True)
    with pytest.raises(ValueError, match="engine with weights of its own"):
        GRPOTrainer(model, tokenizer, SayDigit, config, device="cpu", policy=TransformersPolicy(model, tokenizer))


def test_a_synchronous_trainer_is_always_on_policy():
    model, tokenizer = tiny()
    config = GRPOConfig(num_generations=4, num_tasks_per_step=1, max_completion_length=4, max_steps=2)
    run = GRPOTrainer(model, tokenizer, SayDigit, config, device="cpu").train()
    assert [m["staleness"] for m in run] == [0, 0] and "time_wait_s" not in run[0]


def checksum(model):
    return sum(float(t.double().sum()) for t in model.state_dict().values())


@pytest.mark.parametrize("k", [2, 3])
def test_batch_t_is_sampled_by_the_weights_of_update_t_minus_k(k, monkeypatch):
    trainer = async_trainer(max_steps=6, max_staleness=k, seed=3)
    sampled, produce = {}, trainer._produce

    def recording_produce(step, version):
        sampled[step] = (version, checksum(trainer.policy.model))
        return produce(step, version)

    monkeypatch.setattr(trainer, "_produce", recording_produce)
    weights = [checksum(trainer.model)]  # weights[v]: the model after v updates
    run = trainer.train(on_step=lambda metrics: weights.append(checksum(trainer.model)))
    assert [m["staleness"] for m in run] == [min(t, k) for t in range(6)]
    assert len(set(weights)) == len(weights)  # every update moved the weights, so the sums tell versions apart
    for step, (version, engine) in sampled.items():
        assert version == max(step - k, 0)
        assert engine == pytest.approx(weights[version], rel=1e-9, abs=1e-9), step


def test_max_staleness_below_one_is_refused():
    with pytest.raises(ValueError, match="max_staleness must be >= 1"):
        GRPOConfig(async_rollouts=True, max_staleness=0)


@pytest.mark.parametrize("k", [1, 2])
def test_a_resumed_run_trains_on_the_tasks_and_staleness_of_the_uninterrupted_run(k, tmp_path):
    """Stopped after step 3 (its last checkpoint: step 2) and resumed: steps 3 and 4 play the tasks the
    uninterrupted run played, k updates old, although their batches were sampled before the checkpoint."""

    def trainer(**overrides):
        model, tokenizer = tiny()
        config = GRPOConfig(
            num_generations=4,
            num_tasks_per_step=2,
            max_completion_length=2,
            learning_rate=3e-3,
            max_steps=4,
            seed=0,
            async_rollouts=True,
            max_staleness=k,
            save_steps=2,
        )
        return GRPOTrainer(
            model, tokenizer, lambda: SayDigit(digits=tuple(range(10))), config, device="cpu", **overrides
        )

    def play(run, stop_after=None):
        played = []

        def record(metrics):
            tasks = [group[0].episode.metadata["task_index"] for group in run.last_rollouts]
            played.append((metrics["step"], tasks, metrics["staleness"]))
            if metrics["step"] == stop_after:
                raise KeyboardInterrupt

        try:
            run.train(on_step=record)
        except KeyboardInterrupt:
            pass
        return played

    uninterrupted = play(trainer())
    play(trainer(out_dir=tmp_path), stop_after=3)
    resumed = trainer()
    resumed.load_checkpoint(tmp_path / "checkpoints" / "step-2")
    assert play(resumed) == uninterrupted[2:]
    assert [staleness for _, _, staleness in uninterrupted] == [min(t, k) for t in range(4)]
