"""`envgym eval` end to end with the tiny model on GuessNumber and a math env, through the real CLI."""

import json

import pytest
from helpers.tiny_models import tiny_model_path
from typer.testing import CliRunner

import envgym
from envgym.cli.app import app
from envgym.core import Task
from envgym.tasks import ListTaskSource

ENVS = "games/GuessNumber-v0,math/Arithmetic-v0"
RUN = [
    "eval",
    "--env",
    ENVS,
    "--num-generations",
    "2",
    "--n-tasks",
    "2",
    "--k",
    "1,2",
    "--max-completion-length",
    "6",
    "--max-turns",
    "2",
    "--batch-size",
    "4",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    result = CliRunner().invoke(app, RUN + ["--model", tiny_model_path(), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


def test_results_json_has_every_metric_per_env(run_dir):
    out, _ = run_dir
    results = json.loads((out / "results.json").read_text())
    assert results["model"] == tiny_model_path()
    assert set(results["envs"]) == set(ENVS.split(","))
    for summary in results["envs"].values():
        for key in (
            "pass@1",
            "pass@2",
            "maj@1",
            "maj@2",
            "mean_reward",
            "avg_turns",
            "avg_tool_calls",
            "avg_tokens",
            "truncation_rate",
        ):
            assert isinstance(summary[key], float), key
        assert summary["n_tasks"] == 2 and summary["n_samples"] == 4
        assert 0.0 <= summary["pass@1"] <= summary["pass@2"] <= 1.0
        assert 1.0 <= summary["avg_turns"] <= 2.0 and 0 < summary["avg_tokens"] <= 12


def test_every_sample_is_on_file_with_its_episode(run_dir):
    out, _ = run_dir
    lines = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == 8
    assert {(r["env_id"], r["task_index"], r["sample"]) for r in lines} == {
        (e, t, s) for e in ENVS.split(",") for t in range(2) for s in range(2)
    }
    assert all(r["episode"]["turns"] for r in lines)


def test_reports_are_written_and_the_html_embeds_its_plots(run_dir):
    out, output = run_dir
    assert "report:" in output and "pass@1" in output
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 2 and "<table>" in page
    assert "| games/GuessNumber-v0 |" in (out / "report.md").read_text()


def test_a_finished_run_resumes_without_playing_again(run_dir):
    out, _ = run_dir
    before = (out / "samples.jsonl").read_text()
    result = CliRunner().invoke(app, RUN + ["--model", tiny_model_path(), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "samples.jsonl").read_text() == before


def test_compare_reports_the_difference_of_two_runs(run_dir):
    out, _ = run_dir
    result = CliRunner().invoke(app, ["eval", "compare", str(out), str(out), "--json"])
    rows = json.loads(result.output)
    assert {"env", "metric", "a", "b", "delta"} <= set(rows[0])
    assert all(row["delta"] == "+0.000" for row in rows)


def test_unknown_env_ids_are_refused_with_a_hint():
    result = CliRunner().invoke(app, ["eval", "--env", "games/GuessNumbr-v0", "--model", tiny_model_path()])
    assert result.exit_code == 2 and "GuessNumber" in result.output


@pytest.fixture(scope="module")
def server_url():
    from helpers.openai_server import openai_server

    with openai_server(tiny_model_path()) as url:
        yield url


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_eval_through_a_server_reports_real_token_counts(server_url, endpoint, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--env",
            "math/Arithmetic-v0",
            "--num-generations",
            "2",
            "--n-tasks",
            "1",
            "--max-completion-length",
            "4",
            "--base-url",
            server_url,
            "--endpoint",
            endpoint,
            "--model",
            tiny_model_path(),
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "results.json").read_text())["envs"]["math/Arithmetic-v0"]
    assert 0 < summary["avg_tokens"] <= 4 and summary["n_failed"] == 0
    setup = json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])["setup"]
    assert setup["policy"]["endpoint"] == endpoint


@pytest.mark.parametrize(
    "options, complaint",
    [
        (["--enforce-eager"], "use --engine vllm"),
        (["--max-model-len", "512"], "use --engine vllm"),
        (["--endpoint", "completions"], "give --base-url"),
        (["--dtype", "float64"], "--dtype must be one of 'float32', 'bfloat16', 'float16' or 'auto'"),
    ],
)
def test_an_option_the_chosen_policy_would_ignore_is_refused(options, complaint):
    result = CliRunner().invoke(app, ["eval", "--env", "math/Arithmetic-v0", "--model", tiny_model_path()] + options)
    assert result.exit_code == 2 and complaint in result.output, result.output


def test_vllm_engine_options_carry_only_what_was_given():
    from envgym.cli.options import EngineOptions

    assert EngineOptions(engine="vllm").vllm_kwargs() == {}
    assert EngineOptions(engine="vllm", dtype="float32", enforce_eager=True, max_model_len=512).vllm_kwargs() == {
        "dtype": "float32",
        "enforce_eager": True,
        "max_model_len": 512,
    }


def test_the_vllm_backend_without_vllm_says_how_to_install_it():
    pytest.importorskip("torch")
    try:
        import vllm  # noqa: F401

        pytest.skip("vLLM is installed here")
    except ImportError:
        pass
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--env",
            "math/Arithmetic-v0",
            "--engine",
            "vllm",
            "--dtype",
            "float32",
            "--model",
            tiny_model_path(),
        ],
    )
    assert result.exit_code == 2 and "envgym[vllm]" in result.output, result.output


