"""Describe and guess: a right guess pays both seats, a broken rule costs only the seat that broke it."""

import pytest

import envgym
from envgym.envs.games.describe_guess import DESCRIBER, GUESSER, WORDS
from envgym.envs.games.taboo import meta_clue, names_word
from envgym.utils import check_env


def start(index=0, **kwargs):
    env = envgym.make("games/DescribeGuess-v0", **kwargs)
    env.reset(seed=index, options={"task_index": index})
    return env, env.unwrapped


def wrong_candidate(game):
    return next(word for word in game.candidate_words if word != game.secret)


def test_only_the_describer_is_told_the_secret_word():
    env = envgym.make("games/DescribeGuess-v0")
    messages, info = env.reset(seed=3, options={"task_index": 3})
    secret = env.unwrapped.secret
    assert info["agent"] == DESCRIBER and f"The secret word is: {secret}" in messages[0]["content"]
    messages, _, _, _, info = env.step("<clue>you will know it</clue>")
    assert info["agent"] == GUESSER and "secret word is" not in messages[0]["content"]
    assert "Your partner's clue: you will know it" in messages[0]["content"]


def test_a_right_guess_pays_both_seats():
    env, game = start()
    env.step("<clue>a hint</clue>")
    _, reward, terminated, _, info = env.step(f"<guess>{game.secret.upper()}</guess>")
    assert terminated and reward == 1.0 and info["correct"] is True
    assert info["rewards"] == {DESCRIBER: 1.0, GUESSER: 1.0}


def test_a_wrong_guess_gives_another_round_then_both_get_nothing():
    env, game = start(rounds=2)
    env.step("<clue>a hint</clue>")
    messages, reward, terminated, _, info = env.step(f"<guess>{wrong_candidate(game)}</guess>")
    assert not terminated and reward == 0.0 and info["agent"] == DESCRIBER
    assert "which is wrong" in messages[0]["content"]
    messages, _, _, _, _ = env.step("<clue>another hint</clue>")
    assert messages[0]["content"].startswith(f"No, it is not {wrong_candidate(game)}. Round 2.")
    _, reward, terminated, _, info = env.step(f"<guess>{wrong_candidate(game)}</guess>")
    assert terminated and info["correct"] is False and info["rewards"] == {DESCRIBER: 0.0, GUESSER: 0.0}


@pytest.mark.parametrize("clue", ["no tag at all", "<clue>  </clue>", "<clue>" + "x" * 301 + "</clue>"])
def test_a_malformed_clue_costs_the_describer_only(clue):
    env, _ = start()
    _, reward, terminated, _, info = env.step(clue)
    assert terminated and reward == -1.0 and info["action_valid"] is False
    assert info["rewards"] == {DESCRIBER: -1.0, GUESSER: 0.0}


@pytest.mark.parametrize(
    "spelling",
    [
        "{w}",
        "{W}",
        "{w}s",
        "{spaced}",
        "{dashed}",
        "<clue>fine</clue> {w}",
        "{r}",
        "{R}",
        "{r_spaced}",
        "{rotated}",
        "{sorted}",
    ],
)
def test_naming_the_secret_word_anywhere_costs_the_describer(spelling):
    env, game = start()
    word = game.secret
    text = spelling.format(
        w=word,
        W=word.upper(),
        spaced=" ".join(word),
        dashed="-".join(word.upper()),
        r=word[::-1],
        R=word[::-1].upper(),
        r_spaced=" ".join(word[::-1]),
        rotated=word[1:] + word[0],
        sorted="".join(sorted(word)),
    )
    text = text if "<clue>" in text else f"<clue>it is {text}</clue>"
    _, reward, terminated, _, info = env.step(text)
    assert terminated and reward == -1.0 and info["action_error"] == "Your message contains the secret word."


