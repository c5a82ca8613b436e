"""Test-only tooling (fixture builders, file mutators): kept out of the installed package."""
