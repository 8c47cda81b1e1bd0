#!/bin/busybox sh
# /init of the check-rdma initramfs: load virtio and 9p, mount the host's
# root read-only over 9p, hand over to the guest script named on the
# kernel command line (rfs_guest=PATH, passed to us as an environment variable).
/bin/busybox mkdir -p /proc /sys /dev /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
         netfs fscache 9pnet 9pnet_virtio 9p; do
    /bin/busybox insmod /modules/$m.ko || echo "initramfs: insmod $m failed"
done
if ! /bin/busybox mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
        rootfs /newroot; then
    echo "initramfs: cannot mount the 9p root"
    /bin/busybox poweroff -f
fi
/bin/busybox mount --move /dev /newroot/dev
/bin/busybox umount /proc /sys
exec /bin/busybox switch_root /newroot /bin/sh "$rfs_guest"
