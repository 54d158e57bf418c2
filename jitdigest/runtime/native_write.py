"""Batch kernels stored as machine code (``native`` loads them): written by a process that has
Numba, ``jitdigest warmup`` for every algorithm and a ``jitdigest sum`` that had to reach one
through Numba; ``kernels/_internals/native.py`` makes the object. Each entry is an object file
and a JSON description (its symbol, word type, initial state per algorithm, the SHA-256 of the
object and of the rest of the description, the names it uses but does not define, and the
sizes of the objects it holds, loaded side by side: the kernel as Numba emitted it and the
wrapper calling it by name, or, where the kernel was loaded from Numba's cache, one object
with both linked); ``index.json`` names each algorithm's.
"""
import json
import os

from ..base import algorithms as _algorithms, cachedir as _cachedir
from . import native as _native

def base_name(kernel_set):
    """The file name (without extension) of a kernel set's stored ``hash_rows``."""
    module = kernel_set.backend.module.__name__.rpartition(".")[2]
    return f"{kernel_set.backend.family}.{module}-{kernel_set._word.__name__}"


def write_kernel(kernel_set):
    """Store ``kernel_set``'s ``hash_rows`` (a ``_dispatch.KernelSet``) as machine code, with
    the initial state of every algorithm of its family and word type. Returns the file's base
    name, or None where the object would need Numba's runtime (a kernel that allocates)."""
    from ..engine import dispatch as _dispatch
    from ..kernels._internals import native
    word = kernel_set._word
    kernel_set.hash_rows                                  # compiled (or loaded) first
    kernel = kernel_set.backend.hash_rows
    # compiled in this process: its object as emitted, and a wrapper calling it by name;
    # loaded from Numba's cache (no object kept): a wrapper with the kernel linked in
    compiled = kernel.overloads[_dispatch._signatures(word)["hash_rows"]]
    found = native.kernel_object(compiled)
    entry = native.rows_entry(kernel, word, compiled if found is not None else None)
    code, symbol = native.object_code(entry)
    functions, variables = native.declarations(entry)
    uses, parts = functions + variables, [code]
    if found is not None:
        kernel_code, kernel_uses, kernel_symbol = found
        uses = sorted((set(uses) | set(kernel_uses)) - {kernel_symbol})
        parts = [kernel_code, code]
    family = kernel_set.backend.family
    shape = _native.tree_shape(family)
    specs = [s for s in _algorithms.TABLE.values() if s.family == family
             and s.word_name == word.__name__ and (s.hashlib or shape is not None)]
    base = base_name(kernel_set)
    fields = {"iv": {s.name: list(shape[1]()) if shape else [int(w) for w in s.initial_state]
                     for s in specs},       # a tree hash: its plain mode, any length
              "sizes": {s.name: 0 if shape else s.digest_size for s in specs}}
    return base if write_entry(base, parts, symbol, uses, word.__name__, fields) else None


def write_entry(base, parts, symbol, uses, word, fields):
    """Write the stored entry ``base``: the objects ``parts`` as one file, and its description
    (``symbol``, the names it ``uses``, the ``word`` type, the objects' sizes, ``fields`` and
    the SHA-256 of all that: ``_native._valid`` reads it back). False, writing nothing, where
    a name it uses is not in this process (code that would need Numba's runtime)."""
    if _native._addresses(uses) is None:
        return False
    code = b"".join(parts)
    meta = {"format": _native.FORMAT, "symbol": symbol, "word": word, "uses": uses,
            "parts": [len(p) for p in parts], **fields}
    meta["sha256"] = _native._digest(code, meta)
    where = _native.folder()
    _cachedir.write_whole(os.path.join(where, base + ".o"), code)
    _cachedir.write_whole(os.path.join(where, base + ".json"), json.dumps(meta).encode())
    return True


def write_index(chosen):
    """Name, for each algorithm of ``chosen`` ({hashlib name: kernel set serving its
    batches}), its kernel's stored file in the index, where that file exists. Returns the
    names indexed."""
    where = _native.folder()
    if not _cachedir.trusted(where):
        return []
    index = _native._read_json(os.path.join(where, "index.json")) or {}
    done = []
    for name, kernel_set in chosen.items():
        base = base_name(kernel_set)
        meta = _native._read_json(os.path.join(where, base + ".json"))
        if meta is not None and name in meta.get("iv", {}):
            index[name] = base
            done.append(name)
        else:
            index.pop(name, None)
    if done or os.path.isdir(where):
        _cachedir.write_whole(os.path.join(where, "index.json"),
                              json.dumps(index, sort_keys=True).encode())
    return done


def store(spec):
    """Store the kernel serving ``spec``'s batches here, unless it is stored whole already
    (another algorithm of its family stored it), and index it (``write_kernel`` and
    ``write_index`` for one algorithm, in this process). Returns whether it is stored."""
    from ..engine import dispatch as _dispatch, notice as _notice
    if not _cachedir.trusted(_native.folder()):
        return False
    kernel_set = _dispatch.batch_kernels_for(spec)
    if _native._entry(_native.folder(), base_name(kernel_set), spec.name)[0] is None:
        with _notice.compiling(kernel_set.backend.family, spec.name):   # (sha224 after sha256)
            if write_kernel(kernel_set) is None:
                return False
    return bool(write_index({spec.name: kernel_set}))
