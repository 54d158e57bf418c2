"""NIST CAVP vectors (ShortMsg, LongMsg, Monte, VariableOut) and the RFC 1321 MD5 suite,
compiled, over every kernel this CPU can run. Each message is hashed whole (one-shot path) and
fed in two halves with a digest taken in between (streaming path). The vectors are the full
files when present, else the subset in tests/data (see tests/vectors.py); each test reports how
many it checked."""
import pytest

from conftest import kernel_params, maker, out_of
from vectors import NIST_FILES, label, messages, monte

SHA2 = ["sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224", "sha512_256"]
SHA3 = ["sha3_224", "sha3_256", "sha3_384", "sha3_512"]
SHAKE = ["shake_128", "shake_256"]


def check_messages(name, kernel, cases):
    """Every case, whole and split; returns how many were checked."""
    assert cases
    failures = []
    with maker(name, kernel) as new:
        for msg, expected, outlen in cases:
            whole = out_of(new(msg), outlen)
            h = new()
            h.update(msg[: len(msg) // 2])
            out_of(h, outlen)                   # a digest mid-stream must not disturb the state
            h.update(bytearray(msg[len(msg) // 2:]))
            split = out_of(h, outlen)
            if whole != expected or split != expected:
                failures.append((len(msg), whole.hex(), split.hex(), expected.hex()))
    assert not failures, f"{len(failures)} of {len(cases)} vectors failed, first: {failures[0]}"
    return len(cases)


@pytest.mark.parametrize("name,kernel", kernel_params(["md5"]))
def test_md5_rfc1321(name, kernel, known_answers):
    cases = messages("md5", "")
    assert len(cases) == 7                      # RFC 1321 section A.5: seven test strings
    known_answers(label("md5", ""), check_messages(name, kernel, cases))


@pytest.mark.parametrize("kind", ["ShortMsg", "LongMsg"])
@pytest.mark.parametrize("name,kernel", kernel_params(SHA2 + SHA3 + SHAKE))
def test_nist_messages(name, kernel, kind, known_answers):
    known_answers(label(name, kind), check_messages(name, kernel, messages(name, kind)))


@pytest.mark.parametrize("name,kernel", kernel_params(SHAKE))
def test_nist_shake_variable_output(name, kernel, known_answers):
    known_answers(label(name, "VariableOut"),
                  check_messages(name, kernel, messages(name, "VariableOut")))


@pytest.mark.parametrize("name,kernel", kernel_params(SHA2))
def test_nist_monte_sha2(name, kernel, known_answers):
    # SHAVS 6.4: MD_i = H(MD_{i-3} || MD_{i-2} || MD_{i-1}), 1000 iterations per checkpoint.
    _, seed, checkpoints = monte(name)
    checked = 0
    with maker(name, kernel) as new:
        for count, (expected, _) in enumerate(checkpoints):
            md0 = md1 = md2 = seed
            for _ in range(1000):
                md0, md1, md2 = md1, md2, new(md0 + md1 + md2).digest()
            assert md2 == expected, f"checkpoint COUNT = {count}"
            seed = md2
            checked += 1
    assert checked == len(checkpoints) > 0
    known_answers(label(name, "Monte"), checked)


@pytest.mark.parametrize("name,kernel", kernel_params(SHA3))
def test_nist_monte_sha3(name, kernel, known_answers):
    # SHA3VS 6.2.3: MD_i = SHA3(MD_{i-1}), 1000 iterations per checkpoint.
    _, md, checkpoints = monte(name)
    checked = 0
    with maker(name, kernel) as new:
        for count, (expected, _) in enumerate(checkpoints):
            for _ in range(1000):
                md = new(md).digest()
            assert md == expected, f"checkpoint COUNT = {count}"
            checked += 1
    assert checked == len(checkpoints) > 0
    known_answers(label(name, "Monte"), checked)


@pytest.mark.parametrize("name,kernel", kernel_params(SHAKE))
def test_nist_monte_shake(name, kernel, known_answers):
    # SHA3VS 6.3.3: the message is the leftmost 128 bits of the previous output (zero-padded);
    # the next output length comes from the rightmost 16 bits of the output.
    header, output, checkpoints = monte(name)
    min_len = int(header["Minimum Output Length (bits)"]) // 8
    max_len = int(header["Maximum Output Length (bits)"]) // 8
    outlen = max_len
    checked = 0
    with maker(name, kernel) as new:
        for count, (expected, expected_bits) in enumerate(checkpoints):
            for _ in range(1000):
                msg = output[:16].ljust(16, b"\0")
                output = new(msg).digest(outlen)
                used = outlen
                rightmost = int.from_bytes(output[-2:], "big")
                outlen = min_len + rightmost % (max_len - min_len + 1)
            assert used * 8 == int(expected_bits), f"checkpoint COUNT = {count}"
            assert output == expected, f"checkpoint COUNT = {count}"
            checked += 1
    assert checked == len(checkpoints) > 0
    known_answers(label(name, "Monte"), checked)


def test_vector_table_covers_fixed_algorithms():
    from conftest import FIXED
    assert set(FIXED) == set(NIST_FILES) | {"md5"}
