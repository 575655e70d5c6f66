"""Retrieval quality on a judged collection: queries with graded relevance judgements
(BEIR's layout, or a folder of documents beside its queries and judgements), scored in
each search mode through the user's own index, so static and contextual retrieval can be
compared on the user's data (`ctxsearch eval-index`)."""
