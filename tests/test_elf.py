"""``jitdigest/runtime/elf.py``: relocatable x86-64 objects, as Numba emits them, linked into
executable memory without LLVM. An object it links runs; anything it does not link exactly (an
unknown relocation type, an offset or index outside the object, a name nobody defines, a
truncated or foreign file) gives None, never a crash or a half-linked function."""
import ctypes
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from jitdigest.runtime import elf as _elf, native as _native

pytestmark = pytest.mark.skipif(not _native.ELF_LOADER,
                                reason="the ELF loader serves x86-64 Linux")


@pytest.fixture(scope="module")
def tiny():
    """(object, symbol, uses) of ``tiny_rows_kernel``'s ``hash_rows`` entry."""
    import tiny_rows_kernel
    from jitdigest.kernels._internals import native
    entry = native.rows_entry(tiny_rows_kernel.compiled(), np.uint32)
    code, symbol = native.object_code(entry)
    functions, variables = native.declarations(entry)
    return code, symbol, functions + variables


def _run(address):
    """Whether the tiny kernel at ``address`` gives its known answer."""
    import tiny_rows_kernel
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    function = ctypes.CFUNCTYPE(i64, ctypes.c_char_p, i64, p, p, p, i64, p, i64, p, i64,
                                i64)(address)
    return tiny_rows_kernel.answers(_native.Rows(function, [7], "uint32", 0))


def _relocations(code):
    """The file offsets of every RELA entry of ``code`` that relocates a loaded section."""
    obj = _elf._Object(code)
    loaded = set(obj.loaded())
    found = []
    for _, kind, _, _, offset, size, _, target, _, _ in obj.sections:
        if kind == _elf.SHT_RELA and target in loaded:
            found += range(offset, offset + size, _elf._RELA.size)
    return found


def test_links_and_runs(tiny):
    code, symbol, _ = tiny
    address = _elf.link([code], symbol, _native._resolver())
    assert isinstance(address, int) and _run(address)
    assert len(_relocations(code)) > 5


@pytest.mark.parametrize("how", ["relocation type", "relocation offset", "symbol index",
                                 "truncated", "not elf", "unknown name", "no such symbol"])
def test_refuses_what_it_does_not_link(tiny, how):
    code, symbol, _ = tiny
    data = bytearray(code)
    first = _relocations(code)[0]
    at, info, addend = _elf._RELA.unpack_from(data, first)
    resolve = _native._resolver()
    if how == "relocation type":
        _elf._RELA.pack_into(data, first, at, (info & ~0xFFFFFFFF) | 42, addend)
    elif how == "relocation offset":
        _elf._RELA.pack_into(data, first, 1 << 40, info, addend)
    elif how == "symbol index":
        _elf._RELA.pack_into(data, first, at, (0xFFFFFF << 32) | (info & 0xFFFFFFFF), addend)
    elif how == "truncated":
        data = data[:len(data) // 2]
    elif how == "not elf":
        data[:4] = b"\x7fXLF"
    elif how == "unknown name":
        resolve = lambda name: None                                 # noqa: E731
    elif how == "no such symbol":
        symbol = "jitdigest_no_such_function"
    assert _elf.link([bytes(data)], symbol, resolve) is None


def test_a_refused_object_still_loads_through_llvmlite(tiny, monkeypatch):
    """``_native._link`` falls back to MCJIT where ``_elf`` refuses an object."""
    code, symbol, uses = tiny
    monkeypatch.setattr(_elf, "link", lambda parts, symbol, resolve: None)
    function = _native._link(code, {"uses": uses, "symbol": symbol})
    assert function is not None
    assert _run(ctypes.cast(function, ctypes.c_void_p).value)


def test_code_is_not_writable_after_linking(tiny):
    """The code pages are read and execute only (mprotect), as a loader should leave them."""
    code, symbol, _ = tiny
    address = _elf.link([code], symbol, _native._resolver())
    page = address - address % _elf._PAGE
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if start <= page < end:
                assert perms.startswith("r-x"), line
                return
    raise AssertionError("the code's page is not mapped")


def _readelf(path, *options):
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("binutils' readelf not installed")
    return subprocess.run([readelf, "-W", *options, str(path)], capture_output=True, text=True,
                          check=True, env=dict(os.environ, LC_ALL="C"), timeout=120).stdout


def test_reads_the_object_as_readelf_does(tiny, tmp_path):
    """The header, section table and relocations ``_elf`` reads from an object are those
    binutils' readelf lists: sizes, offsets, entry sizes, and each RELA entry's offset, info
    and addend."""
    code, _, _ = tiny
    path = tmp_path / "tiny.o"
    path.write_bytes(code)
    header = _readelf(path, "-h")
    assert f"Size of this header: {_elf._EHDR.size} (bytes)" in " ".join(header.split())
    assert f"Size of section headers: {_elf._SHDR.size} (bytes)" in " ".join(header.split())
    obj = _elf._Object(code)
    listed = re.findall(r"^\s*\[\s*(\d+)\]\s+(\S*)\s+([A-Z0-9_]+)\s+[0-9a-f]{16} ([0-9a-f]+) "
                        r"([0-9a-f]+) ([0-9a-f]+)", _readelf(path, "-S"), re.M)
    assert [int(n) for n, *_ in listed] == list(range(len(obj.sections)))
    rela = []
    for (_, name, kind, offset, size, entsize), section in zip(listed, obj.sections):
        assert section[4:6] == (int(offset, 16), int(size, 16)), name
        assert section[9] == int(entsize, 16), name
        assert (section[1] == _elf.SHT_RELA) == (kind == "RELA"), name
        if kind == "SYMTAB":
            assert section[9] == _elf._SYM.size
        if kind == "RELA":
            assert section[9] == _elf._RELA.size
            rela.append(section)
    assert rela
    entries = [(int(at, 16), int(info, 16), int(sign + (addend or "0"), 16))
               for at, info, sign, addend in re.findall(
                   r"^([0-9a-f]{16})\s+([0-9a-f]{16})\s+R_X86_64_\S+\s+[0-9a-f]+\s+.*? "
                   r"([+-]) ([0-9a-f]+)$", _readelf(path, "-r"), re.M)]
    read = [_elf._RELA.unpack_from(code, section[4] + i)
            for section in rela for i in range(0, section[5], _elf._RELA.size)]
    assert read == entries
