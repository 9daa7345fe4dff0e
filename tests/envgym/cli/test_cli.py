import json

import pytest
from typer.testing import CliRunner

from envgym.cli.app import app

runner = CliRunner()


def test_list_json_has_guess_number():
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0
    ids = [entry["id"] for entry in json.loads(result.stdout)]
    assert "games/GuessNumber-v0" in ids
    assert all({"id", "description"} <= set(entry) for entry in json.loads(result.stdout))


def test_play_lets_a_person_win_guess_number():
    import envgym

    env = envgym.make("games/GuessNumber-v0")
    env.reset(seed=3)
    secret = env.unwrapped.secret
    result = runner.invoke(app, ["play", "games/GuessNumber-v0", "--seed", "3"], input=f"<guess>{secret}</guess>\n\n")
    assert result.exit_code == 0, result.stdout
    assert "Correct!" in result.stdout and "terminated" in result.stdout


def test_play_quits_on_end_of_input():
    result = runner.invoke(app, ["play", "games/GuessNumber-v0"], input="")
    assert result.exit_code == 0 and "quit" in result.stdout


def test_play_unknown_env_is_a_clear_error():
    result = runner.invoke(app, ["play", "games/GuesNumber-v0"])
    assert result.exit_code == 2 and "Did you mean" in result.stdout


def test_bench_env_prints_json_last():
    result = runner.invoke(app, ["bench", "env", "--quick", "--json"])
    assert result.exit_code == 0, result.stdout
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["single"]["episodes_per_s"] > 0
    assert set(data["vector"]) == {"sync", "thread", "process"}
    assert isinstance(data["overhead"]["single_us_per_step"], float)
    assert 0 < data["import_s"] < 10


def test_python_dash_m_envgym_runs_the_cli():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "envgym", "list", "--json"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "games/GuessNumber-v0" in {entry["id"] for entry in json.loads(result.stdout)}


def test_envgym_help_lists_every_command_and_imports_none_of_their_modules():
    """``envgym --help`` shows each command's help line from the lazy table; the modules it lists stay unloaded."""
    import subprocess
    import sys

    from envgym.cli.app import COMMANDS

    probe = (
        "import json, runpy, sys\n"
        "sys.argv = ['envgym', '--help']\n"
        "try:\n    runpy.run_module('envgym', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('envgym.'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    *shown, loaded = result.stdout.strip().splitlines()
    for name in [*COMMANDS, "list", "play", "serve", "bench", "sandbox"]:
        assert any(line.strip("│ ").startswith(f"{name} ") for line in shown), name
    above_the_contract = ("envgym.cli", "envgym.bench", "envgym.server", "envgym.agents", "envgym.envs", "envgym.audit")
    loaded_above = [m for m in json.loads(loaded) if m.startswith(above_the_contract)]
    assert loaded_above == ["envgym.cli", "envgym.cli.app", "envgym.cli.lazy"]


@pytest.mark.parametrize("group", ["COMMANDS", "SERVE_COMMANDS", "BENCH_COMMANDS", "SANDBOX_COMMANDS"])
def test_each_lazy_help_line_is_how_its_command_describes_itself(group):
    """The listing's line cannot drift from the command: the loaded command's help starts with it."""
    import envgym.cli.app as root
    from envgym.cli.lazy import build_command

    for name, entry in getattr(root, group).items():
        command = build_command(name, entry.load())
        assert " ".join(command.help.split()).startswith(entry.help.rstrip(".")), (name, command.help)
