"""One small thread pool for the waits an ask can overlap with its own work.

Why: an ask spends much of its time waiting on Neo4j and the vector store
(reading passages, citations, the N/A bar's freshness) while the asking thread
could be embedding, ranking or packing. Handing such a wait to this pool and
collecting it when needed hides it. The pool is shared by every strategy and
kept small: each task is one read that never waits on another task of the
pool, so a busy pool only queues, it cannot deadlock.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

#: Threads that wait on Neo4j or the vector store for asking threads.
IO_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="engramdb-io")
