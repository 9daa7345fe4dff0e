"""Simulated users: the scripted user's reveal order, the replay user's script, the LLM user (text, its own tool calls,
stop tokens) over a scripted OpenAI-compatible transport."""

import json

import httpx
import pytest

from envgym.tools import ToolCall
from envgym.users import STOP, LLMUser, ReplayUser, ScriptedUser, UserBrief, UserError, UserTurn, make_user

GOAL = ("Cancel Ada's kettle order.", "Move Bruno to 3 Elm Street, Leeds.")
BRIEF = UserBrief(goal=GOAL)


def test_scripted_user_reveals_the_goal_in_order_one_piece_per_question():
    user = ScriptedUser()
    user.start(BRIEF)
    assert user.reply("How can I help?").text == GOAL[0]
    assert user.reply("Anything else?").text == GOAL[1]
    assert user.reply("Anything else?").text == "That is everything I need."


def test_scripted_user_repeats_itself_when_asked_nothing():
    user = ScriptedUser()
    user.start(BRIEF)
    assert "ask me" in user.reply("Hello.").text
    user.reply("What do you need?")
    assert user.reply("Working on it.").text == f"As I said: {GOAL[0]}"


def test_scripted_user_ends_on_a_final_message_after_everything_is_out():
    user = ScriptedUser()
    user.start(UserBrief(goal=GOAL[:1]))
    user.reply("What do you need?")
    assert user.reply("All done.").stop


def _transport(replies):
    """A scripted OpenAI-compatible endpoint: each request gets the next reply (a text or an HTTP status)."""
    seen = []

    def handle(request):
        seen.append(request)
        reply = replies.pop(0)
        if isinstance(reply, int):
            return httpx.Response(reply, json={"error": "down"})
        message = reply if isinstance(reply, dict) else {"role": "assistant", "content": reply}
        return httpx.Response(200, json={"choices": [{"message": message}]})

    return httpx.MockTransport(handle), seen


def test_llm_user_speaks_from_the_endpoint_with_flipped_roles():
    transport, seen = _transport([GOAL[0], f"Thanks! {STOP}"])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=0)
    user.start(BRIEF)
    assert user.reply("How can I help?").text == GOAL[0]
    final = user.reply("Done.")
    assert final.stop and final.text == "Thanks!"
    assert seen[0].url.path == "/v1/chat/completions"
    assert b"Cancel Ada" in seen[0].content  # the goal is in the user's system prompt


def test_llm_user_retries_a_failed_request():
    transport, _ = _transport([500, GOAL[0]])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=1)
    user.start(BRIEF)
    assert user.reply("How can I help?").text == GOAL[0]


def test_llm_user_failure_after_retries_is_a_user_error():
    transport, _ = _transport([503, 503])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=1)
    user.start(BRIEF)
    with pytest.raises(UserError, match="failed after 2 attempt"):
        user.reply("How can I help?")


def test_make_user_refuses_an_endpoint_without_url_or_model():
    with pytest.raises(ValueError, match="base_url"):
        make_user({"model": "m"})


PHONE_TOOLS = ({"type": "function", "function": {"name": "toggle_airplane_mode", "parameters": {"type": "object"}}},)


def test_llm_user_reads_a_given_prompt_and_its_own_tool_calls():
    call = {"id": "c1", "type": "function", "function": {"name": "toggle_airplane_mode", "arguments": "{}"}}
    transport, seen = _transport([{"role": "assistant", "content": None, "tool_calls": [call]}, "It is off now."])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=0)
    user.start(UserBrief(prompt="You are a phone owner.", tools=PHONE_TOOLS))
    turn = user.reply("Please turn airplane mode off.")
    assert [c.name for c in turn.tool_calls] == ["toggle_airplane_mode"] and not turn.stop
    assert user.tool_results([{"role": "tool", "tool_call_id": "c1", "content": "Airplane mode: off"}]).text == (
        "It is off now."
    )
    first, second = (json.loads(request.content) for request in seen)
    assert first["messages"][0] == {"role": "system", "content": "You are a phone owner."}
    assert first["tools"] == list(PHONE_TOOLS)
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "toggle_airplane_mode"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "Airplane mode: off"}


def test_llm_user_reads_tool_calls_written_as_text_by_a_server_that_does_not_parse_them():
    text = '<tool_call>{"name": "toggle_airplane_mode", "arguments": {}}</tool_call>'
    transport, _ = _transport([text])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=0)
    user.start(UserBrief(prompt="p", tools=PHONE_TOOLS))
    assert [c.name for c in user.reply("Turn it off.").tool_calls] == ["toggle_airplane_mode"]


def test_llm_user_ends_on_any_of_its_stop_tokens_and_names_it():
    transport, _ = _transport(["Okay, thanks. ###TRANSFER###"])
    user = LLMUser(
        "http://user.test/v1",
        "m",
        client=httpx.Client(transport=transport),
        retries=0,
        stop_tokens=(STOP, "###TRANSFER###"),
    )
    user.start(BRIEF)
    turn = user.reply("I am transferring you to a human agent.")
    assert turn.stop and turn.stop_token == "###TRANSFER###" and turn.text == "Okay, thanks."


def test_llm_user_asks_again_after_an_empty_reply():
    transport, _ = _transport(["", GOAL[0]])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=1)
    user.start(BRIEF)
    assert user.reply("How can I help?").text == GOAL[0]


CALL = ToolCall("toggle_airplane_mode", {}, "user_0", "openai")
SCRIPT = (UserTurn("My phone has no service."), UserTurn(tool_calls=(CALL,)), UserTurn("Done."))


def test_replay_user_says_its_script_in_order_then_stops():
    user = ReplayUser()
    user.start(UserBrief(script=SCRIPT))
    assert user.reply("Hi! How can I help you today?").text == "My phone has no service."
    assert user.reply("Please toggle airplane mode.").tool_calls == (CALL,)
    assert user.tool_results([]).text == "Done."
    assert user.reply("Anything else?").stop


def test_replay_user_acts_only_when_the_agent_asks_for_the_action():
    user = ReplayUser(SCRIPT, asks=lambda text, turn: turn.tool_calls[0].name in text, nudge="What should I do?")
    user.start(UserBrief())
    user.reply("Hi!")
    assert user.reply("Let me look into it.").text == "What should I do?"
    assert user.reply("Please run toggle_airplane_mode.").tool_calls == (CALL,)


def test_replay_user_refuses_to_start_without_a_script():
    with pytest.raises(ValueError, match="script"):
        ReplayUser().start(UserBrief(goal=GOAL))


def test_a_user_without_tools_takes_no_tool_results():
    user = ScriptedUser()
    user.start(BRIEF)
    with pytest.raises(UserError, match="makes no tool calls"):
        user.tool_results([])


def test_replay_user_gives_up_after_its_patience_runs_out():
    user = ReplayUser(SCRIPT, asks=lambda text, turn: False, patience=2)
    user.start(UserBrief())
    user.reply("Hi!")
    assert [user.reply("Hmm.").stop for _ in range(3)] == [False, False, True]
