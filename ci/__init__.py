"""The project's build and CI tooling; `ci.tools` is what its scripts and the tests share."""
