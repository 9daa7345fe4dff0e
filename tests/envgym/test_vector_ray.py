"""Ray: make_vec(mode="ray") on actors, and rollouts fanned out over actors, on a local 2-CPU cluster."""

from __future__ import annotations

import os
import signal

import pytest

ray = pytest.importorskip("ray")

import envgym  # noqa: E402
from envgym.vector import VectorEnv  # noqa: E402
from envgym.vector_ray import play_episode, ray_rollouts  # noqa: E402

GUESS = "games/GuessNumber-v0"


@pytest.fixture(scope="module", autouse=True)
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture
def bisect():
    """A policy that searches for the number from the feedback so far. Defined inside a function, so it is
    pickled by value and the actors need not import this test module."""

    def policy(history):
        low, high, guess = 1, 100, None
        for message in history:
            text = message["content"] or ""
            if message["role"] == "assistant":
                guess = int(text.split(">")[1].split("<")[0])
            elif guess is not None and "higher" in text:
                low = guess + 1
            elif guess is not None and "lower" in text:
                high = guess - 1
        return f"<guess>{(low + high) // 2}</guess>"

    return policy


def test_make_vec_on_ray_actors_matches_the_sync_backend():
    actions = [f"<guess>{g}</guess>" for g in (50, 25, 75, 60)]
    with (
        envgym.make_vec(GUESS, 4, mode="ray", autoreset_mode="same_step") as on_ray,
        envgym.make_vec(GUESS, 4, autoreset_mode="same_step") as local,
    ):
        assert on_ray.reset(seed=3) == local.reset(seed=3)
        for action in actions * 3:
            assert on_ray.step([action, None, action, action]) == local.step([action, None, action, action])


def test_a_killed_actor_fails_only_its_envs():
    with envgym.make_vec(GUESS, 4, mode="ray", max_workers=2) as vector:
        vector.reset(seed=0)
        victim = vector._backend.actors[0]
        os.kill(ray.get(victim.pid.remote()), signal.SIGKILL)
        _, _, _, truncated, infos = vector.step(["<guess>1</guess>"] * 4)
    owners = [i % 2 for i in range(4)]  # env i lives on actor i % 2
    for owner, cut, info in zip(owners, truncated, infos):
        if owner == 0:
            assert cut and "Ray env actor died" in info["error"]
        else:
            assert not cut and info["turn"] == 1


@pytest.fixture
def sleepy():
    """An env whose action "hang" sleeps for an hour (defined here, so it is pickled to the actors by value)."""
    import time

    from envgym import Env

    class Sleepy(Env):
        def _reset(self, task, options):
            self.turns = 0
            return [{"role": "user", "content": "go"}], {}

        def _step(self, action):
            if action == "hang":
                time.sleep(3600)
            self.turns += 1
            return [{"role": "user", "content": "ok"}], 0.5, False, False, {"turn": self.turns}

    return Sleepy


@pytest.mark.timeout(120)
def test_a_hung_env_on_an_actor_times_out_and_the_others_go_on(sleepy):
    with VectorEnv([sleepy] * 3, mode="ray", step_timeout=1.0, max_workers=2) as vector:  # env 1 alone on actor 1
        vector.reset(seed=0)
        _, rewards, _, truncated, infos = vector.step(["a", "hang", "a"])
        assert infos[1]["error"] == "step timeout after 1s" and truncated[1] and rewards[1] == 0.0
        assert [infos[0]["turn"], infos[2]["turn"]] == [1, 1]
        vector.step(["a", "a", "a"])  # next_step autoreset of env 1, on the restarted actor
        _, _, _, _, infos = vector.step(["a", "a", "a"])
        assert [info["turn"] for info in infos] == [3, 1, 3]


@pytest.mark.timeout(120)
def test_the_actor_mates_of_a_hung_env_report_their_lost_episodes(sleepy):
    with VectorEnv([sleepy] * 3, mode="ray", step_timeout=1.0, max_workers=1) as vector:
        vector.reset(seed=0)
        _, _, _, truncated, infos = vector.step(["a", "hang", "a"])  # env 0 answers before env 1 hangs
        assert infos[1]["error"] == "step timeout after 1s"
        for i in (0, 2):
            assert (
                infos[i]["error"].startswith("env lost: its Ray actor was restarted because env 1 hung")
                and truncated[i]
            )


def test_rollouts_fan_out_over_actors_and_come_back_in_order(bisect):
    seeds = list(range(6))
    episodes = ray_rollouts(GUESS, bisect, seeds, options=[{"task_index": s} for s in seeds], num_actors=2)
    assert [e.task_id for e in episodes] == [f"guess-1-100-{s}" for s in seeds]
    assert all(e.terminated and e.total_reward == 1.0 for e in episodes), "bisection always finds the number in 7 turns"
    local = [play_episode(envgym.make(GUESS), bisect, env_id=GUESS, seed=s, options={"task_index": s}) for s in seeds]
    assert [e.to_dict() for e in episodes] == [e.to_dict() for e in local]


def test_a_grpo_group_plays_one_task_on_every_actor(bisect):
    group = ray_rollouts(GUESS, bisect, seeds=range(4), options={"task_index": 9})
    assert len({e.task_id for e in group}) == 1 and len({tuple(e.rewards) for e in group}) == 1


def test_rollouts_of_an_unknown_env_fail_before_any_actor_starts(bisect):
    with pytest.raises(envgym.UnknownEnv, match="Did you mean"):
        ray_rollouts("games/GuessNumbr-v0", bisect, [0])
