"""``envgym bench train``: bad options are refused before anything runs; the pairings really train each side
with the engine they are named after (TRL's colocated vLLM included; `pytest -m vllm` in .venv-vllm)."""

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from envgym.cli import app


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


@pytest.mark.vllm
def test_both_pairings_train_each_side_with_the_engine_they_are_named_after():
    pytest.importorskip("vllm")
    pytest.importorskip("trl")
    result = CliRunner().invoke(app, ["bench", "train", "--steps", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    pairings = report["pairings"]
    assert report["targets"]["pairings_measured"] == ["transformers", "vllm"]
    assert pairings["transformers"]["envgym"]["generator"] == "TransformersPolicy"
    assert pairings["transformers"]["trl"]["generator"] == "LlamaForCausalLM"
    assert pairings["vllm"]["envgym"]["generator"] == "VLLMPolicy"
    assert pairings["vllm"]["trl"]["generator"] == "LLM (colocate)"
    for pairing in pairings.values():
        for side in ("envgym", "trl"):
            assert len(pairing[side]["step_seconds"]) == 2 and pairing[side]["seconds_per_step"] > 0
        assert pairing["speed_ratio"] == pairing["envgym"]["seconds_per_step"] / pairing["trl"]["seconds_per_step"]
