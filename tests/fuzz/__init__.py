"""A seeded, structure-aware fuzz campaign over the real post-render transform (pipeline.render).

cases.py makes inputs — the design's stories, the router example and taken-over LeaderWorkerSets,
mutated as data and as text; oracle.py judges each outcome by the invariants the post-renderer
promises; `python -m tests.fuzz` (make fuzz) runs a campaign and prints a summary.
"""
