"""docs/rewards.md stays true: its Python runs and every YAML example is a valid spec."""

import re
from pathlib import Path

import pytest
import yaml

from envgym.rewards import RewardSpec

PAGE = (Path(__file__).parents[3] / "docs" / "rewards.md").read_text()


def test_the_python_example_runs():
    (block,) = re.findall(r"```python\n(.*?)```", PAGE, re.DOTALL)
    exec(compile(block, "rewards.md", "exec"), {})


@pytest.mark.parametrize("block", re.findall(r"```yaml\n(.*?)```", PAGE, re.DOTALL))
def test_every_yaml_example_is_a_valid_spec(block):
    RewardSpec.from_dict(yaml.safe_load(block)["reward"])
