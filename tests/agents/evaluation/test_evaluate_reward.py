import pytest

from envgym.agents.evaluation.suite import build_env_eval, load_suite
from envgym.rewards import RewardSpec

VOTE_FREE = {"components": [{"name": "correct", "source": "env", "weight": 2.0}]}


def test_a_suite_entry_reward_reaches_make(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "defaults: {num_generations: 2, n_tasks: 1}\nenvs:\n  - env: math/Arithmetic-v0\n    reward:\n"
        "      components: [{name: correct, source: env, weight: 2.0}]\n"
    )
    (entry,), _ = load_suite(suite)
    assert entry.make_kwargs() == {"reward": RewardSpec.from_dict(VOTE_FREE)}  # built once, when the suite is read
    assert entry.model_dump()["reward"] == RewardSpec.from_dict(VOTE_FREE).to_dict()  # results.json: its dict form


def test_a_bad_suite_reward_fails_when_the_suite_is_read():
    with pytest.raises(ValueError, match=r"^suite.yaml: envs\[0\]: reward.components\[0\].weight must be a number"):
        build_env_eval(
            {"env": "math/Arithmetic-v0", "reward": {"components": [{"name": "c", "source": "env", "weight": "x"}]}},
            where="suite.yaml: envs[0]",
        )


def test_eval_reward_flag_composes_every_envs_reward(tmp_path):
    import json

    from helpers.tiny_models import tiny_model_path
    from typer.testing import CliRunner

    from envgym.cli.app import app

    reward = tmp_path / "recipe.yaml"
    reward.write_text("reward:\n  components:\n    - {name: length, source: length, max_length: 2, buffer: 1}\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--env",
            "math/Arithmetic-v0",
            "--model",
            tiny_model_path(),
            "--num-generations",
            "1",
            "--n-tasks",
            "1",
            "--max-completion-length",
            "8",
            "--reward",
            str(reward),
            "--out",
            str(out),
            "--engine",
            "transformers",
            "--device",
            "cpu",
        ],
    )
    assert result.exit_code == 0, result.output
    (sample,) = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    (turn,) = sample["episode"]["turns"]
    assert set(turn["reward_components"]) == {"length"} and sample["reward"] == turn["reward_components"]["length"]


def test_eval_refuses_a_bad_reward_file_with_its_key_path(tmp_path):
    from typer.testing import CliRunner

    from envgym.cli.app import app

    reward = tmp_path / "reward.json"
    reward.write_text('{"components": [{"name": "c", "source": "env", "weight": "x"}]}')
    result = CliRunner().invoke(
        app, ["eval", "--env", "math/Arithmetic-v0", "--reward", str(reward), "--out", str(tmp_path / "run")]
    )
    assert result.exit_code == 2 and "reward.components[0].weight must be a number" in result.output


def test_eval_maj_at_k_counts_one_answer_written_three_ways(tmp_path):
    from helpers.scripted_policy import ScriptedPolicy
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoTokenizer

    from envgym.agents.evaluation.evaluate import evaluate
    from envgym.agents.evaluation.suite import EnvEval

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
    config = EnvEval(
        env="math/Dataset-v0",
        num_generations=4,
        n_tasks=1,
        k=[4],
        max_completion_length=16,
        env_kwargs={"path": str(tasks)},
    )
    summary = evaluate(policy, [config], tmp_path / "run", batch_size=4)["envs"]["math/Dataset-v0"]
    assert summary["pass@1"] == 0.75 and summary["maj@4"] == 1.0  # exact strings would elect the first answer, 3
