"""Passes within the loop level: placing buffers in memory spaces, splitting copies along the DMA routes,
staging and hoisting copies, double buffering.
"""
