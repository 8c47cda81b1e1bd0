#!/usr/bin/env bash
# Register this suite's ROMIO drivers in the ROMIO 3.2.1 of an Open MPI 4.1.4
# source tree (ompi/mca/io/romio321/romio), the io component Debian's Open MPI
# loads as mca_io_romio321.so.
#
#   apply.sh OPENMPI_SRC REPO
#
# The same registration as MPICH's (../mpich-patch/lib.sh, one drivers list:
# ../mpich-patch/drivers) at ROMIO 3.2.1's anchors, and one backport: ROMIO
# 3.2.1 takes its byte-range locks by fcntl on fd->fd_sys, which a remote
# file does not have; later ROMIO asks the driver (the SetLock slot at the end
# of the function table). The slot is added here, and a table without it (the
# drivers of ROMIO 3.2.1, which leave it NULL) keeps fcntl. The caller runs
# `autoreconf -vif -I confdb` in the ROMIO tree afterwards.
set -euo pipefail

src=$1
repo=$(cd "$2" && pwd)
romio=$src/ompi/mca/io/romio321/romio
. "$(dirname "$0")/../mpich-patch/lib.sh"

ANCHOR_FS_LIST=' *\[nfs ufs pfs pvfs pvfs2 testfs xfs panfs gridftp lustre gpfs zoidfs hfs piofs sfs'
ANCHOR_MK='^include \$\(top_srcdir\)/adio/ad_zoidfs/Makefile.mk'
ANCHOR_ADIO_H='^#define ADIO_GPFS'
ANCHOR_PROTO='^#ifdef ROMIO_ZOIDFS'

# ROMIO 3.2.1's prefixes are an if-chain (name to type), then one test per
# type (type to function table).
register_prefix() {
    insert_before "$1/adio/common/ad_fstype.c" '^    else if \(!strncmp\(filename, "gpfs:", 5\)' \
        "#ifdef ROMIO_$3
    else if (!strncmp(filename, \"$2:\", ${#2} + 1) || !strncmp(filename, \"$3:\", ${#2} + 1)) {
        *fstype = ADIO_$3;
    }
#endif"
    insert_before "$1/adio/common/ad_fstype.c" '^    if \(file_system == ADIO_TESTFS\) \{' \
        "#ifdef ROMIO_$3
    if (file_system == ADIO_$3)
        *ops = &ADIO_${3}_operations;
#endif"
}

backport_setlock() {
    local h=$romio/adio/include/adioi.h
    grep -q 'ADIOI_xxx_SetLock' "$h" && die "$h already has a SetLock slot"
    # after the last member, IwriteStridedColl (its declaration ends the struct)
    sed -i '/(\*ADIOI_xxx_IwriteStridedColl)/,/);$/{
/);$/a\    /* romio-drivers-suite: the driver'"'"'s byte-range locks (later ROMIO'"'"'s slot) */\
    int (*ADIOI_xxx_SetLock) (ADIO_File fd, int cmd, int type, ADIO_Offset offset,\
                              int whence, ADIO_Offset len);
}' "$h"
    grep -A3 'ADIOI_xxx_SetLock' "$h" | grep -q '^};' || die "SetLock slot not at the end of ADIOI_Fns_struct"
    insert_before "$h" '^/\* Unix-style file locking \*/' \
        "/* romio-drivers-suite: a driver's SetLock when its table has one, else fcntl */
#define ADIOI_Lock_fd(fd, cmd, type, offset, whence, len) \\
    ((fd)->fns->ADIOI_xxx_SetLock \\
     ? (fd)->fns->ADIOI_xxx_SetLock(fd, cmd, type, offset, whence, len) \\
     : ADIOI_Set_lock((fd)->fd_sys, cmd, type, offset, whence, len))
"
    local n
    n=$(grep -c 'ADIOI_Set_lock((fd)->fd_sys, F_SETLK' "$h")
    [ "$n" -ge 3 ] || die "$h: ROMIO's lock macros not found"
    sed -i 's/  ADIOI_Set_lock((fd)->fd_sys, F_SETLK/  ADIOI_Lock_fd((fd), F_SETLK/' "$h"
}

[ -d "$romio" ] || die "$romio: no ROMIO 3.2.1 in $src"
register_drivers "$romio" "$repo"
backport_setlock
mark_version "$romio" 3.2.1