@pytest.mark.parametrize("guess", ["<guess>notacandidate</guess>", "I think it is the first one", "<guess></guess>"])
def test_a_guess_that_is_no_candidate_costs_the_guesser_only(guess):
    env, _ = start()
    env.step("<clue>a hint</clue>")
    _, reward, terminated, _, info = env.step(guess)
    assert terminated and reward == -1.0 and info["action_valid"] is False
    assert info["rewards"] == {DESCRIBER: 0.0, GUESSER: -1.0}


def test_the_taboo_reads_word_starts_not_word_insides():
    assert names_word("Apples are red", "apple") and names_word("a p p l e", "apple")
    assert names_word("ＡＰＰＬＥ", "apple")  # full-width letters fold to ASCII
    assert not names_word("pineapple", "apple") and not names_word("map plea", "apple")
    assert names_word("taob", "boat") and names_word("t-a-o-b", "boat") and names_word("a bota", "boat")
    assert not names_word("boa at sea", "boat") and not names_word("tabor", "boat")


def test_every_reference_clue_keeps_the_taboo_and_talks_about_the_thing():
    for words in WORDS.values():
        for word, clue in words.items():
            assert not names_word(clue, word) and meta_clue(clue, list(words), word) is None, (word, clue)


def test_no_reference_clue_names_another_word_of_the_game_in_a_disguise():
    words = [w for category in WORDS.values() for w in category]
    for category in WORDS.values():
        for word, clue in category.items():
            named = [other for other in words if other != word and names_word(clue, other)]
            # only plain mentions: "doctor" in the apple's proverb, "car" starting "carrying", "airplane" in pilot
            assert all(other in clue for other in named), (word, named)


@pytest.mark.parametrize(
    "disguise",
    [
        "c a t", "C-A-T", "c1a2t3", "Сat", "ｃａｔ", "c\u200ba\u200bt", "tac", "act", "a c t", "c4t", "(@t",
        "charlie alfa tango", "see ay tee", "Y2F0", "63 61 74", "99 97 116", "3 1 20", "-.-. .- -", "png",
        "Cute Animal Thing", "gato", "le chat", "Katze",
    ],
)  # fmt: skip
def test_the_taboo_catches_the_secret_word_in_disguise(disguise):
    assert names_word(f"<clue>it is a {disguise}</clue>", "cat")


@pytest.mark.parametrize(
    "clue", ["the second candidate", "it rhymes with log", "starts with d", "three letters", "not cat, not cow"]
)
def test_a_clue_about_the_word_or_the_list_is_refused(clue):
    env, _ = start()
    env.unwrapped.secret, env.unwrapped.candidate_words = "dog", ["cat", "dog", "cow", "horse"]
    _, reward, terminated, _, info = env.step(f"<clue>{clue}</clue>")
    assert terminated and reward == -1.0 and info["action_error"].startswith("Not allowed: the clue")


def test_the_seats_see_the_candidates_in_independent_orders():
    env = envgym.make("games/DescribeGuess-v0")
    differ = 0
    for index in range(40):
        task = env.unwrapped.tasks.get(index)
        describer = task.messages[0]["content"].split("candidates are: ")[1].split(".")[0]
        guesser = task.metadata["guesser_prompt"].split("candidates are: ")[1].split(".")[0]
        assert sorted(describer.split(", ")) == sorted(guesser.split(", "))
        differ += describer != guesser
    assert differ > 20


def test_reference_play_wins_in_the_first_round_on_every_task_sampled():
    env = envgym.make("games/DescribeGuess-v0")
    for index in range(25):
        env.reset(seed=index, options={"task_index": index})
        env.step(env.reference_action())
        _, _, terminated, _, info = env.step(env.reference_action())
        assert terminated and info["rewards"] == {DESCRIBER: 1.0, GUESSER: 1.0}


def test_describe_guess_passes_check_env():
    check_env(
        envgym.make("games/DescribeGuess-v0"),
        probe_actions=("<clue>small</clue>", "<guess>cat</guess>", "", "<clue>big</clue>", "<guess>dog</guess>"),
    )
