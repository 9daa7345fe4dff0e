"""Vector envs: partial stepping, isolation of failures, per-env RNGs, every mode.

Autoreset and step timeouts have their own files: test_vector_autoreset.py, test_vector_backends.py."""

import asyncio

import pytest

import envgym
from envgym import Env
from envgym.vector import VectorEnv

MODES = ["sync", "thread", "process"]


class ExplodingEnv(Env):
    """Raises on its second step (a buggy env in a batch)."""

    def _reset(self, task, options):
        self.turns = 0
        return [{"role": "user", "content": "hi"}], {}

    def _step(self, action):
        self.turns += 1
        if self.turns == 2:
            raise RuntimeError("boom")
        return [{"role": "user", "content": "again"}], 0.5, False, False, {}


def _guess_env():
    return envgym.make("games/GuessNumber-v0")


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_env_in_a_vector_of_8_does_not_disturb_the_other_7(mode):
    fns = [_guess_env] * 7 + [ExplodingEnv]
    with VectorEnv(fns, mode=mode, autoreset_mode="disabled") as vector:
        vector.reset(seed=0)
        vector.step(["<guess>50</guess>"] * 8)
        _, rewards, terminated, truncated, infos = vector.step(["<guess>50</guess>"] * 8)
        assert "RuntimeError: boom" in infos[7]["error"] and truncated[7] is True
        assert all("error" not in info for info in infos[:7])
        assert all(info["feedback"] in ("higher", "lower", "correct") for info in infos[:7])
        # the failed env is out of the batch until reset; the others keep playing
        _, _, _, _, infos = vector.step(["<guess>25</guess>"] * 8)
        assert "ResetNeeded" in infos[7]["error"]
        assert vector.active[:7] == [not t for t in terminated[:7]]


@pytest.mark.parametrize("mode", MODES)
def test_same_seeds_give_same_results_in_every_mode(mode):
    with envgym.make_vec("games/GuessNumber-v0", 4, mode=mode) as vector:
        messages, infos = vector.reset(seed=11)
        results = vector.step(["<guess>50</guess>"] * 4)
    with envgym.make_vec("games/GuessNumber-v0", 4, mode="sync") as reference:
        assert reference.reset(seed=11) == (messages, infos)
        assert reference.step(["<guess>50</guess>"] * 4) == results


def test_int_seed_gives_each_env_its_own_seed():
    with envgym.make_vec("games/GuessNumber-v0", 3) as vector:
        _, infos = vector.reset(seed=5)
    with envgym.make_vec("games/GuessNumber-v0", 1) as single:
        assert single.reset(seed=7)[1][0]["task_id"] == infos[2]["task_id"]


def test_grpo_group_shares_one_task():
    with envgym.make_vec("games/GuessNumber-v0", 4) as vector:
        _, infos = vector.reset(seed=[1, 2, 3, 4], options=[{"task_index": 9}] * 4)
    assert len({info["task_id"] for info in infos}) == 1


def test_partial_stepping_with_none_and_dict():
    with envgym.make_vec("games/GuessNumber-v0", 3) as vector:
        vector.reset(seed=0)
        _, rewards, _, _, infos = vector.step([None, "<guess>50</guess>", None])
        assert infos[0] == {"skipped": True} and infos[2] == {"skipped": True}
        assert infos[1]["turn"] == 1
        _, _, _, _, infos = vector.step({2: "<guess>50</guess>"})
        assert infos[2]["turn"] == 1 and infos[1] == {"skipped": True}


def test_reset_of_some_indices_only():
    with envgym.make_vec("games/GuessNumber-v0", 3) as vector:
        vector.reset(seed=0)
        messages, infos = vector.reset(seed=[10], indices=[1])
        assert len(messages) == 1 and len(infos) == 1


def test_finished_env_is_inactive_and_others_continue():
    with envgym.make_vec("games/GuessNumber-v0", 2, max_turns=1) as vector:
        vector.reset(seed=0)
        _, _, _, truncated, _ = vector.step(["<guess>1</guess>", None])
        assert truncated[0] is True and vector.active == [False, True]


def test_mixed_env_ids_in_one_vector(scratch_registry):
    envgym.register("test/Tiny-v0", "envgym.envs.games.guess_number:GuessNumber", low=1, high=2)
    with envgym.make_vec(["games/GuessNumber-v0", "test/Tiny-v0"]) as vector:
        assert vector.env_ids == ["games/GuessNumber-v0", "test/Tiny-v0"]
        vector.reset(seed=0)
        assert vector.envs[1].unwrapped.high == 2


def test_bad_batches_raise_clearly():
    with envgym.make_vec("games/GuessNumber-v0", 2) as vector:
        vector.reset()
        with pytest.raises(ValueError, match="2 actions for 2|got 1 actions"):
            vector.step(["a"])
        with pytest.raises(IndexError, match="out of range"):
            vector.step({5: "a"})
        with pytest.raises(TypeError, match="list"):
            vector.step("a")
        with pytest.raises(ValueError, match="unknown vector-env mode"):
            envgym.make_vec("games/GuessNumber-v0", 2, mode="gpu")
    with pytest.raises(envgym.UnknownEnv):
        envgym.make_vec("games/Nope-v0", 2)


def test_an_invalid_action_type_is_reported_in_info_not_raised():
    with envgym.make_vec("games/GuessNumber-v0", 2) as vector:
        vector.reset(seed=0)
        _, _, _, _, infos = vector.step([42, "<guess>50</guess>"])
        assert "InvalidAction" in infos[0]["error"] and "error" not in infos[1]


def test_async_api():
    async def play():
        with envgym.make_vec("games/GuessNumber-v0", 2, mode="thread") as vector:
            await vector.areset(seed=0)
            return await vector.astep(["<guess>50</guess>"] * 2)

    _, rewards, _, _, infos = asyncio.run(play())
    assert len(rewards) == 2 and all(info["turn"] == 1 for info in infos)


def test_bad_reset_options_fail_only_that_env():
    with envgym.make_vec("games/GuessNumber-v0", 2) as vector:
        _, infos = vector.reset(options=[{"task_index": "x"}, None])
        assert "InvalidOptions" in infos[0]["error"] and "task_id" in infos[1]
        assert vector.active == [False, True]
