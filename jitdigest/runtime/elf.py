"""Relocatable ELF objects for x86-64 (what LLVM emits for Numba's large code model) loaded
into executable memory and linked, without LLVM.

Why: a process that runs a stored batch kernel (``_native``: ``jitdigest sum``, a process's first
digests) would otherwise load it through llvmlite's MCJIT, and importing ``llvmlite.binding``
alone is a large part of a one-file ``jitdigest sum`` (benchmarks/results/tunables.md). These
objects need little of a linker: their sections are laid out side by side in one mapping, and
their relocations are 64-bit absolute addresses and 64- or 32-bit distances, which this module
writes. Anything else (another machine, relocation type or section kind, a name the resolver does
not know) gives None, and the caller loads the object through llvmlite instead.

``link(parts, symbol, resolve)``: the address of ``symbol`` once every object in ``parts`` is
loaded and linked, each undefined name taken from the other objects, else from ``resolve(name)``
(an address, or None: not linkable). Every offset, size and index read from an object is
checked against the object first, so a damaged one is refused, not followed.
"""
import ctypes
import mmap
import struct

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_U64 = struct.Struct("<Q")
_I32 = struct.Struct("<i")

_MAGIC = b"\x7fELF\x02\x01"             # 64-bit, little-endian
ET_REL, EM_X86_64 = 1, 62
SHT_PROGBITS, SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 1, 2, 4, 8, 9
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON = 0, 0xFF00, 0xFFF1, 0xFFF2
STB_LOCAL, STB_WEAK = 0, 2
R_X86_64_NONE, R_X86_64_64, R_X86_64_PC32, R_X86_64_PC64 = 0, 1, 2, 24
_MASK = (1 << 64) - 1
_PAGE = mmap.PAGESIZE

_live = []                              # mappings holding linked code, for the process's life


