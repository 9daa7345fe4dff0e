"""QA scoring: token F1 gives partial credit to one answer that is part of the gold, never to a list of them."""

import pytest

from envgym.verifiers.qa import exact_match, is_candidate_list, token_f1

NAMES = ["Velmora", "Tarsk", "Zanthe", "Brivel", "Kordun", "Ostrava", "Melk"]


def test_a_part_of_the_gold_keeps_its_partial_credit():
    assert token_f1("Barack Obama", "President Barack Hussein Obama") == pytest.approx(2 / 3)


def test_an_answer_longer_than_the_gold_earns_nothing():
    assert token_f1("Velmora City", "Velmora") == 0.0


@pytest.mark.parametrize("separator", [", ", "; ", " / ", " | ", " & ", "\n", " or ", " and ", " and/or ", " nor "])
def test_candidates_joined_by_a_list_separator_earn_nothing(separator):
    assert token_f1(separator.join(["Tarsk", "Velmora"]), "Velmora City") == 0.0


def test_a_separator_that_the_gold_has_is_allowed():
    assert token_f1("Procter and Gamble", "Procter and Gamble Company") == pytest.approx(6 / 7)
    assert not is_candidate_list("Washington, D.C.", "Washington, D.C.")


def test_listing_every_name_of_the_kind_earns_less_than_one_honest_wrong_name():
    gold = "Velmora"
    listed = [", ".join(NAMES), " ".join(NAMES), " or ".join(NAMES), "Velmora Tarsk"]
    honest_wrong = token_f1("Tarsk", gold)
    assert all(token_f1(answer, gold) <= honest_wrong == 0.0 for answer in listed)


def test_hedging_two_names_earns_less_than_naming_the_right_one():
    assert token_f1("Velmora Tarsk", "Velmora City") < token_f1("Velmora", "Velmora City") < 1.0


def test_a_huge_answer_scores_zero():
    assert token_f1("Velmora " * 20_000, "Velmora") == 0.0 and exact_match("Velmora " * 20_000, "Velmora") == 0.0


def test_the_best_gold_counts_and_separator_words_inside_names_are_not_separators():
    assert token_f1("Oregon", ["Salem", "Oregon"]) == 1.0 and token_f1("Andorra", "Andorra") == 1.0
