"""The PostgreSQL engine of the store, for team servers that outgrow one machine (issue #18).

The companion keeps SQLite (state/db.py). A team daemon may keep its store on PostgreSQL with
pgvector instead: this package holds that engine's connection (engine.py), its own numbered
migrations (migrations/) and its repositories. So far: the connection, the migrations and the
hybrid search (search.py), which ranks like the SQLite engine's (BM25 over the same
tokenizer's tokens, reciprocal rank fusion with the vectors) and is held to it by
tests/pg/test_search_parity.py. psycopg (3) is an optional dependency: ``pip install
'memorycloud-companion[postgres]'``.
"""
