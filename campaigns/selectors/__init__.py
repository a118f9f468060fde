"""Selectors: the functions that read state for views, admin, API and analysis."""
