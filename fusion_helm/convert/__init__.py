"""Conversions of other kinds into the InferenceService model, one way: a plain LeaderWorkerSet taken
over (leader_worker_set)."""
