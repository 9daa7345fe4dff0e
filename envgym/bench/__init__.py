"""Benchmarks behind `envgym bench ...` that belong to the core (others live with their subsystem)."""
