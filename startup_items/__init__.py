"""Startup items per agent runtime, the managed-file writer, the launcher and the fallback
cache. (Filled in by the startup-items issue; the daemon already recommends the surfaces.)"""
