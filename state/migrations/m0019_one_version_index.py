"""One index on memory_versions (memory_id, version), not two.

``memory_versions_memory`` (m0007) indexes exactly what the table's UNIQUE (memory_id,
version) constraint already indexes (sqlite_autoindex_memory_versions_2), so every version
written, one per memory write, paid a second b-tree insert and its pages for nothing.
Queries by memory id use the constraint's index.
"""

SQL = """
drop index if exists memory_versions_memory;
"""
