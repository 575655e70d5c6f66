"""Splitting a document's text into passages: its structure (headings, pages,
definitions) first, then token windows inside each section."""
