#!/usr/bin/env bash
# make check-rdma: boot Debian's kernel under qemu (TCG, no KVM needed) with
# this machine's root shared read-only over 9p, bring up soft-RoCE (rxe) on
# the guest's virtio NIC, run guest-tests.sh there, collect its results from
# a writable 9p share and print "N passed, N failed, N skipped".
#   run.sh REPO [GUEST_SCRIPT]
# RDMA_VM_TIMEOUT (seconds, default 1200) bounds the whole guest run.
# ROMIO_VERBS_MODES: the test/romio/run.sh modes (comma separated) the
# guest runs ROMIO's test suite in over verbs (default
# rdma-2-65536-list-auto-auto-2: every file in two copies, and
# rdma-4-65536-list-auto-enable: every noncontiguous memory type as segments).
# BENCH_RUNS: the runs of each throughput figure (default 3, their median;
# CI takes 1: under TCG the figures inform, and the code paths are the same).
set -u
repo=$(cd "$1" && pwd)
guest_script=${2:-$repo/test/rdma-vm/guest-tests.sh}
budget=${RDMA_VM_TIMEOUT:-1200}

# The programs the guest runs: plain, and the transport's tests and the
# server with ASan+UBSan and with TSan (flags as in test/sanitize.sh).
asan="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
make -C "$repo" -s -j2 rdma-vm-progs || exit 1
# The rdma: driver's MPI test, when the patched MPICH is built.
if [ -x "$repo/build/install/bin/mpicc" ]; then
    "$repo/build/install/bin/mpicc" -std=c11 -D_GNU_SOURCE -O2 -I"$repo/adio" \
        -o "$repo/build/obj/plain/rdma_basic_mpi" "$repo/test/integration/rdma_basic.c" \
        "$repo/adio/stripe/stripe.c" || exit 1
    "$repo/build/install/bin/mpicc" -std=c11 -D_GNU_SOURCE -O2 \
        -o "$repo/build/obj/plain/rdma_subarray_mpi" "$repo/test/integration/rdma_subarray.c" \
        || exit 1
    "$repo/build/install/bin/mpicc" -std=c11 -D_GNU_SOURCE -O2 \
        -o "$repo/build/obj/plain/rfs_bench_mpi" "$repo/test/bench/rfs_bench.c" || exit 1
    # ROMIO's test suite, compiled here (mpicc under TCG takes minutes) into
    # build/obj/plain/romio/bin, which the guest runs (ROMIO_PHASE=run).
    mpich_dir=$(dirname "$(readlink -f "$repo/build/install")")
    ROMIO_PHASE=build bash "$repo/test/romio/run.sh" "$repo/build/install" "$mpich_dir" \
        "$repo/build/obj/plain/romio" /dev/null || exit 1
fi
make -C "$repo" -s -j2 FLAVOUR=asan EXTRA_CFLAGS="$asan" build/obj/asan/test_verbs \
    build/obj/asan/rfsd build/obj/asan/rfs_verbs_client || exit 1
make -C "$repo" -s -j2 FLAVOUR=tsan EXTRA_CFLAGS="-fsanitize=thread" build/obj/tsan/test_verbs \
    || exit 1

kernel=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$kernel" ] || { echo "check-rdma: no Debian kernel in /boot (install-deps.sh rdma)"; exit 1; }
kver=${kernel#/boot/vmlinuz-}

# The initramfs depends on the kernel and on our /init only: built once
# into the cache, outside git.
cache=${ROMIO_DRIVERS_CACHE:-/var/cache/romio-drivers}/rdma-vm
key=$(cat "$repo/test/rdma-vm/initramfs-init.sh" /bin/busybox | sha256sum | cut -c1-12)
initrd=$cache/initrd-$kver-$key.gz
if [ ! -s "$initrd" ]; then
    mkdir -p "$cache"
    stage=$(mktemp -d)
    mkdir -p "$stage/bin" "$stage/modules"
    cp /bin/busybox "$stage/bin/busybox"
    for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
             netfs fscache 9pnet 9pnet_virtio 9p; do
        cp "$(modinfo -k "$kver" -n "$m")" "$stage/modules/$m.ko" || exit 1
    done
    cp "$repo/test/rdma-vm/initramfs-init.sh" "$stage/init"
    chmod 755 "$stage/init"
    (cd "$stage" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$initrd.tmp" &&
        mv "$initrd.tmp" "$initrd"
    rm -rf "$stage"
fi

work=$(mktemp -d /tmp/check-rdma.XXXXXX)
mkdir -p "$work/results"
echo "check-rdma: booting $kver under qemu (TCG), results in $work"
start=$(date +%s)
qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 3G -M pc \
    -kernel "$kernel" -initrd "$initrd" \
    -append "console=ttyS0 rdinit=/init panic=1 quiet rfs_guest=$repo/test/rdma-vm/guest-init.sh rfs_tests=$guest_script rfs_repo=$repo${ROMIO_VERBS_MODES:+ romio_verbs_modes=$ROMIO_VERBS_MODES}${BENCH_RUNS:+ BENCH_RUNS=$BENCH_RUNS}" \
    -fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=root,mount_tag=rootfs \
    -fsdev local,id=res,path="$work/results",security_model=none \
    -device virtio-9p-pci,fsdev=res,mount_tag=results \
    -netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
    -display none -no-reboot -monitor none -serial file:"$work/console.log" &
qemu=$!
timed_out=0
while kill -0 "$qemu" 2>/dev/null; do
    if [ $(( $(date +%s) - start )) -ge "$budget" ]; then
        echo "check-rdma: guest still running after ${budget}s, killing qemu ($qemu)"
        kill "$qemu"
        sleep 2
        kill -9 "$qemu" 2>/dev/null
        timed_out=1
        break
    fi
    sleep 1
done
wait "$qemu" 2>/dev/null
echo "check-rdma: guest ran $(( $(date +%s) - start ))s"
[ -f "$work/results/guest.log" ] && cat "$work/results/guest.log"
if [ ! -s "$work/results/summary" ]; then
    echo "check-rdma: no results from the guest; console:"
    tail -40 "$work/console.log"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi
read -r p f s < "$work/results/summary"
[ $timed_out = 0 ] || f=$((f + 1))
echo "$p passed, $f failed, $s skipped"
[ "${KEEP_RESULTS:-0}" = 1 ] || rm -rf "$work"
[ "$f" -eq 0 ]
