"""Shared builders for the tests: paths, runs, fake servers, planted scripts."""
