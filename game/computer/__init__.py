"""The computer opponent (its seats and its turn) and the analysis board."""
