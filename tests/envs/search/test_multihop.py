"""search/MultiHopQA-v0: search, read, hop, answer; exact match is learnable and not hackable."""

import json

import numpy as np
import pytest

import envgym
from envgym.envs.search.index import SearchIndex
from envgym.server.search import serve_in_thread
from envgym.tools import ToolUnavailable
from envgym.utils import check_env

SMALL = {"num_docs": 2000}


@pytest.fixture(scope="module")
def env():
    return envgym.make("search/MultiHopQA-v0", **SMALL)


def play_oracle(env, index):
    """Search each entity on the question's path (checking its document comes back), then answer."""
    env.reset(seed=index, options={"task_index": index})
    for name in env.task.metadata["path"]:
        messages, reward, terminated, _, info = env.step(f"<think>next hop</think><search>{name}</search>")
        assert not terminated and f"(Title: {name})" in messages[0]["content"]
    return env.step(f"<answer>{env.task.answer[0]}</answer>")


def test_multihop_passes_check_env(env):
    check_env(env)


def test_a_search_returns_information_and_an_answer_ends_the_episode(env):
    messages, info = env.reset(seed=0, options={"task_index": 0})
    assert "Question:" in messages[-1]["content"] and info["tools"][0]["function"]["name"] == "search"
    results, reward, terminated, _, info = env.step(f"<search>{env.task.metadata['path'][0]}</search>")
    assert results[0]["role"] == "user" and results[0]["content"].startswith("<information>Doc 1(Title: ")
    assert (reward, terminated, info["tool_calls_total"]) == (0.0, False, 1)


def test_an_oracle_following_the_path_gets_full_reward_on_20_tasks(env):
    hops = set()
    for index in range(20):
        _, reward, terminated, _, info = play_oracle(env, index)
        assert terminated and reward == 1.0 and info["em"] == 1.0
        hops.add(env.task.metadata["hops"])
    assert hops == {1, 2, 3, 4}


@pytest.mark.parametrize("turn", ["", "I do not know.", "<answer></answer>", "<answer>1900</answer>"])
def test_empty_or_guessed_answers_score_near_zero(env, turn):
    rewards = []
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        rewards.append(env.step(turn)[1])
    assert np.mean(rewards) <= 0.1


def test_listing_many_candidates_does_not_get_exact_match(env):
    env.reset(seed=0, options={"task_index": 3})
    candidates = [doc["title"] for doc in _documents(env)[:50]] + [env.task.answer[0]]
    _, reward, _, _, info = env.step(f"<answer>{', '.join(candidates)}</answer>")
    assert reward == 0.0 and info["em"] == 0.0 and info["f1"] < 0.2


def _documents(env):
    from envgym.envs.search.multihop import _world

    return _world(SMALL["num_docs"], 0).documents()


def test_f1_reward_gives_partial_credit():
    env = envgym.make("search/MultiHopQA-v0", metric="f1", **SMALL)
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        if " " in env.task.answer[0]:
            break
    _, reward, _, _, info = env.step(f"<answer>{env.task.answer[0].split()[0]}</answer>")
    assert 0.0 < reward == info["f1"] < 1.0 and info["em"] == 0.0


def test_a_search_without_hits_says_so(env):
    env.reset(seed=0)
    assert env.step("<search>zzzqqq</search>")[0][0]["content"] == "<information>No results.</information>"


def test_json_function_calls_search_too(env):
    env.reset(seed=0, options={"task_index": 0})
    name = env.task.metadata["path"][0]
    call = {"name": "search", "arguments": {"query": name}}
    messages, *_ = env.step(f"<tool_call>{json.dumps(call)}</tool_call>")
    assert messages[0]["role"] == "tool" and f"(Title: {name})" in messages[0]["content"]


def test_max_turns_goes_well_beyond_ten_for_long_horizon_search():
    env = envgym.make("search/MultiHopQA-v0", max_turns=48, **SMALL)
    env.reset(seed=0, options={"task_index": 0})
    for turn in range(40):
        _, _, terminated, truncated, info = env.step(f"<search>query {turn}</search>")
        assert not (terminated or truncated)
    _, reward, terminated, _, info = env.step(f"<answer>{env.task.answer[0]}</answer>")
    assert terminated and reward == 1.0 and info["tool_calls_total"] == 40 and info["turn"] == 41


def test_the_turn_limit_truncates(env):
    env.reset(seed=0)
    for _ in range(12):
        _, _, terminated, truncated, _ = env.step("<search>x</search>")
    assert truncated and not terminated


