"""``envgym check-template MODEL``: the report of :func:`envgym.agents.engines.templates.check_template` on a
tokenizer folder, and one line for a model that is not there."""

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("trl")

from helpers.chat_templates import family_tokenizers
from typer.testing import CliRunner

from envgym.cli.app import app


def test_check_template_command_reads_a_tokenizer_folder_and_prints_json(tmp_path):
    family_tokenizers()["qwen3"].save_pretrained(tmp_path)
    result = CliRunner().invoke(app, ["check-template", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["tool_format"] == "hermes" and report["turns"][1]["ok"] is False
    assert report["verdict"].startswith("not prefix-preserving: earlier <think> is stripped")


def test_check_template_command_explains_a_missing_model(tmp_path):
    result = CliRunner().invoke(app, ["check-template", str(tmp_path / "absent")])
    assert result.exit_code == 2 and "cannot load the tokenizer" in result.output
