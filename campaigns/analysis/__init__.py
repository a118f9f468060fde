"""Statistics as pure functions over pandas frames and numpy arrays (no Django import)."""
