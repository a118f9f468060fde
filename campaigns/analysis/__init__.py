"""Statistics as pure functions over pandas frames and numpy arrays (no Django import)."""

# Bootstrap resamples for confidence intervals. Defined here, away from numpy, so that the API
# can name the default without loading the analysis into every web process.
N_BOOT = 1000

# Crowd-platform policy (Prolific's among them): a worker is flagged, and may be rejected, only
# after failing this many attention checks, never on one. Quality flags, suggested approvals
# and the failed-checks completion code all use it; defined away from pandas for the worker
# pages.
ATTENTION_FAILURES_TO_FLAG = 2
