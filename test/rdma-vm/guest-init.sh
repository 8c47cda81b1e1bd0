#!/bin/sh
# PID 1 of the check-rdma guest, on the host's root (read-only 9p): mount
# what a system needs, bring up the virtio NIC and soft-RoCE on it, run the
# test script named by rfs_tests with the results share mounted on /results,
# power off. Kernel command line variables arrive in the environment.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
# The scratch tmpfs on /tmp would hide a repository checked out under /tmp,
# and its MPICH build when ROMIO_DRIVERS_CACHE is there (the MPI passes
# were skipped, "no MPICH build"): carry both across on bind mounts.
install=$(readlink -f "$rfs_repo/build/install")
mount -t tmpfs keep /mnt
for d in "$rfs_repo" "$install"; do
    case "$d" in /tmp/*) mkdir -p "/mnt$d" && mount --bind "$d" "/mnt$d" ;; esac
done
mount -t tmpfs tmp /tmp
for d in "$rfs_repo" "$install"; do
    case "$d" in /tmp/*) mkdir -p "$d" && mount --bind "/mnt$d" "$d" ;; esac
done
mount -t tmpfs run /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs shm /dev/shm
ulimit -l unlimited
modprobe 9pnet_virtio 2>/dev/null
mkdir -p /tmp/results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results /tmp/results
modprobe virtio_net
for i in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
modprobe rdma_rxe
modprobe rdma_ucm
rdma link add rxe0 type rxe netdev eth0
echo "rfs-guest: ready"
cd /tmp
bash "$rfs_tests" /tmp/results > /tmp/results/guest.log 2>&1
echo "rfs-guest: tests finished ($?)"
sync
umount /tmp/results
busybox poweroff -f
