import json

import numpy as np
import pytest

import envgym
from envgym import Episode
from envgym.episode import to_jsonable


def _play(seed=0):
    env = envgym.make("games/GuessNumber-v0")
    messages, info = env.reset(seed=seed)
    episode = Episode("games/GuessNumber-v0", info["task_id"], messages, seed=seed, reset_info=info)
    for guess in (50, 25):
        episode.add_turn(f"<guess>{guess}</guess>", *env.step(f"<guess>{guess}</guess>"))
    return episode


def test_round_trip_through_jsonl(tmp_path):
    episodes = [_play(0), _play(1)]
    path = tmp_path / "episodes.jsonl"
    assert envgym.write_jsonl(path, episodes) == 2
    again = list(envgym.read_jsonl(path))
    assert [e.to_dict() for e in again] == [e.to_dict() for e in episodes]
    assert again[0].rewards == episodes[0].rewards


def test_episode_error_round_trips_through_jsonl(tmp_path):
    episode = _play()
    episode.error = "step timeout after 2.0s"
    path = tmp_path / "failed.jsonl"
    envgym.write_jsonl(path, [episode])
    (again,) = envgym.read_jsonl(path)
    assert again.error == "step timeout after 2.0s" and again.failed


def test_episode_without_error_is_not_failed():
    episode = _play()
    assert episode.error is None and not episode.failed
    assert episode.to_dict()["error"] is None


def test_old_record_without_error_key_loads_as_not_failed():
    record = _play().to_dict()
    del record["error"]
    episode = Episode.from_dict(record)
    assert episode.error is None and not episode.failed


def test_turn_keeps_reward_components_out_of_info():
    turn = _play().turns[0]
    assert set(turn.reward_components) == {"correct", "wasted"} and "reward_components" not in turn.info


def test_messages_rebuild_the_conversation():
    episode = _play()
    roles = [m["role"] for m in episode.messages()]
    assert roles == ["user", "assistant", "user", "assistant", "user"]


def test_torn_last_line_is_skipped_but_a_bad_middle_line_raises(tmp_path):
    path = tmp_path / "e.jsonl"
    envgym.write_jsonl(path, [_play()])
    with path.open("a") as handle:
        handle.write('{"env_id": "x", "tur')
    assert len(list(envgym.read_jsonl(path))) == 1
    path.write_text("not json\n" + path.read_text())
    with pytest.raises(ValueError, match=":1: not valid JSON"):
        list(envgym.read_jsonl(path))


def test_unknown_fields_are_rejected():
    with pytest.raises(ValueError, match="unknown Episode fields"):
        Episode.from_dict({"env_id": None, "task_id": None, "prompt": [], "rewardz": 1})


def test_to_jsonable_handles_numpy_and_non_finite_values():
    value = {"a": np.float32(1.5), "b": np.arange(3), "c": float("nan"), "d": (1, 2), 3: {1}}
    assert (
        json.dumps(to_jsonable(value), allow_nan=False)
        == '{"a": 1.5, "b": [0, 1, 2], "c": null, "d": [1, 2], "3": [1]}'
    )
