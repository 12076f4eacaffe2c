"""Shared numerics, random streams, validation, runtime (threads, memory, progress), sample weights, the array namespace and the capability vocabulary: the layer every other one stands on."""
