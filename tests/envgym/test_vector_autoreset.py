"""VectorEnv autoreset modes (Gymnasium 1.x): next_step (default), same_step and disabled; the finished step's
reward is never lost, and autoresets keep the caller's options and a deterministic seed."""

import pytest

import envgym
from envgym import Env
from envgym.vector import VectorEnv

START = [{"role": "user", "content": "start"}]


class Countdown(Env):
    """Terminates on its second step with reward 1. The reset info shows the RNG draw and the options used."""

    def _reset(self, task, options):
        self.turns = 0
        return [dict(m) for m in START], {"draw": int(self.np_random.integers(10**9)), "options": dict(options)}

    def _step(self, action):
        self.turns += 1
        done = self.turns == 2
        return (
            [{"role": "user", "content": f"turn {self.turns}"}],
            1.0 if done else 0.0,
            done,
            False,
            {"action": action},
        )


class SecondResetFails(Countdown):
    def _reset(self, task, options):
        self.resets = getattr(self, "resets", 0) + 1
        if self.resets == 2:
            raise RuntimeError("no task today")
        return super()._reset(task, options)


class FirstStepFails(Countdown):
    def _step(self, action):
        if not getattr(self, "failed_once", False):
            self.failed_once = True
            raise RuntimeError("flaky")
        return super()._step(action)


def _finish_episode(vector, index=0):
    actions = {index: "a"}
    vector.step(actions)
    return vector.step(actions)


def test_next_step_is_the_default_and_returns_the_final_step_itself():
    with VectorEnv([Countdown] * 2) as vector:
        assert vector.autoreset_mode == "next_step"
        vector.reset(seed=0)
        messages, rewards, terminated, truncated, infos = _finish_episode(vector)
        assert messages[0] == [{"role": "user", "content": "turn 2"}] and rewards[0] == 1.0
        assert terminated[0] and not truncated[0] and infos[0] == {"action": "a"}
        assert vector.active == [False, True]


def test_next_step_resets_on_the_following_call_and_ignores_its_action():
    with VectorEnv([Countdown] * 2) as vector:
        vector.reset(seed=0)
        _finish_episode(vector)
        messages, rewards, terminated, truncated, infos = vector.step(["ignored", None])
        assert messages[0] == START and rewards[0] == 0.0 and not terminated[0] and not truncated[0]
        assert "draw" in infos[0] and vector.active == [True, True]
        messages, *_ = vector.step(["b", None])
        assert messages[0] == [{"role": "user", "content": "turn 1"}]  # the ignored action played no turn


def test_same_step_keeps_the_finished_reward_and_final_observation_and_starts_the_next_episode():
    with VectorEnv([Countdown], autoreset_mode="same_step") as vector:
        vector.reset(seed=0)
        messages, rewards, terminated, _, infos = _finish_episode(vector)
        assert rewards == [1.0] and terminated == [True]
        assert infos[0]["final_observation"] == [{"role": "user", "content": "turn 2"}]
        assert infos[0]["final_info"] == {"action": "a"} and "draw" in infos[0]["reset_info"]
        assert messages[0] == START and vector.active == [True]


def test_disabled_leaves_an_ended_env_ended_until_reset():
    with VectorEnv([Countdown], autoreset_mode="disabled") as vector:
        vector.reset(seed=0)
        _finish_episode(vector)
        _, _, _, truncated, infos = vector.step(["a"])
        assert "ResetNeeded" in infos[0]["error"] and truncated == [True]


def test_a_failed_same_step_reset_keeps_the_finished_reward_and_the_next_step_retries():
    with VectorEnv([SecondResetFails], autoreset_mode="same_step") as vector:
        vector.reset(seed=0)
        messages, rewards, terminated, _, infos = _finish_episode(vector)
        assert rewards == [1.0] and terminated == [True] and messages == [[]]
        assert "no task today" in infos[0]["reset_info"]["error"] and "error" not in infos[0]
        assert vector.active == [False]
        messages, rewards, _, _, infos = vector.step(["a"])
        assert messages[0] == START and rewards == [0.0] and vector.active == [True]


