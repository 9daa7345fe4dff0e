"""Verifiers: turn a model's answer into a reward you can trust.

- :mod:`envgym.verifiers.math`: ``extract_answer``, ``equivalent`` (fast paths, then sympy in worker
  processes with a hard timeout), ``grade``; tested against Math-Verify's public cases.
- :mod:`envgym.verifiers.qa`: SQuAD-normalized exact match and token F1 against several golds.
- :mod:`envgym.verifiers.choice`: multiple-choice letter extraction; numeric answers with a tolerance.
- :mod:`envgym.verifiers.vote`: majority vote over a group of responses (label-free RL, TTRL).
- :mod:`envgym.verifiers.judge`: an LLM judge over any OpenAI-compatible endpoint.
- :mod:`envgym.verifiers.calls`: function calls against gold calls (schemas in OpenAI, MCP and BFCL's dialect;
  BFCL's rules or envgym's default; calls in order or any order; irrelevance); checked against BFCL's checker.

Import the submodule you need; this package imports nothing heavy.
"""
