"""Data-parallel GRPO (issue 33.1): two gloo ranks under torchrun give one process's update on the same batch, and
a resumed two-rank run continues as the uninterrupted one; a two-rank checkpoint resumes in one process."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
import torch  # noqa: E402

TESTS = Path(__file__).resolve().parents[2]
WORKER = TESTS / "helpers" / "data_parallel_worker.py"


def torchrun(*args: str) -> None:
    """The worker on 2 CPU ranks (gloo), one thread each."""
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(WORKER)]
    done = subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def worker():
    sys.path.insert(0, str(TESTS / "helpers"))
    import data_parallel_worker

    yield data_parallel_worker
    sys.path.remove(str(TESTS / "helpers"))


def test_two_ranks_take_one_processs_update_on_the_same_batch(worker, tmp_path):
    groups = worker.trainer()._collect_groups(0)[0]
    rewards = [[t.total_reward for t in group] for group in groups]
    assert len(groups) == 4 and any(len(set(r)) > 1 for r in rewards), rewards  # a gradient to compare
    alone = worker.trainer()
    one = alone._update(groups)
    (tmp_path / "groups.pkl").write_bytes(pickle.dumps(groups))
    torchrun("update", str(tmp_path / "groups.pkl"), str(tmp_path))
    two = torch.load(tmp_path / "result.pt", weights_only=False)
    assert two["world"] == 2
    grads = worker.gradients(alone)
    assert grads.keys() == two["grads"].keys() and max(float(g.abs().max()) for g in grads.values()) > 1e-6
    # The gradient the ranks sum is one process's (the optimizer then takes the same step from it). Weights after
    # Adam's first step are not compared: it divides by |g|, so gradients near 0 that agree to 1e-9 can step apart.
    for name, grad in grads.items():
        torch.testing.assert_close(two["grads"][name], grad, rtol=1e-4, atol=1e-7, msg=name)
    for key in ["loss", "grad_norm", "policy_tokens", "total_tokens", "kl", "ratio_mean", "rollout_logprob_gap"]:
        assert two["metrics"][key] == pytest.approx(one[key], rel=1e-5, abs=1e-7), key


def test_a_resumed_two_rank_run_continues_as_the_uninterrupted_one_and_resumes_in_one_process(worker, tmp_path):
    torchrun("resume", str(tmp_path))
    result = torch.load(tmp_path / "result.pt", weights_only=False)
    straight, resumed = result["straight"], result["resumed"]
    assert straight["step"] == resumed["step"] == 2
    for key in straight:
        if not key.startswith("time_"):
            assert resumed[key] == straight[key], key
    for name, p in result["straight_params"].items():
        assert torch.equal(result["resumed_params"][name], p), name
    # A different world size: the two-rank checkpoint in one process.
    alone = worker.trainer()
    alone.load_checkpoint(tmp_path / "run" / "checkpoints" / "step-1")
    alone.train(1)
    assert alone.step == 2 and alone.ranks.world_size == 1
    # Only rank 0 wrote the interrupted run's metrics: one line for its one step, not one per rank.
    assert len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) == 1


def test_envgym_train_under_torchrun_trains_on_two_ranks_and_rank_0_writes(tmp_path):
    """docs/scaling.md's command, on CPU: ``torchrun --nproc-per-node 2 -m envgym train``."""
    from helpers.tiny_models import tiny_model_path

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "-m", "envgym"]
    args = ["train", "--model", tiny_model_path(), "--env", "math/Arithmetic-v0", "--steps", "2"]
    args += ["--out", str(tmp_path / "run")]
    done = subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("GRPO 2/2") == 1  # rank 0 prints, the other rank is quiet
    assert len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) == 2
    assert (tmp_path / "run" / "checkpoints" / "step-2" / "trainer_state.pt").exists()
