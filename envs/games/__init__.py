"""Multi-turn games with per-turn rewards."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the built-in games."""
    register(
        "games/GuessNumber-v0",
        "envgym.envs.games.guess_number:GuessNumber",
        max_turns=10,
        description="Guess a hidden integer in [1, 100] from higher/lower feedback; reward 1 for finding it.",
    )
    register(
        "games/Wordle-v0",
        "envgym.envs.games.wordle:Wordle",
        max_turns=12,
        description="Find a hidden five-letter word in 6 guesses from letter feedback; reward 1 for solving it.",
    )
    register(
        "games/Mastermind-v0",
        "envgym.envs.games.mastermind:Mastermind",
        max_turns=16,
        description="Break a 4-peg, 6-colour code in 10 guesses from black/white pegs; reward 1 for solving it.",
    )
    register(
        "games/TicTacToe-v0",
        "envgym.envs.games.tictactoe_selfplay:make_tictactoe",
        max_turns=10,
        description="TicTacToe against a scripted opponent (random, greedy or minimax), or opponent='self' (two "
        "seats); +1 win, 0 draw, -1 loss.",
        opponent="greedy",
    )
    register(  # the same game as TicTacToe-v0 with opponent="self", under its own id so `envgym audit` covers it
        "games/TicTacToeSelfPlay-v0",
        "envgym.envs.games.tictactoe_selfplay:TicTacToeSelfPlay",
        max_turns=10,
        description="TicTacToe self-play: seats X and O, both played by the policy; per seat +1 win, 0 draw, -1 loss.",
    )
    register(
        "games/DescribeGuess-v0",
        "envgym.envs.games.describe_guess:DescribeGuess",
        max_turns=8,
        description="Two seats: a describer clues a secret word, a guesser names it among candidates; +1 to both "
        "for a right guess, -1 to a seat that breaks the rules.",
    )
    register(
        "games/Bandit-v0",
        "envgym.envs.games.bandit:Bandit",
        description="5-armed Bernoulli bandit, 20 pulls (one per turn, the episode's length); reward = payoff.",
    )
