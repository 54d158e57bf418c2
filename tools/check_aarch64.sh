#!/usr/bin/env bash
# The ARMv8 SHA tier checked on an x86 Linux machine, under qemu-user emulation.
#
# Builds once (kept in ${XDG_CACHE_HOME:-~/.cache}/jitdigest-aarch64, outside the repository) a
# Debian arm64 root file system with python3 and a venv holding the aarch64 wheels of numba,
# llvmlite, numpy, pytest, pytest-timeout and hypothesis (downloaded here by pip: pip inside the
# emulated system is not needed), copies the working tree into it, and runs tests/test_aarch64.py
# and `jitdigest info` three times:
#   max     QEMU_CPU=max: SHA1, SHA2, SHA512, SHA3 in HWCAP; SHA-3 forced on (JITDIGEST_ENABLE)
#   a72     QEMU_CPU=cortex-a72: SHA1 and SHA2 only, SHA-512 and SHA-3 fall back to portable
#   nosha2  QEMU_CPU=max, but Numba's target lacks +sha2: everything portable
# Exit 0 only when every run passes. Needs root (debootstrap, chroot, binfmt_misc) and
#   apt-get install -y qemu-user-static debootstrap binfmt-support
# Emulation checks correctness, detection and fallbacks, not speed.
#
#   tools/check_aarch64.sh            # all three runs
#   tools/check_aarch64.sh max a72    # some of them
#   tools/check_aarch64.sh build      # only build what is cached
#   JITDIGEST_AARCH64_REBUILD=1 ...   # build the root file system again
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/jitdigest-aarch64"
ROOTFS="$CACHE/rootfs"
WHEELS="$CACHE/wheels"
MIRROR="${JITDIGEST_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PY=3.11                      # bookworm's python3
# pytest-timeout: pyproject's "timeout" ini option is then a known key (no warning); the runs
# below turn it off with -o timeout=0 (compiling under emulation is slow).
PACKAGES="numba>=0.60,<0.69 llvmlite>=0.43,<0.51 numpy>=1.24,<2.5 pytest>=7.4,<10 hypothesis>=6.80,<7
          pytest-timeout>=2.2,<3"
