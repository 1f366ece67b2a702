"""The schedule autotuner behind `ziggurat-tune`: `space` (the fusion groups and their tile-size
candidates), `estimate` (the analytic cost that prunes them) and `tuner` (measuring the best on
the machine model, in parallel, within a time budget, with a JSON cache)."""
