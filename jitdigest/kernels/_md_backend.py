"""The Merkle-Damgard backends' entry points, written once: ``md_backend`` builds a backend's
entries (``update`` ... ``pbkdf2``, signatures in ``_contract.SIGNATURES``) for its ``compress``
and returns its ``_contract.Backend`` record; a backend file gives only its block function.

Each entry is a copy of a template below made with the backend's own globals (``compress``,
``FINISH``...: no closure cells, which Numba's cache would pickle into its index key) and a
qualified name of its own (``<family>_<backend>.<entry>``), so that Numba's on-disk cache,
which names an entry after its file, qualified name and package (``_internals.cache``), keeps
one entry per backend.
"""
import types

from ..base.algorithms import MERKLE_DAMGARD
from ._contract import Backend
from ._hmac import (keyed_pieces, md_hmac, md_hmac_final, md_hmac_rows, md_hmac_states,  # noqa: F401,E501
                    md_pbkdf2)
from ._jit import gil_kernel, kernel
from ._md import finish_piece, md_final, md_hash_rows, md_oneshot, md_update  # noqa: F401

# bound per backend in each entry's globals (``md_backend``)
compress = FINISH = KEYED_STATES = AFTER_KEY = BLOCK = LENGTH_BYTES = LITTLE = None


def update(state, buf, buflen, data):
    return md_update(compress, BLOCK, state, buf, buflen, data)


def final(state, buf, buflen, total, out):
    md_final(FINISH, state, buf, buflen, total, out)


def oneshot(iv, data, out):
    md_oneshot(compress, FINISH, BLOCK, iv, data, out)


def hash_rows(values, starts, lengths, rows, iv, out):
    md_hash_rows(compress, FINISH, BLOCK, values, starts, lengths, rows, iv, out)


def hmac(iv, key, msg, out):
    md_hmac(FINISH, KEYED_STATES, AFTER_KEY, BLOCK, iv, key, msg, out)


def hmac_states(iv, key, ds, states):
    md_hmac_states(KEYED_STATES, iv, key, ds, states)


def hmac_final(state, buf, buflen, total, ostate, out):
    md_hmac_final(FINISH, BLOCK, state, buf, buflen, total, ostate, out)


def hmac_rows(values, starts, lengths, rows, states, out):
    md_hmac_rows(FINISH, AFTER_KEY, BLOCK, values, starts, lengths, rows, states, out)


def pbkdf2(iv, password, salt, iterations, ds, out):
    md_pbkdf2(compress, KEYED_STATES, AFTER_KEY, BLOCK, LENGTH_BYTES, LITTLE, iv, password, salt,
              iterations, ds, out)


# template -> decorator: the entries whose usual input is small keep the GIL (``gil_kernel``)
_TEMPLATES = ((update, gil_kernel), (final, gil_kernel), (oneshot, gil_kernel),
              (hash_rows, kernel), (hmac, gil_kernel), (hmac_states, gil_kernel),
              (hmac_final, gil_kernel), (hmac_rows, kernel), (pbkdf2, kernel))


def md_pieces(family, compress):
    """``(FINISH, KEYED_STATES, AFTER_KEY)``: a backend's padded last block and keyed steps
    (``_md.finish_piece``, ``_hmac.keyed_pieces``), compiled once for its ``compress``."""
    block, len_bytes, little = MERKLE_DAMGARD[family]
    finish = finish_piece(compress, block, len_bytes, little)
    return (finish,) + tuple(keyed_pieces(compress, finish, block))


def md_backend(family, name, tier, source, compress, pieces=None, **own):
    """The record of the backend ``name`` of ``family`` defined in module ``source`` on
    ``compress``: every entry a template above, bound to its pieces (``md_pieces``, made
    here unless given), except those in ``own`` (an entry the backend writes itself)."""
    block, len_bytes, little = MERKLE_DAMGARD[family]
    finish, keyed_states, after_key = pieces or md_pieces(family, compress)
    scope = dict(globals(), __name__=source, compress=compress, FINISH=finish,
                 KEYED_STATES=keyed_states, AFTER_KEY=after_key, BLOCK=block,
                 LENGTH_BYTES=len_bytes, LITTLE=little)
    entries = {}
    for template, decorate in _TEMPLATES:
        entry = template.__name__
        if entry in own:
            entries[entry] = own[entry]
            continue
        func = types.FunctionType(template.__code__, scope, entry)
        func.__qualname__ = f"{family}_{name}.{entry}"
        entries[entry] = decorate(func)
    return Backend(family, name, tier, source, **entries)
