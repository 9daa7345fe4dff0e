import pytest

from envgym.agents.evaluation.evaluate import build_env_eval, load_suite

VOTE_FREE = {"components": [{"name": "correct", "source": "env", "weight": 2.0}]}


def test_a_suite_entry_reward_reaches_make(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text("defaults: {n: 2, n_tasks: 1}\nenvs:\n  - id: math/Arithmetic-v0\n    reward:\n"
                     "      components: [{name: correct, source: env, weight: 2.0}]\n")
    (entry,), _ = load_suite(suite)
    assert entry.make_kwargs() == {"reward": VOTE_FREE}


def test_a_bad_suite_reward_fails_when_the_suite_is_read():
    with pytest.raises(ValueError, match=r"math/Arithmetic-v0: reward.components\[0\].weight must be a number"):
        build_env_eval({"id": "math/Arithmetic-v0", "reward": {"components": [{"name": "c", "source": "env",
                                                                                  "weight": "x"}]}})


def test_eval_reward_flag_composes_every_envs_reward(tmp_path):
    import json

    from typer.testing import CliRunner

    from envgym.cli import app
    from helpers.tiny_models import tiny_model_path

    reward = tmp_path / "recipe.yaml"
    reward.write_text("reward:\n  components:\n    - {name: length, source: length, max_length: 2, buffer: 1}\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--env", "math/Arithmetic-v0", "--model", tiny_model_path(), "--n", "1",
                                      "--n-tasks", "1", "--max-new-tokens", "8", "--reward", str(reward),
                                      "--out", str(out), "--backend", "transformers", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    (sample,) = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    (turn,) = sample["episode"]["turns"]
    assert set(turn["reward_components"]) == {"length"} and sample["reward"] == turn["reward_components"]["length"]


def test_eval_refuses_a_bad_reward_file_with_its_key_path(tmp_path):
    from typer.testing import CliRunner

    from envgym.cli import app

    reward = tmp_path / "reward.json"
    reward.write_text('{"components": [{"name": "c", "source": "env", "weight": "x"}]}')
    result = CliRunner().invoke(app, ["eval", "--env", "math/Arithmetic-v0", "--reward", str(reward),
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "reward.components[0].weight must be a number" in result.output


def test_eval_maj_at_k_counts_one_answer_written_three_ways(tmp_path):
    from transformers import AutoTokenizer

    from envgym.agents.evaluation.evaluate import EnvEval, evaluate
    from helpers.scripted_policy import ScriptedPolicy
    from helpers.tiny_models import tiny_model_path

    class Cycling(ScriptedPolicy):
        """Answers in turn: a wrong 3, then one half in three forms (the majority, once clustered)."""

        queue = ["\\boxed{3}", "\\boxed{1/2}", "\\boxed{0.5}", "\\boxed{\\frac{1}{2}}"]

        def generate(self, prompts, params):
            out = []
            for ids in prompts:
                self.scripts = {"half": [self.queue.pop(0)]}
                out.extend(super().generate([ids], params))
            return out

    tasks = tmp_path / "half.jsonl"
    tasks.write_text('{"question": "What is one half?", "answer": "1/2"}\n')
    policy = Cycling(AutoTokenizer.from_pretrained(tiny_model_path()), {"half": ["unused"]})
    config = EnvEval(id="math/Dataset-v0", n=4, n_tasks=1, k=[4], max_new_tokens=16, kwargs={"path": str(tasks)})
    summary = evaluate(policy, [config], tmp_path / "run", batch_size=4)["envs"]["math/Dataset-v0"]
    assert summary["pass@1"] == 0.75 and summary["maj@4"] == 1.0  # exact strings would elect the first answer, 3
