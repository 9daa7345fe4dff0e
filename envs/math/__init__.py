"""Math environments: procedural arithmetic and algebra, and any math dataset."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the math envs."""
    register(
        "math/Arithmetic-v0",
        "envgym.envs.math.arithmetic:Arithmetic",
        max_turns=1,
        description="Evaluate an arithmetic expression exactly (procedural; difficulty 1-5); answer in \\boxed{}.",
    )
    register(
        "math/Algebra-v0",
        "envgym.envs.math.algebra:Algebra",
        max_turns=1,
        description="Solve linear equations, quadratics and 2x2 systems (procedural; difficulty 1-5).",
    )
    register(
        "math/Dataset-v0",
        "envgym.envs.math.dataset:MathDataset",
        max_turns=1,
        description="Math problems from JSONL/Parquet/HF datasets (path=... or hf=...; presets gsm8k, math).",
    )
    register(
        "math/Calculator-v0",
        "envgym.envs.math.calculator:Calculator",
        max_turns=4,
        description="Multi-digit arithmetic with a calculator tool (<calc>expression</calc>); answer in \\boxed{}.",
    )
    register(
        "math/PythonTool-v0",
        "envgym.envs.math.python_tool:PythonTool",
        max_turns=8,
        description="Computation-heavy math with a sandboxed Python tool (<python>code</python>); answer in \\boxed{}.",
    )
