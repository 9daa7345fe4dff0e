"""A few stdin/stdout problems in the CodeContests shape, so code/StdIO-v0 works without a dataset."""

SAMPLE_PROBLEMS = [
    {
        "name": "sum-two",
        "description": "Read two integers a and b on one line and print a + b.",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["-5 5\n", "1000000000 1000000000\n"], "output": ["0\n", "2000000000\n"]},
    },
    {
        "name": "reverse-words",
        "description": "Read one line of words and print them in reverse order.",
        "public_tests": {"input": ["a b c\n"], "output": ["c b a\n"]},
        "private_tests": {"input": ["hello\n", "x y\n"], "output": ["hello\n", "y x\n"]},
    },
    {
        "name": "count-evens",
        "description": "The first line holds n; the second n integers. Print how many are even.",
        "public_tests": {"input": ["3\n1 2 4\n"], "output": ["2\n"]},
        "private_tests": {"input": ["1\n7\n", "5\n0 0 1 1 2\n"], "output": ["0\n", "3\n"]},
    },
    {
        "name": "max-subarray",
        "description": "The first line holds n; the second n integers. Print the largest sum "
        "of a non-empty contiguous subarray.",
        "public_tests": {"input": ["5\n-2 1 -3 4 -1\n"], "output": ["4\n"]},
        "private_tests": {"input": ["3\n-3 -1 -2\n", "4\n1 2 3 4\n"], "output": ["-1\n", "10\n"]},
    },
]

SAMPLE_SOLUTIONS = {
    "sum-two": "a, b = map(int, input().split())\nprint(a + b)",
    "reverse-words": "print(' '.join(input().split()[::-1]))",
    "count-evens": "input()\nprint(sum(int(x) % 2 == 0 for x in input().split()))",
    "max-subarray": (
        "input()\nbest, run = None, 0\nfor x in map(int, input().split()):\n    run = max(x, run + x) "
        "if best is not None else x\n    best = run if best is None else max(best, run)\nprint(best)"
    ),
}
