"""What a long ingest gives back to the operating system between its parts.

Two kinds of memory grow part after part although the process no longer needs
them, and both count in its resident set (RSS):

* **The vector store's mapped files.** The embedded store maps its segment
  files into the process, and every page an upsert or an index build touches
  stays resident until the mapping goes, although the kernel keeps the same page
  in its page cache either way. Over a 5 MB document that was the whole
  corpus's vector files: 1,113 MB of a 2,420 MB peak. :func:`release_pages`
  drops them; the next touch of one costs a page fault with no disk read (the
  page is still cached). Only mappings that cannot lose data are touched: shared
  ones (a dirty page stays dirty in the page cache and is written back as usual)
  and read-only ones (reloaded from the file). A private writable mapping holds
  copy-on-write changes that exist nowhere else, so it is left alone.
* **Free memory the C heap keeps.** A part's texts, query parameters and
  vectors are freed when it ends, but glibc's allocator keeps the freed pages
  for later rather than return them. :func:`trim_heap` asks it to return them
  (``malloc_trim``): on a 1 MB document, anonymous memory after each part fell
  from 790-900 MB to 510-620 MB.

A third kind shows only inside a part, at its peak: **large blocks the heap
keeps for reuse.** glibc serves a block of 128 KB or more from a mapping of its
own, returned when freed, but each such free raises that bar to the block's size
(up to 32 MB), so the next blocks of that size come from the heap and stay
there, fragmented among smaller ones. :func:`return_large_blocks` fixes the bar.
On a 1 MB document the ingest's peak RSS fell from 1,181 to 934 MB
(``bench_long_document.py --mb 1``, fresh homes); with the bar at 256 KB, on
1,000 2Wiki passages from 718-759 to 654-655 MB at the same speed
(``bench_ingest.py --travel 1000``, alternating runs; docs/measurements.md).

Linux and glibc only (``/proc/self/smaps``, ``madvise``, ``malloc_trim``,
``mallopt``); elsewhere all three do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

#: ``madvise`` advice: the process does not need these pages now (asm-generic/mman-common.h).
MADV_DONTNEED = 4
#: ``mallopt`` parameter: the smallest block glibc maps on its own (malloc.h); setting it also turns
#: off glibc's raising of it after every free of such a block.
M_MMAP_THRESHOLD = -3
#: Blocks from this size up are mapped on their own and returned on free: a part's embedding
#: batches, query parameters and vector arrays, not Python's small objects. What matters is that the
#: bar stays put: at 256 KB, 1 MB and 4 MB a 1 MB document's ingest peaked at 911-927, 934 and 963 MB
#: (1,181 MB with glibc's moving bar); the higher the bar, the fewer blocks pay for a mapping.
LARGE_BLOCK_BYTES = 1024 * 1024
SMAPS = Path("/proc/self/smaps")
_HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s*(.*)$")


@dataclass(frozen=True)
class Mapping:
    """One mapped range of a file: ``[start, end)``, its permissions (``rw-s``) and resident KB."""

    start: int
    end: int
    perms: str
    path: str
    resident_kb: int

    @property
    def releasable(self) -> bool:
        """Shared, or never writable: dropping its pages cannot lose a write."""
        return self.perms[3] == "s" or self.perms[1] != "w"


def mappings_under(folder: Path, smaps: Path = SMAPS) -> list[Mapping]:
    """This process's mappings of files inside ``folder`` (resolved), with their resident size."""
    if not smaps.exists():
        return []
    root = str(folder.resolve()).rstrip("/") + "/"
    ranges: list[tuple[int, int, str, str]] = []
    resident: list[int] = []
    inside = False
    with smaps.open() as lines:
        for line in lines:
            header = _HEADER.match(line)
            if header:
                path = header[4].strip()
                inside = path.startswith(root)
                if inside:
                    ranges.append((int(header[1], 16), int(header[2], 16), header[3], path))
                    resident.append(0)
            elif inside and line.startswith("Rss:"):
                resident[-1] = int(line.split()[1])
    return [Mapping(*r, kb) for r, kb in zip(ranges, resident, strict=True)]


def resident_kb(folder: Path) -> int:
    """KB of files inside ``folder`` resident in this process (0 where ``/proc`` is missing)."""
    return sum(m.resident_kb for m in mappings_under(folder))


def release_pages(folder: Path) -> int:
    """Drop this process's resident pages of the releasable mappings of files inside ``folder``;
    returns the KB they held. The caller must hold whatever lock keeps the files' owner from
    unmapping them meanwhile (``madvise`` on a range unmapped and mapped again to something else
    would drop that instead)."""
    madvise = _c_function("madvise", ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    if madvise is None:
        return 0
    released = 0
    for m in mappings_under(folder):
        if m.releasable and m.resident_kb and madvise(m.start, m.end - m.start, MADV_DONTNEED) == 0:
            released += m.resident_kb
    return released


def trim_heap() -> bool:
    """Return the C heap's free pages to the system (``malloc_trim(0)``, every arena); True when
    some were returned. A no-op where the C library has no ``malloc_trim`` (not glibc)."""
    trim = _c_function("malloc_trim", ctypes.c_int, ctypes.c_size_t)
    return trim is not None and bool(trim(0))


def return_large_blocks(threshold: int = LARGE_BLOCK_BYTES) -> bool:
    """Serve every block of ``threshold`` bytes or more from a mapping of its own, returned to
    the system when freed, from now on in this whole process; True when the C library took it.

    Why: with glibc's default the bar rises with every large block freed, so a long ingest's
    large buffers end up in the heap, where a part's peak sits on top of the last part's
    leftovers. The cost is a mapping per large block and a page fault per page of it: alternating
    runs of 1,000 passages took the same time with it and without (module docstring)."""
    mallopt = _c_function("mallopt", ctypes.c_int, ctypes.c_int, ctypes.c_int)
    return mallopt is not None and mallopt(M_MMAP_THRESHOLD, threshold) == 1


@functools.cache
def _libc() -> ctypes.CDLL:
    """The C library, loaded once."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


@functools.cache
def _c_function(name: str, restype: type, *argtypes: type) -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """The C library's function ``name`` with its types set, once; None off Linux or where the
    library lacks it (``malloc_trim`` and ``mallopt`` are glibc's)."""
    if not sys.platform.startswith("linux"):
        return None
    fn = getattr(_libc(), name, None)
    if fn is not None:
        fn.argtypes = list(argtypes)
        fn.restype = restype
    return fn