def test_a_jsonl_corpus_and_search_r1_qa_file_work(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps(d)
            for d in [
                {"id": "1", "contents": '"Velmora"\nVelmora is the capital of Tarsk.'},
                {"id": "2", "contents": '"Tarsk"\nTarsk is a country in the north.'},
            ]
        )
    )
    questions = tmp_path / "qa.jsonl"
    questions.write_text(
        json.dumps({"question": "What is the capital of Tarsk?", "golden_answers": ["Velmora", "Velmora City"]})
    )
    env = envgym.make("search/MultiHopQA-v0", corpus_path=str(corpus), qa_path=str(questions))
    env.reset(seed=0, options={"task_index": 0})
    messages, *_ = env.step("<search>capital of Tarsk</search>")
    assert "(Title: Velmora)" in messages[0]["content"]
    assert env.step("<answer>velmora city</answer>")[1] == 1.0


def test_a_hotpotqa_answer_field_works(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "1", "title": "Tarsk", "text": "Tarsk is a country."}))
    questions = tmp_path / "qa.jsonl"
    questions.write_text(json.dumps({"question": "Which is a country?", "answer": "Tarsk"}))
    env = envgym.make("search/MultiHopQA-v0", corpus_path=str(corpus), qa_path=str(questions))
    env.reset(seed=0)
    assert env.step("<answer>Tarsk</answer>")[1] == 1.0


def test_it_can_search_through_a_running_retrieval_server():
    from envgym.envs.search.world import World

    with serve_in_thread(SearchIndex(World(2000, 0).documents())) as url:
        env = envgym.make("search/MultiHopQA-v0", retriever_url=url, **SMALL)
        _, reward, *_ = play_oracle(env, 2)
    assert reward == 1.0


def test_a_search_server_that_is_down_is_an_infrastructure_error_not_an_observation():
    env = envgym.make("search/MultiHopQA-v0", retriever_url="http://127.0.0.1:9", **SMALL)
    env.reset(seed=0, options={"task_index": 0})
    with pytest.raises(ToolUnavailable, match="search server at http://127.0.0.1:9 failed"):
        env.step("<search>Velmora</search>")


def test_corpus_and_questions_must_come_together(tmp_path):
    with pytest.raises(ValueError, match="corpus_path and qa_path go together"):
        envgym.make("search/MultiHopQA-v0", corpus_path=str(tmp_path / "c.jsonl"))


def test_the_reference_answer_gets_full_reward_on_20_tasks(env):
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        _, reward, terminated, _, info = env.step(env.reference_action())
        assert terminated and reward == 1.0 and info["em"] == 1.0


def test_with_f1_listing_every_name_of_the_answers_kind_earns_nothing():
    env = envgym.make("search/MultiHopQA-v0", metric="f1", **SMALL)
    titles = [doc["title"] for doc in _documents(env)]
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        gold = env.task.answer[0]
        kind = [title for title in titles if len(title.split()) == len(gold.split())]  # names shaped like the gold
        for separator in (", ", " or ", " "):
            listing = separator.join([gold, *kind[:2]])
            env.reset(seed=index, options={"task_index": index})
            _, reward, _, _, info = env.step(f"<answer>{listing}</answer>")
            assert reward == 0.0, (listing, info["f1"])


@pytest.mark.parametrize("metric", ["em", "f1"])
def test_echoing_the_question_or_a_huge_answer_earns_nothing(metric):
    env = envgym.make("search/MultiHopQA-v0", metric=metric, **SMALL)
    for index in range(10):
        messages, _ = env.reset(seed=index, options={"task_index": index})
        question = messages[-1]["content"].split("Question: ")[-1]
        assert env.step(f"<answer>{question}</answer>")[1] == 0.0
        env.reset(seed=index, options={"task_index": index})
        assert env.step(f"<answer>{(env.task.answer[0] + ' ') * 5000}</answer>")[1] == 0.0


def test_a_search_flood_runs_one_search_and_is_an_invalid_turn(env):
    env.reset(seed=0, options={"task_index": 0})
    messages, _, terminated, _, info = env.step("<search>Velmora</search>" * 200)
    assert info["tool_calls"] == 1 and info["tool_calls_skipped"] == 199 and len(messages) == 2
    assert info["action_valid"] is False and not terminated


def test_an_unknown_tool_is_an_invalid_turn(env):
    env.reset(seed=0, options={"task_index": 0})
    messages, *_, info = env.step('<tool_call>{"name": "browse", "arguments": {"url": "x"}}</tool_call>')
    assert "no tool named 'browse'" in messages[0]["content"] and info["action_valid"] is False


def test_a_huge_query_is_answered_like_any_other(env):
    env.reset(seed=0, options={"task_index": 0})
    messages, _, terminated, _, info = env.step(f"<search>{'Velmora Tarsk ' * 7000}</search>")
    assert messages[0]["content"].startswith("<information>") and info["action_valid"] is True and not terminated


def test_nested_answer_tags_grade_the_innermost_answer(env):
    env.reset(seed=0, options={"task_index": 0})
    assert env.step(f"<answer><answer>{env.task.answer[0]}</answer></answer>")[1] == 1.0
