#!/usr/bin/env bash
# in-module.sh PREFIX CMD...: CMD in a clean environment (no PATH but the
# system's, no variable of ours but ROMIO_RDMA_SERVERS) with PREFIX's
# module file loaded by Debian's Lmod, as a user's job script does.
prefix=$1
shift
exec env -i HOME="${HOME:-/tmp}" PATH=/usr/bin:/bin TERM=dumb \
    ROMIO_RDMA_SERVERS="${ROMIO_RDMA_SERVERS:-}" bash --noprofile --norc -c \
    '. /usr/share/lmod/lmod/init/bash && module use "$0/share/modulefiles" &&
     module load romio-drivers && "$@"' "$prefix" "$@"
