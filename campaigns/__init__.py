"""Campaigns: the human-evaluation app (models, task schemas, worker pages, admin, API, exports)."""
