"""Per-env step timeouts in every backend: a hung env (not a raising one) is reported as that env's
``info["error"]``, replaced by a fresh env from its factory, and the rest of the batch goes on."""

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from gymnasium.utils import seeding

from envgym import Env
from envgym.vector import VectorEnv

MODES = ["sync", "thread", "process"]
HANG = "hang"
TIMEOUT = 0.5
pytestmark = pytest.mark.timeout(60)  # a timeout that does not fire would otherwise sleep for an hour


class Sleepy(Env):
    """Answers at once, except the action "hang" (or reset option "hang"), which sleeps for an hour."""

    def _reset(self, task, options):
        if options.get("hang"):
            time.sleep(3600)
        self.turns = 0
        return [{"role": "user", "content": "go"}], {"draw": int(self.np_random.integers(10**9))}

    def _step(self, action):
        if action == HANG:
            time.sleep(3600)
        self.turns += 1
        return (
            [{"role": "user", "content": f"turn {self.turns}"}],
            0.5,
            False,
            False,
            {"turn": self.turns, "thread": threading.get_ident()},
        )


@pytest.mark.parametrize("mode", MODES)
def test_a_hung_step_is_a_timeout_error_and_the_others_answer(mode):
    with VectorEnv([Sleepy] * 3, mode=mode, step_timeout=TIMEOUT, max_workers=2) as vector:  # env 1 alone in a worker
        vector.reset(seed=0)
        _, rewards, terminated, truncated, infos = vector.step(["a", HANG, "a"])
    assert infos[1]["error"] == "step timeout after 0.5s"
    assert (rewards[1], terminated[1], truncated[1]) == (0.0, False, True)
    assert [infos[0]["turn"], infos[2]["turn"]] == [1, 1]


@pytest.mark.parametrize("mode", MODES)
def test_after_a_timeout_the_others_go_on_and_the_hung_env_starts_fresh(mode):
    with VectorEnv([Sleepy] * 3, mode=mode, step_timeout=TIMEOUT, max_workers=2) as vector:  # env 1 alone in a worker
        vector.reset(seed=0)
        vector.step(["a", HANG, "a"])
        _, _, _, _, infos = vector.step(["a", "a", "a"])  # next_step autoreset: env 1 is reset
        assert [infos[0]["turn"], infos[2]["turn"]] == [2, 2] and "draw" in infos[1]
        _, _, _, _, infos = vector.step(["a", "a", "a"])
        assert [info["turn"] for info in infos] == [3, 1, 3]


@pytest.mark.parametrize("mode", MODES)
def test_a_hung_reset_is_a_timeout_error(mode):
    with VectorEnv([Sleepy] * 2, mode=mode, step_timeout=TIMEOUT, max_workers=2) as vector:
        _, infos = vector.reset(seed=0, options=[None, {"hang": True}])
        assert infos[1]["error"] == "reset timeout after 0.5s" and "draw" in infos[0]
        assert vector.active == [True, False]
        _, infos = vector.reset(seed=0, indices=[1])
        assert "draw" in infos[0] and vector.active == [True, True]


@pytest.mark.parametrize("mode", ["sync", "thread"])
def test_the_hung_env_object_is_replaced_by_a_new_one_from_its_factory(mode):
    with VectorEnv([Sleepy] * 2, mode=mode, step_timeout=TIMEOUT) as vector:
        vector.reset(seed=0)
        hung = vector.envs[1]
        vector.step(["a", HANG])
        assert isinstance(vector.envs[1], Sleepy) and vector.envs[1] is not hung


def test_process_worker_mates_of_a_hung_env_each_report_their_lost_episode():
    with VectorEnv([Sleepy] * 3, mode="process", step_timeout=TIMEOUT, max_workers=1) as vector:
        vector.reset(seed=0)
        _, _, _, truncated, infos = vector.step([HANG, "a", None])
        assert infos[0]["error"] == "step timeout after 0.5s"
        assert (
            infos[1]["error"]
            == ("env lost: its worker process was restarted because env 0 hung (step timeout after 0.5s)")
            and truncated[1]
        )
        assert infos[2] == {"skipped": True} and vector.active == [False, False, False]
        _, _, _, truncated, infos = vector.step([None, None, "a"])  # env 2 lost its episode while idle
        assert infos[2]["error"].startswith("env lost: its worker process was restarted") and truncated[2]


def test_process_worker_mates_start_fresh_after_a_restart():
    with VectorEnv([Sleepy] * 3, mode="process", step_timeout=TIMEOUT, max_workers=1) as vector:
        vector.reset(seed=0)
        vector.step([HANG, "a", None])
        vector.reset(seed=1)
        _, _, _, _, infos = vector.step(["a"] * 3)
        assert [info["turn"] for info in infos] == [1, 1, 1]


def _draw_after_a_hang(seed):
    with VectorEnv([Sleepy] * 2, step_timeout=TIMEOUT) as vector:
        first = vector.reset(seed=seed)[1][0]["draw"]
        vector.step([HANG, None])
        return first, vector.step(["a", None])[4][0]["draw"]


def test_a_replaced_env_autoresets_with_a_seed_derived_from_the_callers():
    first, after = _draw_after_a_hang(seed=5)
    derived = int(np.random.SeedSequence([5, 1]).generate_state(1)[0])
    assert after == int(seeding.np_random(derived)[0].integers(10**9)) and after != first


def test_sync_mode_without_a_timeout_runs_in_the_calling_thread():
    with VectorEnv([Sleepy]) as vector:
        vector.reset(seed=0)
        assert vector.step(["a"])[4][0]["thread"] == threading.get_ident()


def test_a_hung_thread_does_not_keep_the_interpreter_from_exiting():
    script = textwrap.dedent("""
        import time
        from envgym import Env
        from envgym.vector import VectorEnv

        class Hangs(Env):
            def _reset(self, task, options):
                return [], {}

            def _step(self, action):
                time.sleep(3600)

        vector = VectorEnv([Hangs], mode="thread", step_timeout=0.2)
        vector.reset()
        print(vector.step(["a"])[4][0]["error"])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50)
    assert done.returncode == 0 and done.stdout.strip() == "step timeout after 0.2s", done.stderr


@pytest.mark.parametrize("bad", [0, -1.0, "2", True])
def test_step_timeout_must_be_positive_seconds(bad):
    with pytest.raises(ValueError, match="step_timeout must be a number of seconds > 0 or None"):
        VectorEnv([Sleepy], step_timeout=bad)
