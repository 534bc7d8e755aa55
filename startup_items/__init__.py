"""Startup items per agent runtime: install plans (runtimes), managed regions and the file
writer (regions, installer), the standard-library launcher, and the fallback cache."""
