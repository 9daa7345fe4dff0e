"""OpenAIPolicy against a real OpenAI-compatible server on 127.0.0.1 (envgym's own, serving the tiny model)."""

import pytest
from helpers.openai_server import free_port, openai_server
from helpers.tiny_models import tiny_model_path

import envgym
from envgym.agents.engines.openai_policy import OpenAIPolicy
from envgym.agents.engines.policy import SamplingParams, render_prompt
from envgym.agents.engines.transformers_policy import TransformersPolicy
from envgym.agents.rollout import rollout

GREEDY = SamplingParams(max_completion_length=8, temperature=0.0)


@pytest.fixture(scope="module")
def base_url():
    with openai_server(tiny_model_path()) as url:
        yield url


@pytest.fixture(scope="module")
def local():
    return TransformersPolicy(tiny_model_path(), device="cpu")


def test_chat_returns_text_token_ids_and_logprobs(base_url):
    policy = OpenAIPolicy(base_url, "tiny", max_concurrency=2)
    conversations = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "What is 2+3?"}]]
    generations = policy.chat(conversations, GREEDY)
    assert len(generations) == 2
    for generation in generations:
        assert 1 <= len(generation.token_ids) <= 8
        assert len(generation.logprobs) == len(generation.token_ids)
        assert all(lp <= 0 for lp in generation.logprobs)


def test_completions_with_token_ids_match_local_greedy_generation(base_url, local):
    remote = OpenAIPolicy(base_url, "tiny", endpoint="completions", tokenizer=local.tokenizer)
    prompt = render_prompt(local.tokenizer, [{"role": "user", "content": "Guess a number"}])
    [served] = remote.generate([prompt], GREEDY)
    [here] = local.generate([prompt], GREEDY)
    assert served.token_ids == here.token_ids
    assert served.logprobs == pytest.approx(here.logprobs, abs=1e-4)


def test_token_level_rollout_through_the_server_yields_trajectories(base_url, local):
    remote = OpenAIPolicy(base_url, "tiny", endpoint="completions", tokenizer=local.tokenizer)
    envs = envgym.make_vec("games/GuessNumber-v0", 2, max_turns=2)
    out = rollout(remote, envs, task_indices=[0], num_generations=2, sampling=GREEDY)
    assert len(out.trajectories) == 2
    assert all(sum(t.loss_mask) == t.episode.metadata["policy_tokens"] > 0 for t in out.trajectories)


def test_message_level_rollout_returns_episodes_only(base_url):
    envs = envgym.make_vec("games/GuessNumber-v0", 2, max_turns=2)
    out = rollout(OpenAIPolicy(base_url, "tiny"), envs, task_indices=[0, 1], sampling=GREEDY)
    assert out.trajectories == [] and [e.num_turns for e in out.episodes] == [2, 2]


def test_the_samples_of_one_task_differ_at_temperature_1_and_one_seed_reproduces_them(base_url):
    envs = envgym.make_vec("games/GuessNumber-v0", 4, max_turns=1)
    sampling = SamplingParams(max_completion_length=8, temperature=1.0, seed=11)

    def answers() -> list[str]:
        out = rollout(
            OpenAIPolicy(base_url, "tiny", max_concurrency=4),
            envs,
            task_indices=[0],
            num_generations=4,
            sampling=sampling,
        )
        return [episode.turns[0].action for episode in out.episodes]

    first = answers()
    assert len(set(first)) > 1, first
    assert answers() == first


def test_token_level_samples_of_one_batch_differ_and_one_seed_reproduces_them(base_url, local):
    remote = OpenAIPolicy(base_url, "tiny", endpoint="completions", tokenizer=local.tokenizer, max_concurrency=4)
    prompt = render_prompt(local.tokenizer, [{"role": "user", "content": "Say a number."}])
    sampling = SamplingParams(max_completion_length=8, temperature=1.0, seed=5)
    first = [g.token_ids for g in remote.generate([prompt] * 4, sampling)]
    assert len({tuple(ids) for ids in first}) > 1, first
    assert [g.token_ids for g in remote.generate([prompt] * 4, sampling)] == first


def test_an_unreachable_server_fails_the_request_with_a_clear_error_after_retries():
    policy = OpenAIPolicy(f"http://127.0.0.1:{free_port()}/v1/", "tiny", max_retries=1, timeout=2)
    [generation] = policy.chat([[{"role": "user", "content": "hi"}]], GREEDY)
    assert "failed after 2 attempts" in generation.error and "/v1/chat/completions" in generation.error
    assert "//chat" not in generation.error


def test_a_refused_request_is_not_retried_and_says_so(base_url):
    policy = OpenAIPolicy(base_url, "tiny", extra_body={"stream": True})  # envgym's server refuses streaming: 400
    [generation] = policy.chat([[{"role": "user", "content": "hi"}]], GREEDY)
    assert "HTTP 400" in generation.error and "streaming" in generation.error
    assert "attempt" not in generation.error and "//chat" not in generation.error


def test_a_refused_request_fails_its_episode_not_the_rollout(base_url):
    envs = envgym.make_vec("games/GuessNumber-v0", 2, max_turns=2)
    out = rollout(
        OpenAIPolicy(base_url, "tiny", extra_body={"stream": True}),
        envs,
        task_indices=[0, 1],
        sampling=GREEDY,
    )
    assert all(episode.failed and "HTTP 400" in episode.error for episode in out.episodes)


def test_completions_endpoint_needs_a_tokenizer():
    with pytest.raises(ValueError, match="needs the model's tokenizer"):
        OpenAIPolicy("http://127.0.0.1:1/v1", "tiny", endpoint="completions")
