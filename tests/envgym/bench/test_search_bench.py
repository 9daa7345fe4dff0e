"""`envgym bench search` runs end to end and ends with one JSON line holding every number."""

import json

from helpers.extras import require
from typer.testing import CliRunner

from envgym.cli.app import app


def test_bench_search_quick_prints_its_numbers_as_the_last_json_line():
    require("search")
    result = CliRunner().invoke(app, ["bench", "search", "--quick", "--json", "--num-docs", "1000"])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output.strip().splitlines()[-1])
    assert numbers["num_docs"] == 1000 and numbers["backend"] == "tantivy"
    assert numbers["in_process"]["name_queries_per_s"] > 0 and numbers["in_process"]["name_hit_at_1"] == 1.0
    assert numbers["server"]["name_queries_per_s_batch_100"] > 0
    assert numbers["env"]["multihop_qa"]["oracle_mean_reward"] == 1.0
    assert numbers["env"]["shop_orders"]["oracle_mean_reward"] == 1.0
