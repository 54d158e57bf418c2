"""The one table of algorithms: names, aliases, sizes, word type, initial state, kernel family
and capabilities (keys, extendable output, key derivation).

Every other module reads it; nothing repeats it. ``TABLE`` holds every row; ``SPECS`` the rows
hashlib has too (``hashlib`` true), which hashlib-facing lists and callers (hmac, pbkdf2_hmac,
``algorithms_available``) go over. Names resolve as hashlib's do: the canonical names exactly,
and OpenSSL's names ("SHA-256", "sha3-256", "blake2b512", ...) in any case; ``lookup_any`` also
takes the exact names of the other rows.
"""
from .fork import cached_property


class AlgoSpec:
    """One algorithm's row, read-only, compared by value. (A plain class: a frozen dataclass
    would import ``dataclasses`` and ``inspect`` with ``import jitdigest``.)"""

    # name: hashlib's canonical name
    # family: kernel family, the module name under jitdigest/kernels
    # digest_size: bytes; 0 for SHAKE (length chosen at digest time)
    # block_size: bytes, as hashlib reports it (the sponge rate for SHA-3)
    # word_name: "uint32" or "uint64", numpy's name of the state word type
    # min_padding: bytes padding adds at least: end marker + length field (MD families), the
    #   domain/end byte (Keccak), none (BLAKE2)
    # iv: initial state words ((): computed from parameters, BLAKE2)
    # aliases: OpenSSL names, matched case-insensitively
    # caseless: the canonical name itself matches in any case (hashlib quirk)
    # bsd_tag: the name in BSD-style checksum lines ("SHA256 (NAME) = HEX") as coreutils writes
    #   it; BLAKE2 adds "-BITS" below its full size, SHAKE always (the tag without it names no
    #   output length)
    # default_bits: SHAKE's output bits when no length is asked for (twice the security level);
    #   0 for the others (8 * digest_size)
    # hashlib: hashlib has the name (False: its objects are its own package's type, which
    #   chooses its kernels itself: ``_constructors.object_type``)
    # key_size: the most key bytes a keyed mode takes (0: none)
    # xof: any output length, chosen at digest time (``digest(length)``)
    # derive_key: a key-derivation mode (a context string)
    # sum_format: the tool whose output, options and --check ``jitdigest sum`` follows when
    #   this algorithm is the only one asked for ("coreutils": sha256sum, b2sum...)
    FIELDS = ("name", "family", "digest_size", "block_size", "word_name", "min_padding", "iv",
              "aliases", "caseless", "bsd_tag", "default_bits", "hashlib", "key_size", "xof",
              "derive_key", "sum_format")

    def __init__(self, name, family, digest_size, block_size, word_name, min_padding, iv=(),
                 aliases=(), caseless=False, bsd_tag="", default_bits=0, hashlib=True,
                 key_size=0, xof=None, derive_key=False, sum_format="coreutils"):
        xof = digest_size == 0 if xof is None else xof
        values = (name, family, digest_size, block_size, word_name, min_padding, iv, aliases,
                  caseless, bsd_tag, default_bits, hashlib, key_size, xof, derive_key,
                  sum_format)
        for field, value in zip(self.FIELDS, values):
            object.__setattr__(self, field, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def _values(self):
        return tuple(getattr(self, field) for field in self.FIELDS)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        return "AlgoSpec(%s)" % ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)

    @cached_property
    def word(self):
        """The state word type, np.uint32 or np.uint64 (numpy is imported on first use)."""
        import numpy as np
        return getattr(np, self.word_name)

    @cached_property
    def initial_state(self):
        """A read-only numpy array of the initial state words (made once; BLAKE2's with its
        default parameters)."""
        if not self.iv:
            return blake2_state(self.name, self.digest_size)
        import numpy as np
        arr = np.array(self.iv, dtype=self.word)
        arr.setflags(write=False)
        return arr


# BLAKE2's parameter block (RFC 7693 2.5; BLAKE2 paper 2.8): salt and personalization bytes,
# node_offset bits, and the family whose initial state is its IV (RFC 7693 2.6).
BLAKE2_PARAMETERS = {"blake2b": (16, 64, "sha512"), "blake2s": (8, 48, "sha256")}


