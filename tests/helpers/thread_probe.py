"""A benchmark worker for tests: prints the OpenMP threads its process was given, as one JSON line."""

import json
import os


def print_threads() -> None:
    print(json.dumps({"omp": os.environ["OMP_NUM_THREADS"]}))
