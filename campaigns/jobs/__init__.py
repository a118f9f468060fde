"""Background jobs: one lifecycle (lifecycle.py) for every kind (kinds.py), and the one way
services put a job on the task queue (dispatch.py), by the task's name."""
