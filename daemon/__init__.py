"""The MemoryCloud Companion daemon: aiohttp app, AMP handlers, domain services, CLI."""

__version__ = "0.1.0"
