"""`python -m search` runs the ctxsearch command line."""

from search.cli import main

main()
