"""Subcommands other than dump, each a thin Click layer over a library module."""
