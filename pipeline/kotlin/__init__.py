"""Kotlin sources into the same chunks as Java's (issue 29): read with py-tree-sitter and the Kotlin grammar.

`chunker.chunk_kotlin` is the entry point, called by `pipeline.chunking.chunk_source` for `.kt` files.
"""