def blake2_state(name, digest_size, key_size=0, salt=b"", person=b"", fanout=1, depth=1,
                 leaf_size=0, node_offset=0, node_depth=0, inner_size=0, last_node=False):
    """BLAKE2's read-only initial state: IV XOR parameter block, zero counter, last-node flag
    (the arguments already checked by the caller)."""
    import struct
    import numpy as np
    salt_size, offset_bits, iv_of = BLAKE2_PARAMETERS[name]
    spec = SPECS[iv_of]
    block = bytearray(4 * salt_size)
    block[0:4] = bytes((digest_size, key_size, fanout, depth))
    block[4:8] = leaf_size.to_bytes(4, "little")
    offset_bytes = offset_bits // 8
    block[8:8 + offset_bytes] = node_offset.to_bytes(offset_bytes, "little")
    block[8 + offset_bytes] = node_depth
    block[9 + offset_bytes] = inner_size
    start = 2 * salt_size
    block[start:start + len(salt)] = salt
    block[start + salt_size:start + salt_size + len(person)] = person
    words = struct.unpack("<8Q" if spec.word_name == "uint64" else "<8I", block)
    flag = np.iinfo(spec.word).max if last_node else 0
    state = np.array([iv ^ w for iv, w in zip(spec.iv, words)] + [0, 0, flag], dtype=spec.word)
    state.setflags(write=False)
    return state


# The Merkle-Damgard families' padding: block size in bytes, bytes of the length field, and
# whether words and the length field are little-endian (MD5) or big-endian (SHA). The kernels
# of each family read their row; nothing else states these numbers.
MERKLE_DAMGARD = {
    "md5": (64, 8, True),
    "sha1": (64, 8, False),
    "sha256": (64, 8, False),
    "sha512": (128, 16, False),
}


def _keccak_iv(rate, dsbyte):
    # 25 zero lanes, then the sponge's parameters: rate in bytes and the domain-separation byte.
    return (0,) * 25 + (rate, dsbyte)


