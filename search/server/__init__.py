"""The HTTP side: the JSON API and search page over one `Searcher`, and a load tester."""