MODES=("$@")
[ ${#MODES[@]} -gt 0 ] || MODES=(max a72 nosha2)

say() { printf '[check_aarch64 %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
timed() {  # timed LABEL command...: runs it and prints how long it took
    local label=$1 t0=$SECONDS; shift
    "$@"; local rc=$?
    say "$label: $((SECONDS - t0)) s"
    return $rc
}

binfmt() {
    # Child processes of the emulated Python (the SIGILL cases) are aarch64 executables too:
    # the kernel runs them through qemu only with a binfmt_misc entry.
    if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    fi
    if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
        update-binfmts --enable qemu-aarch64
    fi
    # Without the F flag the interpreter is opened inside the chroot: put it there too.
    local interp
    interp=$(sed -n 's/^interpreter //p' /proc/sys/fs/binfmt_misc/qemu-aarch64)
    mkdir -p "$ROOTFS$(dirname "$interp")"
    cp -f "$(readlink -f "$interp")" "$ROOTFS$interp"
}

unmount_left() {
    # /proc, /dev, /sys left mounted in the root file system by a run that was killed (SIGKILL:
    # no EXIT trap): rm -rf would go on into the host's /dev through the bind mount.
    local m
    awk -v r="$ROOTFS/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r \
        | while read -r m; do umount -l "$m"; done
}

build_rootfs() {
    unmount_left
    rm -rf --one-file-system "$ROOTFS"
    mkdir -p "$ROOTFS/usr/bin"
    debootstrap --arch=arm64 --foreign --variant=minbase --include=python3,python3-venv \
        bookworm "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
        || { tail -n 20 "$CACHE/debootstrap.log"; return 1; }
    cp /usr/bin/qemu-aarch64-static "$ROOTFS/usr/bin/"
    binfmt
    chroot "$ROOTFS" /debootstrap/debootstrap --second-stage >>"$CACHE/debootstrap.log" 2>&1 \
        || { tail -n 20 "$CACHE/debootstrap.log"; return 1; }
    touch "$ROOTFS/.jitdigest-rootfs-done"
}

build_venv() {
    rm -rf "$WHEELS" "$ROOTFS/opt/venv"
    # shellcheck disable=SC2086
    python3 -m pip download -q --only-binary=:all: --platform manylinux_2_28_aarch64 \
        --platform manylinux2014_aarch64 --python-version $PY --implementation cp \
        --abi cp${PY/./} -d "$WHEELS" $PACKAGES
    rm -rf "$ROOTFS/wheels" && cp -r "$WHEELS" "$ROOTFS/wheels"
    chroot "$ROOTFS" /usr/bin/python3 -m venv /opt/venv
    # shellcheck disable=SC2086
    chroot "$ROOTFS" /opt/venv/bin/pip install -q --no-index --find-links /wheels $PACKAGES
    touch "$ROOTFS/.jitdigest-venv-done"
}

install_tree() {
    # The working tree as git sees it (tracked and untracked, not ignored), on PYTHONPATH.
    rm -rf "$ROOTFS/src" && mkdir -p "$ROOTFS/src"
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard \
        | xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' \
        | tar --null -T - -cf -) | tar -xf - -C "$ROOTFS/src"
}

mounted=()
mount_all() {
    for d in proc dev sys; do
        if ! mountpoint -q "$ROOTFS/$d"; then
            mkdir -p "$ROOTFS/$d"
            case $d in proc) mount -t proc proc "$ROOTFS/proc" ;; *) mount --bind "/$d" "$ROOTFS/$d" ;; esac
            mounted+=("$ROOTFS/$d")
        fi
    done
}
umount_all() {
    for m in "${mounted[@]}"; do umount -l "$m" || true; done
}
trap umount_all EXIT

run_mode() {  # run_mode NAME: the tests and `jitdigest info` in one emulated configuration
    local mode=$1 env=(PYTHONPATH=/src HOME=/root PATH=/opt/venv/bin:/usr/bin:/bin
                       JITDIGEST_AARCH64_MODE="$mode" PYTHONDONTWRITEBYTECODE=1)
    case $mode in
        max) env+=(QEMU_CPU=max JITDIGEST_ENABLE=sha3) ;;
        a72) env+=(QEMU_CPU=cortex-a72) ;;
        nosha2) env+=(QEMU_CPU=max NUMBA_CPU_NAME=generic NUMBA_CPU_FEATURES=+neon) ;;
        *) say "unknown mode $mode (max, a72, nosha2)"; return 2 ;;
    esac
    say "run $mode: ${env[*]:5}"
    chroot "$ROOTFS" /usr/bin/env -i "${env[@]}" sh -c \
        'cd /src && python -m pytest tests/test_aarch64.py -q -o addopts=-ra -o timeout=0 \
            -p no:cacheprovider --durations=8' \
        && chroot "$ROOTFS" /usr/bin/env -i "${env[@]}" sh -c 'cd /src && python -m jitdigest info'
}

mkdir -p "$CACHE"
if [ -n "${JITDIGEST_AARCH64_REBUILD:-}" ] || [ ! -e "$ROOTFS/.jitdigest-rootfs-done" ]; then
    timed "rootfs (debootstrap arm64 bookworm, python3)" build_rootfs
    rm -f "$ROOTFS/.jitdigest-venv-done"
fi
binfmt
if [ ! -e "$ROOTFS/.jitdigest-venv-done" ]; then
    timed "venv (aarch64 wheels: numba, llvmlite, numpy, pytest(-timeout), hypothesis)" build_venv
fi
[ "${MODES[*]}" != build ] || exit 0
timed "copy working tree" install_tree
mount_all
failed=()
for mode in "${MODES[@]}"; do
    timed "run $mode" run_mode "$mode" || failed+=("$mode")
done
if [ ${#failed[@]} -gt 0 ]; then
    say "FAILED: ${failed[*]}"
    exit 1
fi
say "all passed: ${MODES[*]}"
