"""bfcl/MultiTurn* envs: BFCL's backends, checked after each turn (state, results, an empty turn) as BFCL checks."""

import json

import pytest

import envgym
from envgym.envs.bfcl import env_id
from envgym.envs.bfcl.data import MULTI_TURN
from envgym.envs.bfcl.multi_turn import STEP_LIMIT


def calls(*pairs):
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, (name, arguments) in enumerate(pairs)
        ],
    }


def base(index=0, **kwargs):
    env = envgym.make("bfcl/MultiTurnBase-v0", prompt_format=None, **kwargs)
    env.reset(options={"task_index": index})
    return env


def play_reference(env):
    total, steps = 0.0, 0
    while True:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.reference_action())
        total, steps = total + reward, steps + 1
        if terminated or truncated:
            return total, info


@pytest.mark.parametrize("category", MULTI_TURN)
@pytest.mark.parametrize("prompt_format", ["bfcl", None])
def test_the_reference_trajectory_earns_1_on_the_first_tasks_of_every_category(category, prompt_format):
    env = envgym.make(env_id(category), prompt_format=prompt_format)
    for index in range(3):
        env.reset(options={"task_index": index})
        total, info = play_reference(env)
        assert total == 1.0 and info["correct"], info.get("call_failure_reason")


def test_calls_run_on_the_backend_and_their_results_come_back_as_tool_messages():
    env = base()
    messages, reward, terminated, _, _ = env.step(calls(("cd", {"folder": "document"}), ("ls", {})))
    assert (reward, terminated) == (0.0, False)
    assert [m["role"] for m in messages] == ["tool", "tool"]
    assert "final_report.pdf" in messages[1]["content"]


def test_a_turn_ends_on_a_step_without_calls_and_the_next_user_turn_follows():
    env = base()
    env.step(calls(("cd", {"folder": "document"}), ("mkdir", {"dir_name": "temp"})))
    env.step(calls(("mv", {"source": "final_report.pdf", "destination": "temp"})))
    messages, reward, terminated, _, info = env.step("Done.")
    assert (reward, terminated, info["turn"]) == (0.0, False, 1)
    assert messages[0]["role"] == "user" and "budget analysis" in messages[0]["content"]


def test_a_turn_with_the_wrong_state_fails_the_episode_naming_what_differs():
    env = base()
    env.step(calls(("cd", {"folder": "document"}), ("mkdir", {"dir_name": "tmp"})))
    _, reward, terminated, _, info = env.step("Done.")
    assert (reward, terminated, info["call_failure"], info["failed_turn"]) == (0.0, True, "state_mismatch", 0)
    assert "GorillaFileSystem" in info["call_failure_reason"]
    assert info["expected_calls"][0][0] == "cd(folder='document')"


def test_a_turn_without_any_call_fails_as_no_call():
    _, reward, terminated, _, info = base().step("I moved it.")
    assert (reward, terminated, info["call_failure"]) == (0.0, True, "no_call")


def test_a_read_whose_result_the_policy_never_got_fails_as_result_missing():
    env = base()
    for action in [
        calls(
            ("cd", {"folder": "document"}),
            ("mkdir", {"dir_name": "temp"}),
            ("mv", {"source": "final_report.pdf", "destination": "temp"}),
        ),
        "Done.",
    ]:
        env.step(action)
    env.step(calls(("cd", {"folder": "temp"}), ("grep", {"file_name": "final_report.pdf", "pattern": "nothing"})))
    _, reward, _, _, info = env.step("Done.")
    assert reward == 0.0 and info["call_failure"] == "result_missing"


def test_more_steps_with_calls_than_bfcl_allows_fail_the_episode():
    env = base()
    for _ in range(STEP_LIMIT):
        _, _, terminated, _, _ = env.step(calls(("pwd", {})))
        assert not terminated
    _, reward, terminated, _, info = env.step(calls(("pwd", {})))
    assert (reward, terminated, info["call_failure"]) == (0.0, True, "step_limit")


def test_a_bad_call_is_an_error_message_not_an_exception():
    env = base()
    messages, _, terminated, _, _ = env.step(calls(("cd", {"directory": "document"}), ("teleport", {})))
    assert not terminated
    assert messages[0]["content"].startswith("Error during execution:")
    assert messages[1]["content"] == "Error during execution: name 'teleport' is not defined"


def test_the_names_bfcl_refuses_are_refused():
    messages, _, _, _, _ = base().step(calls(("exit", {})))
    assert messages[0]["content"] == "Error during execution: Function call exit is not allowed."


def test_policy_text_is_never_evaluated(tmp_path):
    marker = tmp_path / "evaluated"
    env = envgym.make("bfcl/MultiTurnBase-v0")
    env.reset(options={"task_index": 0})
    _, reward, _, _, info = env.step(f"[cd(folder=__import__('pathlib').Path('{marker}').touch())]")
    assert not marker.exists()
    assert reward == 0.0 and info["call_failure"] == "no_call"  # an unreadable call is no call: the turn ends


def test_episodes_of_the_same_task_start_from_the_same_state():
    env = base()
    env.step(calls(("cd", {"folder": "document"}), ("rm", {"file_name": "final_report.pdf"})))
    env.reset(options={"task_index": 0})
    messages, _, _, _, _ = env.step(calls(("cd", {"folder": "document"}), ("ls", {})))
    assert "final_report.pdf" in messages[1]["content"]


def test_held_out_functions_arrive_at_their_turn_in_miss_func():
    env = envgym.make("bfcl/MultiTurnMissFunc-v0", prompt_format=None)
    _, info = env.reset(options={"task_index": 0})
    assert "sort" not in [tool["function"]["name"] for tool in info["tools"]]
    arrived = None
    while arrived is None:
        messages, _, terminated, _, info = env.step(env.unwrapped.reference_action())
        assert not terminated
        if "tools" in info:
            arrived = info
    assert "sort" in [tool["function"]["name"] for tool in arrived["tools"]]
    assert messages[0]["content"] == "I have updated some more functions you can choose from. What about now?"


def test_a_turn_with_an_empty_gold_is_not_checked():
    env = envgym.make("bfcl/MultiTurnMissFunc-v0", prompt_format=None)
    env.reset(options={"task_index": 0})
    for _ in range(4):  # turns 0 and 1: the gold calls, then "Done."
        env.step(env.unwrapped.reference_action())
    _, reward, terminated, _, info = env.step("I can't sort files with these functions.")  # turn 2: gold is []
    assert (reward, terminated, info["turn"]) == (0.0, False, 3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"category": "simple_python"}, "unknown multi-turn BFCL category 'simple_python'"),
        ({"prompt_format": "xml"}, "prompt_format must be 'bfcl' or None, got 'xml'"),
    ],
)
def test_bad_kwargs_are_refused_naming_what_is_accepted(kwargs, message):
    from envgym.envs.bfcl.multi_turn import BFCLMultiTurn

    with pytest.raises(ValueError, match=message):
        BFCLMultiTurn(**kwargs)
