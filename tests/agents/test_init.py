"""`envgym.agents` itself: the names users import from it, and an import that stays torch-free."""

import subprocess
import sys

import pytest


def test_the_documented_names_import_from_the_package():
    pytest.importorskip("torch")
    from envgym.agents import EnvMixture, GRPOConfig, GRPOTrainer, evaluate
    from envgym.agents.evaluation.evaluate import evaluate as deep_evaluate
    from envgym.agents.training.trainer import GRPOTrainer as DeepTrainer

    assert GRPOTrainer is DeepTrainer and evaluate is deep_evaluate
    assert GRPOConfig.__module__ == "envgym.agents.training.config"
    assert EnvMixture.__module__ == "envgym.agents.training.mixture"


def test_an_unknown_name_is_an_attribute_error():
    import envgym.agents

    with pytest.raises(AttributeError, match="no attribute 'trainer'"):
        envgym.agents.trainer  # noqa: B018 - the old flat module path is gone, not silently aliased


def test_importing_the_package_loads_no_torch():
    code = "import sys, envgym.agents; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