@pytest.mark.parametrize("autoreset_mode", ["next_step", "same_step"])
def test_an_env_that_failed_is_reset_on_its_next_step(autoreset_mode):
    with VectorEnv([FirstStepFails], autoreset_mode=autoreset_mode) as vector:
        vector.reset(seed=0)
        _, rewards, _, truncated, infos = vector.step(["a"])
        assert "flaky" in infos[0]["error"] and truncated == [True] and rewards == [0.0]
        messages, rewards, _, truncated, infos = vector.step(["a"])
        assert messages[0] == START and rewards == [0.0] and truncated == [False] and "draw" in infos[0]


@pytest.mark.parametrize("autoreset_mode", ["next_step", "same_step"])
def test_autoreset_keeps_the_options_of_the_last_reset(autoreset_mode):
    with VectorEnv([Countdown] * 2, autoreset_mode=autoreset_mode) as vector:
        vector.reset(seed=0, options=[{"level": 3}, {"level": 4}])
        _, _, _, _, infos = _finish_episode(vector)
        if autoreset_mode == "next_step":
            _, _, _, _, infos = vector.step(["a", None])
            reset_info = infos[0]
        else:
            reset_info = infos[0]["reset_info"]
        assert reset_info["options"] == {"level": 3}


def test_a_grpo_group_autoresets_into_the_same_task():
    with envgym.make_vec("games/GuessNumber-v0", 2, max_turns=1) as vector:
        _, first = vector.reset(seed=[1, 2], options=[{"task_index": 9}] * 2)
        vector.step(["<guess>1</guess>"] * 2)  # max_turns=1: both truncate
        _, _, _, _, infos = vector.step(["<guess>1</guess>"] * 2)
        assert [info["task_id"] for info in infos] == [info["task_id"] for info in first]


def _draws(seed, episodes=3):
    """The RNG draw of each episode of env 0, autoreset after the first."""
    with VectorEnv([Countdown] * 2) as vector:
        draws = [vector.reset(seed=seed)[1][0]["draw"]]
        for _ in range(episodes - 1):
            _finish_episode(vector)
            draws.append(vector.step({0: "a"})[4][0]["draw"])
    return draws


def test_a_seeded_run_replays_its_autoresets_exactly_and_each_episode_differs():
    draws = _draws(seed=7)
    assert draws == _draws(seed=7)
    assert len(set(draws)) == len(draws)


@pytest.mark.parametrize("mode", ["thread", "process"])
@pytest.mark.parametrize("autoreset_mode", ["next_step", "same_step"])
def test_every_backend_autoresets_like_the_sync_one(mode, autoreset_mode):
    def play(vector):
        out = [vector.reset(seed=3)]
        for guess in (50, 25, 75, 60, 10):
            out.append(vector.step([f"<guess>{guess}</guess>", None, f"<guess>{guess}</guess>"]))
        return out

    with envgym.make_vec("games/GuessNumber-v0", 3, mode=mode, autoreset_mode=autoreset_mode, max_turns=2) as vector:
        got = play(vector)
    with envgym.make_vec("games/GuessNumber-v0", 3, autoreset_mode=autoreset_mode, max_turns=2) as reference:
        assert play(reference) == got


def test_make_vec_names_the_new_parameter_when_given_the_old_autoreset_flag():
    with pytest.raises(TypeError, match="autoreset_mode='next_step'.*'same_step'"):
        envgym.make_vec("games/GuessNumber-v0", 2, autoreset=True)


def test_unknown_autoreset_mode_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="'next_step', 'same_step', 'disabled'"):
        VectorEnv([Countdown], autoreset_mode="always")


def test_gymnasium_autoreset_mode_members_are_accepted():
    from gymnasium.vector import AutoresetMode

    with VectorEnv([Countdown], autoreset_mode=AutoresetMode.SAME_STEP) as vector:
        assert vector.autoreset_mode == "same_step"
