"""``jitdigest sum --cache FILE``: the digest database of ``jitdigest/_filecache.py`` in front
of a Hasher, item by item: files it holds come out with their stored digests, unread; the
others are hashed, then stored. The database itself (schema, keys, racy files, commits,
damaged and locked databases) is ``FileCache``'s, shared with ``jitdigest.hash_files``.
"""
import time  # noqa: F401 -- the clock FileCache reads (``cache.time.time_ns``), patched by tests

from .._filecache import FileCache, stored_files  # noqa: F401 -- stored_files: re-exported
from .walk import FILE


class Cache(FileCache):
    """``FileCache`` on ``jitdigest sum``'s items (``path``, ``algo``, ``stat``, ``digest``,
    ``size``, ``error``)."""

    def lookup(self, item):
        """Fill in ``item``'s digest and size if the database holds them for this very file
        (for several algorithms, all of them); remember its stat for ``store`` otherwise."""
        st, digest = self.find(item.path, item.algo)
        if st is None:
            return False
        if digest is None:
            item.stat = st
            return False
        item.digest = digest
        item.size = st.st_size
        item.stat = None                    # nothing to store
        return True

    def store(self, item):
        """Remember a freshly hashed item (with the stat ``lookup`` took before it was read)."""
        if item.error is None:
            self.keep(item.path, item.algo, item.stat, item.digest, item.size)

    def run(self, hasher, items):
        """``hasher.run(items)`` with the database in front."""
        def looked_up():
            for item in items:
                if item.kind == FILE and item.algo is not None:
                    self.lookup(item)
                yield item

        for item in hasher.run(looked_up()):
            if item.stat is not None:
                self.store(item)
            yield item
