"""Benchmarks that print figures (run on demand, not part of the test suite)."""
