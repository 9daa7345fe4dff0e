"""``envgym bench train``: bad options are refused before anything runs; both sides get the same settings where
the defaults differ; a peer that fails is a skipped pairing with its reason, ours failing is a failure; the
pairings really train each side with the engine they are named after (TRL's colocated vLLM included, where it
works on the machine; `pytest -m vllm` in .venv-vllm)."""

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from envgym.cli.app import app


def test_an_unknown_engine_is_refused_with_the_choices():
    result = CliRunner().invoke(app, ["bench", "train", "--engine", "sglang"])
    assert result.exit_code == 2
    assert "transformers, vllm or all" in result.output


def test_one_step_is_refused_because_the_first_is_not_timed():
    result = CliRunner().invoke(app, ["bench", "train", "--steps", "1"])
    assert result.exit_code == 2
    assert "--steps must be >= 2" in result.output


def test_the_vllm_pairing_without_vllm_says_how_to_get_it():
    pytest.importorskip("trl")
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("where vLLM is installed the pairing runs")
    result = CliRunner().invoke(app, ["bench", "train", "--engine", "vllm"])
    assert result.exit_code == 2
    assert "setup-vllm.sh" in result.output


def test_trl_gets_our_settings_where_its_defaults_differ():
    trl = pytest.importorskip("trl")
    from envgym.bench.train import MATCHED_SETTINGS, envgym_config, trl_arguments

    ours = envgym_config(2)
    for engine in ("transformers", "vllm"):
        theirs = trl.GRPOConfig(**trl_arguments("unused", 2, engine))
        assert (
            theirs.gradient_checkpointing is ours.gradient_checkpointing is MATCHED_SETTINGS["gradient_checkpointing"]
        )
    assert theirs.vllm_importance_sampling_correction is ours.importance_sampling_correction is False


def fake_workers(monkeypatch, failing_side):
    """bench train with workers that return numbers at once, ``failing_side``'s dying as TRL's vLLM sync does."""
    pytest.importorskip("trl")
    from envgym.bench import train as train_bench
    from envgym.bench.report import WorkerFailed

    stderr = (
        'Traceback (most recent call last):\n  File "vllm_generation.py", line 511, in sync_weights\n'
        "[rank0]: AttributeError: 'Parameter' object has no attribute 'weight_loader'\n"
    )

    def worker(side, engine, model_path, steps, nproc=1):
        if side == failing_side:
            raise WorkerFailed(f"{side} ({engine})", 1, stderr)
        return {"seconds_per_step": 1.0, "step_seconds": [2.0, 1.0], "peak_rss_mb": 100.0, "generator": "fake"}

    monkeypatch.setattr(train_bench, "_run_worker", worker)
    monkeypatch.setattr(train_bench, "build_bench_model", lambda path: str(path))
    return CliRunner().invoke(app, ["bench", "train", "--engine", "transformers", "--steps", "2", "--json"])


def test_a_peer_that_fails_is_a_skipped_pairing_with_the_reason_and_our_numbers(monkeypatch):
    result = fake_workers(monkeypatch, failing_side="trl")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    reason = report["skipped"]["trl-transformers"]
    assert "AttributeError: 'Parameter' object has no attribute 'weight_loader'" in reason
    assert report["pairings"]["transformers"]["trl"] == {"skipped": reason}
    assert report["pairings"]["transformers"]["envgym"]["seconds_per_step"] == 1.0
    assert report["targets"]["pairings_measured"] == [] and report["targets"]["met"] is None
    assert report["settings"] == {"gradient_checkpointing": False, "importance_sampling_correction": False}


def test_our_side_failing_fails_the_benchmark(monkeypatch):
    result = fake_workers(monkeypatch, failing_side="envgym")
    assert result.exit_code != 0
    assert "weight_loader" in str(result.exception)


def test_the_reason_names_trls_weight_sync_when_that_is_where_it_died():
    from envgym.bench.report import WorkerFailed
    from envgym.bench.train import peer_failure_reason

    failure = WorkerFailed(
        "trl (vllm)", 1, '  File "x.py", line 1, in sync_weights\nAttributeError: no weight_loader\n'
    )
    assert peer_failure_reason("vllm", failure) == (
        "TRL's vLLM colocate weight sync failed on this machine: AttributeError: no weight_loader"
    )


@pytest.mark.vllm
def test_both_pairings_train_each_side_with_the_engine_they_are_named_after():
    """Where TRL's colocated vLLM fails on this machine (its weight sync on vLLM's CPU backend with oneDNN), the
    pairing still measures our side and says why TRL's was skipped."""
    pytest.importorskip("vllm")
    pytest.importorskip("trl")
    result = CliRunner().invoke(app, ["bench", "train", "--steps", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    pairings = report["pairings"]
    assert pairings["transformers"]["envgym"]["generator"] == "TransformersPolicy"
    assert pairings["transformers"]["trl"]["generator"] == "LlamaForCausalLM"
    assert pairings["vllm"]["envgym"]["generator"] == "VLLMPolicy"
    if "trl-vllm" in report["skipped"]:
        assert report["skipped"]["trl-vllm"].startswith("TRL's vLLM colocate")
        assert pairings["vllm"]["trl"] == {"skipped": report["skipped"]["trl-vllm"]}
        assert report["targets"]["pairings_measured"] == ["transformers"]
    else:
        assert pairings["vllm"]["trl"]["generator"] == "LLM (colocate)"
        assert report["targets"]["pairings_measured"] == ["transformers", "vllm"]
    for pairing in pairings.values():
        for side in ("envgym", "trl"):
            if "skipped" not in pairing[side]:
                assert len(pairing[side]["step_seconds"]) == 2 and pairing[side]["seconds_per_step"] > 0
        if "speed_ratio" in pairing:
            assert pairing["speed_ratio"] == pairing["envgym"]["seconds_per_step"] / pairing["trl"]["seconds_per_step"]


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--async-k", "0,2", "--async-k takes staleness values >= 1"),
        ("--async-k", "two", "--async-k takes staleness values >= 1"),
        ("--nproc", "0", "--nproc must be >= 1"),
    ],
)
def test_bad_scaling_options_are_refused_before_anything_runs(option, value, message):
    result = CliRunner().invoke(app, ["bench", "train", option, value])
    assert result.exit_code == 2
    assert message in result.output


def test_the_async_section_trains_the_recipe_synchronously_and_at_each_staleness(tmp_path):
    pytest.importorskip("transformers")
    from helpers.tiny_models import tiny_model_path

    from envgym.bench.train import bench_async

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(
        f"env: math/Arithmetic-v0\nmodel: {tiny_model_path()}\nnum_generations: 2\nnum_tasks_per_step: 1\n"
        "max_completion_length: 4\nseed: 0\n"
    )
    result = bench_async(str(recipe), 3, [2])
    sync, async_ = result["runs"]["sync"], result["runs"]["k=2"]
    assert sync["staleness"] == [0, 0, 0] and async_["staleness"] == [0, 1, 2]
    assert len(sync["rewards"]) == len(async_["step_seconds"]) == 3
    assert async_["speedup"] == pytest.approx(sum(sync["step_seconds"]) / sum(async_["step_seconds"]))