def test_env_kwargs_and_the_turn_limit_reach_every_env(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--env",
            "games/GuessNumber-v0",
            "--num-generations",
            "1",
            "--n-tasks",
            "1",
            "--max-completion-length",
            "4",
            "--max-turns",
            "1",
            "--env-kwargs",
            '{"high": 3}',
            "--model",
            tiny_model_path(),
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["envs"]["games/GuessNumber-v0"]["config"]["env_kwargs"] == {"high": 3, "max_turns": 1}
    assert results["envs"]["games/GuessNumber-v0"]["avg_turns"] == 1


def test_the_report_explains_the_score_with_components_cut_turns_endings_and_transcripts(run_dir):
    out, _ = run_dir
    results = json.loads((out / "results.json").read_text())
    guess = results["envs"]["games/GuessNumber-v0"]
    assert 0.0 <= guess["turn_truncation_rate"] <= 1.0 and sum(guess["finish_reasons"].values()) == 4
    report = (out / "report.md").read_text()
    assert "## games/GuessNumber-v0: why this score" in report and "turns cut by the token budget" in report
    assert "### Best sample" in report and "### Worst sample" in report and "[assistant]" in report
    assert "games/GuessNumber-v0: why this score</h2>" in (out / "report.html").read_text()


BAD_EVAL_INPUTS = {
    "env_id_typo": (["--env", "games/GuesNumber-v0"], ["Did you mean 'games/GuessNumber-v0'"]),
    "env_kwarg_typo": (
        ["--env", "games/GuessNumber-v0", "--env-kwargs", '{"hihg": 3}'],
        ["takes no argument 'hihg'", "it accepts"],
    ),
    "missing_model": (
        ["--env", "games/GuessNumber-v0", "--model", "/no/such/model"],
        ["cannot find model '/no/such/model'", "a training checkpoint"],
    ),
    "unknown_suite_name": (["--suite", "no-such-suite"], ["suite file no-such-suite does not exist", "default"]),
}


@pytest.mark.parametrize("case", sorted(BAD_EVAL_INPUTS))
def test_a_bad_eval_input_is_one_line_before_any_model_library_loads(case, tmp_path):
    from helpers.cli_run import run_envgym

    args, expected = BAD_EVAL_INPUTS[case]
    run = run_envgym("eval", *args, "--out", str(tmp_path / "eval"), cwd=tmp_path)
    assert run.returncode == 2 and len(run.lines) == 1, run.lines
    assert "Traceback" not in run.lines[0] and all(text in run.lines[0] for text in expected), run.lines
    assert "transformers" not in run.imported and "torch" not in run.imported


def test_a_suite_yaml_error_names_the_file_and_line(tmp_path):
    from helpers.cli_run import run_envgym

    (tmp_path / "s.yaml").write_text("envs:\n  - {env: games/GuessNumber-v0, num_generations: 2\n")
    run = run_envgym("eval", "--suite", "s.yaml", cwd=tmp_path)
    assert run.returncode == 2 and len(run.lines) == 1 and run.lines[0].startswith("error: s.yaml:3: YAML syntax error")


def test_results_json_says_what_the_trust_record_says_of_each_env(run_dir):
    from envgym.audit.record import audit_status

    out, _ = run_dir
    results = json.loads((out / "results.json").read_text())
    assert results["audit"] == {env: audit_status(env) for env in ENVS.split(",")}


class StepCrashes(envgym.Env):
    """Every step raises, as an env whose sandbox is down: every sample fails (an error, never a score)."""

    def __init__(self):
        self.tasks = ListTaskSource([Task("t", [{"role": "user", "content": "Say 7."}], "7")])

    def _reset(self, task, options):
        return task.prompt(), {}

    def _step(self, action):
        raise RuntimeError("sandbox infra_error")


def test_eval_exits_non_zero_when_every_sample_of_an_env_failed(scratch_registry, tmp_path):
    envgym.register("test/StepCrashes-v0", StepCrashes)
    args = ["eval", "--env", "test/StepCrashes-v0", "--num-generations", "2", "--n-tasks", "1"]
    args += ["--max-completion-length", "2", "--model", tiny_model_path(), "--out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "every sample of test/StepCrashes-v0 failed" in result.output and "sandbox infra_error" in result.output
    assert json.loads((tmp_path / "results.json").read_text())["envs"]["test/StepCrashes-v0"]["n_failed"] == 2
