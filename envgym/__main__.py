"""``python -m envgym ...`` runs the same command line as ``envgym ...``."""

from envgym.cli.app import main

main()
