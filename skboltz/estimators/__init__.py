"""The restricted, general and deep Boltzmann machine estimators."""
