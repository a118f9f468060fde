"""Statistics as pure functions over pandas frames and numpy arrays (no Django import)."""

# Bootstrap resamples for confidence intervals. Defined here, away from numpy, so that the API
# can name the default without loading the analysis into every web process.
N_BOOT = 1000
