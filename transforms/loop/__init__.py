"""Passes within the loop level: placing buffers in memory spaces, hoisting copies, double buffering."""