class _Object:
    """One object's sections, symbols and relocations, every one checked against its bytes."""

    def __init__(self, data):
        if len(data) < _EHDR.size or not data.startswith(_MAGIC):
            raise ValueError("not a 64-bit little-endian ELF object")
        (_, e_type, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum,
         _) = _EHDR.unpack_from(data)
        if e_type != ET_REL or machine != EM_X86_64 or shentsize != _SHDR.size:
            raise ValueError("not a relocatable x86-64 object")
        if shoff + shnum * _SHDR.size > len(data) or shnum == 0:
            raise ValueError("section headers outside the object")
        self.data = data
        self.sections = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(shnum)]
        for _, kind, _, _, offset, size, _, _, align, _ in self.sections:
            if kind != SHT_NOBITS and offset + size > len(data):
                raise ValueError("a section outside the object")
            if align & (align - 1) or align > _PAGE:
                raise ValueError("a section alignment that is not a power of two")
            if kind == SHT_REL:
                raise ValueError("REL relocations")
        tables = [i for i, s in enumerate(self.sections) if s[1] == SHT_SYMTAB]
        if len(tables) != 1:
            raise ValueError("not one symbol table")
        _, _, _, _, offset, size, link, _, _, entsize = self.sections[tables[0]]
        if entsize != _SYM.size or size % _SYM.size or link >= shnum:
            raise ValueError("a malformed symbol table")
        self.strings = self._bytes(link)
        self.symbols = [_SYM.unpack_from(data, offset + i * _SYM.size)
                        for i in range(size // _SYM.size)]
        for name, _, _, shndx, _, _ in self.symbols:
            if name >= len(self.strings) or (SHN_UNDEF < shndx < SHN_LORESERVE
                                             and shndx >= shnum):
                raise ValueError("a symbol outside the object")

    def _bytes(self, index):
        _, _, _, _, offset, size, _, _, _, _ = self.sections[index]
        return self.data[offset:offset + size]

    def name(self, symbol):
        start = symbol[0]
        end = self.strings.find(b"\0", start)
        if end < 0:
            raise ValueError("a symbol name without its end")
        return self.strings[start:end].decode("ascii", "strict")

    def loaded(self):
        """The indices of the sections that take memory."""
        return [i for i, s in enumerate(self.sections) if s[2] & SHF_ALLOC and s[5]]


def link(parts, symbol, resolve):
    """The address of ``symbol`` in the objects ``parts`` (bytes each), loaded and linked, or
    None where they hold anything this module does not link (see the module's docstring)."""
    try:
        objects = [_Object(part) for part in parts]
        return _link(objects, symbol, resolve)
    except (ValueError, IndexError, KeyError, UnicodeDecodeError, struct.error, OSError,
            OverflowError, MemoryError):
        return None                     # whatever does not fit, refused like the rest


def _kind(flags):
    """0: code, 1: read-only data, 2: writable data."""
    return 0 if flags & SHF_EXECINSTR else 2 if flags & SHF_WRITE else 1


def _commons(objects):
    """{name: (size, alignment)} of the common symbols (Numba's environment pointers:
    zero-filled words), one storage for each name across the objects."""
    found = {}
    for obj in objects:
        for sym in obj.symbols:
            if sym[3] == SHN_COMMON:
                align, size = max(1, sym[4]), sym[5]
                if align & (align - 1) or align > _PAGE or size > 1 << 20:
                    raise ValueError("a common symbol of an odd size or alignment")
                name = obj.name(sym)
                old = found.get(name, (0, 1))
                found[name] = (max(size, old[0]), max(align, old[1]))
    return found


def _layout(objects, commons):
    """{(object, section) or common name: offset} in one mapping, code first, then read-only
    data, then writable data and the common symbols, each kind starting on a page of its
    own; the kinds' (start, end); the mapping's size."""
    where, spans, end = {}, [], 0
    for kind in (0, 1, 2):
        start = end
        for k, obj in enumerate(objects):
            for i in obj.loaded():
                flags, align, size = obj.sections[i][2], max(1, obj.sections[i][8]), \
                    obj.sections[i][5]
                if _kind(flags) != kind:
                    continue
                end = -(-end // align) * align
                where[k, i] = end
                end += size
        if kind == 2:
            for name, (size, align) in commons.items():
                end = -(-end // align) * align
                where[name] = end
                end += size
        spans.append((start, end))
        end = -(-end // _PAGE) * _PAGE
    return where, spans, max(end, _PAGE)


def _link(objects, symbol, resolve):
    commons = _commons(objects)
    where, spans, total = _layout(objects, commons)
    memory = mmap.mmap(-1, total, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    for key, offset in where.items():
        if key in commons:
            continue                            # zeros, as the mapping starts
        k, i = key
        section = objects[k].sections[i]
        if section[1] != SHT_NOBITS:
            memory[offset:offset + section[5]] = objects[k]._bytes(i)
    defined = {name: base + where[name] for name in commons}
    weak = set()                        # names whose definition so far is weak
    for k, obj in enumerate(objects):
        for sym in obj.symbols:
            bind = sym[1] >> 4
            if bind == STB_LOCAL or sym[3] in (SHN_UNDEF, SHN_COMMON):
                continue
            name = obj.name(sym)
            if name in defined:
                if bind == STB_WEAK:
                    continue            # a weak definition never replaces one before it
                if name not in weak:
                    raise ValueError(f"{name} defined twice")
            defined[name] = _address(obj, k, sym, where, base)
            weak.discard(name)
            if bind == STB_WEAK:
                weak.add(name)
    for k, obj in enumerate(objects):
        _relocate(obj, k, where, base, memory, defined, resolve)
    found = defined.get(symbol)
    if found is None:
        raise ValueError(f"{symbol} is not defined")
    _protect(base, spans)
    _live.append(memory)
    return found


def _address(obj, k, sym, where, base):
    """A symbol's address where its object defines it (a loaded section, or absolute); the
    callers look common and undefined names up by name."""
    shndx, value = sym[3], sym[4]
    if shndx == SHN_ABS:
        return value
    if shndx >= SHN_LORESERVE or (k, shndx) not in where:
        raise ValueError("a symbol in a section that is not loaded")
    return base + where[k, shndx] + value


def _relocate(obj, k, where, base, memory, defined, resolve):
    for _, kind, _, _, offset, size, link, target, _, entsize in obj.sections:
        if kind != SHT_RELA or (k, target) not in where:
            continue                    # relocations of sections not loaded (debug, unwind)
        if (entsize != _RELA.size or size % _RELA.size or link >= len(obj.sections)
                or obj.sections[link][1] != SHT_SYMTAB):
            raise ValueError("a malformed relocation section")
        place0 = where[k, target]
        limit = obj.sections[target][5]
        for r in range(size // _RELA.size):
            at, info, addend = _RELA.unpack_from(obj.data, offset + r * _RELA.size)
            rtype, index = info & 0xFFFFFFFF, info >> 32
            if rtype == R_X86_64_NONE:
                continue
            if index >= len(obj.symbols):
                raise ValueError("a relocation naming no symbol")
            sym = obj.symbols[index]
            if index == 0:
                value = 0                       # the null symbol: the addend alone
            elif sym[3] in (SHN_UNDEF, SHN_COMMON):
                name = obj.name(sym)
                value = defined.get(name)
                if value is None:
                    value = resolve(name)
                if value is None:
                    raise ValueError(f"{name} is not known here")
            else:
                value = _address(obj, k, sym, where, base)
            place = base + place0 + at
            if rtype == R_X86_64_64 and at + 8 <= limit:
                _U64.pack_into(memory, place0 + at, (value + addend) & _MASK)
            elif rtype == R_X86_64_PC64 and at + 8 <= limit:
                _U64.pack_into(memory, place0 + at, (value + addend - place) & _MASK)
            elif rtype == R_X86_64_PC32 and at + 4 <= limit:
                distance = value + addend - place
                if not -(1 << 31) <= distance < 1 << 31:
                    raise ValueError("a 32-bit distance out of range")
                _I32.pack_into(memory, place0 + at, distance)
            else:
                raise ValueError(f"relocation type {rtype} at {at} not linked here")


def _protect(base, spans):
    """Code read and executed, read-only data read only, writable data left writable."""
    libc = ctypes.CDLL(None, use_errno=True)
    mprotect = libc.mprotect
    mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for (start, end), prot in zip(spans, (mmap.PROT_READ | mmap.PROT_EXEC, mmap.PROT_READ,
                                          None)):
        end = -(-end // _PAGE) * _PAGE
        if prot is None or end == start:
            continue
        if mprotect(base + start, end - start, prot) != 0:
            raise OSError(ctypes.get_errno(), "mprotect refused")
