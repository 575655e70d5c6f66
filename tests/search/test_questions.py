"""Telling a question from keywords (search.questions)."""

import pytest

from search.questions import is_question


@pytest.mark.parametrize(
    "query",
    [
        "how do I run work after the response is sent",
        "Why does my regex take forever",
        "what is catastrophic backtracking",
        "can an adult learn to name notes by ear",
        "Is it safe to delete the WAL file",
        "  where's the config kept",
        "deer stripped a ring around my tree, will it die?",
        "catastrophic backtracking?",
    ],
)
def test_questions(query):
    assert is_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "catastrophic backtracking",
        "background tasks after response",
        "howto logging",  # a word that only starts like a question word
        "I want to read a csv file",
        "savings account interest rates",
        "",
        "   ",
        "404 what",
        "?!",
    ],
)
def test_not_questions(query):
    assert is_question(query) == query.strip().endswith("?")
