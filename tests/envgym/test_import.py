import subprocess
import sys


def test_core_import_does_not_pull_torch_or_subsystems():
    code = (
        "import sys, envgym, envgym.wrappers, envgym.tasks, envgym.utils; "
        "heavy = [m for m in ('torch', 'transformers', 'envgym.agents', 'envgym.sandbox', 'envgym.envs.games.guess_number') "  # noqa: E501 -- data, kept whole
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
