"""Everything persistent: SQLite + sqlite-vec, migrations, repositories, search, config, secrets.

This package imports neither aiohttp nor textual (a test guards that).
"""
