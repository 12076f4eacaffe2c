"""Unit types: each layer class owns its energy term, conditional mean, draw, the log-partition of an independent layer and its states."""
