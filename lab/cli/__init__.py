"""`ctxsearch lab`: the lab's benchmark and research commands, as one group.

The product never imports this: it finds the group through the `ctxsearch.commands`
entry point and loads it only when it runs. The names these commands had at the top
level (`ctxsearch eval`, `ctxsearch bench`, ...) are `ctxsearch.hidden_commands` entry
points to the same commands, so scripts written for them keep working.
"""

from __future__ import annotations

import click

from lab.cli.bench import bench
from lab.cli.loadtest import loadtest
from lab.cli.research import eval_command, neighbours, polysemy, sts, tune_fusion, wic
from lab.cli.words import classify_command, words_command


@click.group()
def lab() -> None:
    """Measure what context buys: retrieval, similarity and word benchmarks, and speed.

    \b
    The research commands compare static and contextual vectors (and classic word
    vectors) on public data sets; the benchmarks time ctxsearch against baselines of
    the same run. Their plots and statistics need pip install 'ctxsearch[lab]'.

    \b
    Examples:
      ctxsearch lab eval sample_corpus
      ctxsearch lab polysemy bank "We sat on the bank." "The bank approved the loan."
      ctxsearch lab bench --only encoding,startup
    """


for command, name in (
    (eval_command, "eval"),
    (tune_fusion, "tune-fusion"),
    (sts, "sts"),
    (wic, "wic"),
    (polysemy, "polysemy"),
    (neighbours, "neighbours"),
    (words_command, "words"),
    (classify_command, "classify"),
    (bench, "bench"),
    (loadtest, "loadtest"),
):
    lab.add_command(command, name)