_SPECS = (
    AlgoSpec("md5", "md5", 16, 64, "uint32", 9,
             (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476),
             ("ssl3-md5",), caseless=True, bsd_tag="MD5"),
    AlgoSpec("sha1", "sha1", 20, 64, "uint32", 9,
             (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0),
             ("sha-1", "ssl3-sha1"), caseless=True, bsd_tag="SHA1"),
    AlgoSpec("sha224", "sha256", 28, 64, "uint32", 9,
             (0xC1059ED8, 0x367CD507, 0x3070DD17, 0xF70E5939,
              0xFFC00B31, 0x68581511, 0x64F98FA7, 0xBEFA4FA4),
             ("sha-224", "sha2-224"), caseless=True, bsd_tag="SHA224"),
    AlgoSpec("sha256", "sha256", 32, 64, "uint32", 9,
             (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
              0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19),
             ("sha-256", "sha2-256"), caseless=True, bsd_tag="SHA256"),
    AlgoSpec("sha384", "sha512", 48, 128, "uint64", 17,
             (0xCBBB9D5DC1059ED8, 0x629A292A367CD507, 0x9159015A3070DD17, 0x152FECD8F70E5939,
              0x67332667FFC00B31, 0x8EB44A8768581511, 0xDB0C2E0D64F98FA7, 0x47B5481DBEFA4FA4),
             ("sha-384", "sha2-384"), caseless=True, bsd_tag="SHA384"),
    AlgoSpec("sha512", "sha512", 64, 128, "uint64", 17,
             (0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
              0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179),
             ("sha-512", "sha2-512"), caseless=True, bsd_tag="SHA512"),
    AlgoSpec("sha512_224", "sha512", 28, 128, "uint64", 17,
             (0x8C3D37C819544DA2, 0x73E1996689DCD4D6, 0x1DFAB7AE32FF9C82, 0x679DD514582F9FCF,
              0x0F6D2B697BD44DA8, 0x77E36F7304C48942, 0x3F9D85A86A1D36C8, 0x1112E6AD91D692A1),
             ("sha512-224", "sha-512/224", "sha2-512/224", "SHA512_224"), bsd_tag="SHA512-224"),
    AlgoSpec("sha512_256", "sha512", 32, 128, "uint64", 17,
             (0x22312194FC2BF72C, 0x9F555FA3C84C64C2, 0x2393B86B6F53B151, 0x963877195940EABD,
              0x96283EE2A88EFFE3, 0xBE5E1E2553863992, 0x2B0199FC2C85B8AA, 0x0EB72DDC81C52CA2),
             ("sha512-256", "sha-512/256", "sha2-512/256", "SHA512_256"), bsd_tag="SHA512-256"),
    AlgoSpec("sha3_224", "keccak", 28, 144, "uint64", 1, _keccak_iv(144, 0x06), ("sha3-224",),
             bsd_tag="SHA3-224"),
    AlgoSpec("sha3_256", "keccak", 32, 136, "uint64", 1, _keccak_iv(136, 0x06), ("sha3-256",),
             bsd_tag="SHA3-256"),
    AlgoSpec("sha3_384", "keccak", 48, 104, "uint64", 1, _keccak_iv(104, 0x06), ("sha3-384",),
             bsd_tag="SHA3-384"),
    AlgoSpec("sha3_512", "keccak", 64, 72, "uint64", 1, _keccak_iv(72, 0x06), ("sha3-512",),
             bsd_tag="SHA3-512"),
    AlgoSpec("shake_128", "keccak", 0, 168, "uint64", 1, _keccak_iv(168, 0x1F),
             ("shake128", "shake-128"), bsd_tag="SHAKE128", default_bits=256),
    AlgoSpec("shake_256", "keccak", 0, 136, "uint64", 1, _keccak_iv(136, 0x1F),
             ("shake256", "shake-256"), bsd_tag="SHAKE256", default_bits=512),
    AlgoSpec("blake2b", "blake2b", 64, 128, "uint64", 0, (), ("blake2b512", "blake2b-512"),
             bsd_tag="BLAKE2b", key_size=64),
    AlgoSpec("blake2s", "blake2s", 32, 64, "uint32", 0, (), ("blake2s256", "blake2s-256"),
             bsd_tag="BLAKE2s", key_size=32),
    # hashlib has no such name; its objects have its own package's interface, and its
    # initial state is the parameters of the mode asked for
    AlgoSpec("blake3", "blake3", 32, 64, "uint32", 0, bsd_tag="BLAKE3", hashlib=False,
             key_size=32, xof=True, derive_key=True, sum_format="b3sum"),
)

TABLE = {spec.name: spec for spec in _SPECS}
SPECS = {name: spec for name, spec in TABLE.items() if spec.hashlib}
_HASHLIB = tuple(SPECS.values())

# Canonical names match exactly; OpenSSL-style names (and the caseless canonical ones) in any case.
_EXACT = {spec.name: spec for spec in _HASHLIB}
_EXACT.update({alias: spec for spec in _HASHLIB for alias in spec.aliases if alias.isupper()})
_CASELESS = {alias: spec for spec in _HASHLIB for alias in spec.aliases if alias.islower()}
_CASELESS.update({spec.name: spec for spec in _HASHLIB if spec.caseless})

# hashlib guarantees these everywhere; SHA-512/224 and SHA-512/256 it lists as available only
algorithms_guaranteed = frozenset(SPECS) - {"sha512_224", "sha512_256"}
algorithms_available = frozenset(SPECS)
# the rows hashlib lacks, by their exact names (``lookup_any``)
_OTHERS = {name: spec for name, spec in TABLE.items() if not spec.hashlib}


def lookup(name):
    """The spec for a hashlib-style name; ValueError (as hashlib's) when unknown."""
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    spec = _EXACT.get(name) or _CASELESS.get(name.lower())
    if spec is None:
        raise ValueError(f"unsupported hash type {name}")
    return spec


def lookup_any(name):
    """``lookup``, and the exact names of the rows hashlib lacks (as their packages spell
    them)."""
    if isinstance(name, str) and name in _OTHERS:      # (never an array: unhashable)
        return _OTHERS[name]
    return lookup(name)
