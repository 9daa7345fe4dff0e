"""Benchmarks behind `envgym bench`: the rollout loop's overhead (rollout_bench), training throughput against TRL
(train_bench), and how fast a recipe learns (learn_bench, learn_bench_tool for the multi-turn tool env).

Benchmarks sit on top of everything else; nothing in the package imports them.
"""
