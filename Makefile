# romio-drivers: ROMIO ADIO drivers for MPICH (rfs:, rdma:, abt:) and their server, rfsd.
#
#   make                 install Debian packages, build the patched MPICH (cached) and rfsd:
#                        Debian's own MPICH (bookworm 4.0.2, trixie 4.2.1), or MPICH_SOURCE=PATH
#                        (a release tarball or tree of 4.0.x, 4.2.x, 4.3.x or 5.0.x)
#   make check           unit tests, integration tests, ROMIO's and MPICH's I/O tests over rfs:,
#                        PnetCDF's tests over abt: (PnetCDF built once, cached)
#   make check-mpich-io  MPICH's test/mpi/io over rfs: and its collective tests over rdma:
#   make openmpi         the drivers in Open MPI's io component, for Debian's Open MPI (cached):
#                        bookworm 4.1.4, trixie 5.0.7
#   make check-openmpi   the drivers under Debian's Open MPI: tests, HDF5, ROMIO's suite
#   make check-trixie    the same project on Debian 13 trixie (a cached debootstrap root): a clean
#                        clone's make, tests, ROMIO's suite under trixie's MPICH and Open MPI 5
#   make check-apps      HDF5's and PnetCDF's parallel tests over every prefix (ufs: the
#                        baseline), MPICH's test/mpi/io over rdma:, abt:rfs:, abt:ufs:
#                        (CI's subset: test/apps/run.sh); check-apps-full: all of them
#   make check-sanitize  unit and integration tests under ASan+UBSan, TSan and valgrind
#   make check-rdma      the verbs transport and rfsd --rdma over soft-RoCE in a qemu guest
#   make check-lab       the drivers on a virtual cluster (test/lab/): 4 server hosts, 2 client
#                        hosts with 2 ranks each, in network namespaces behind shaped links
#   make check-fuzz      libFuzzer on the protocol decoders, FUZZ_SECONDS each (default 60)
#   make install         MPICH with the drivers, rfsd, the Open MPI component (if made), man
#                        pages, the systemd unit, docs and a module file into PREFIX
#                        (default /usr/local; DESTDIR for packagers): docs/deploy.md
#   make uninstall       what make install put into PREFIX, nothing else
#   make check-install   make install into a temporary prefix, then a program built and run
#                        through Lmod's module load against rfsd started from config files
#   make demo            4 processes write and read a file through rfs: on loopback
#   make bench           rfs: throughput against a raw TCP stream, same run; then the
#                        noncontiguous patterns (native vs data sieving vs ufs), the ABT
#                        experiment and rdma:'s methods (bench-noncontig, -abt, -rdma)
#   make bench-noncontig the noncontiguous patterns alone
#   make bench-abt       the RFS paper's ABT experiment (periodic output, slow link)
#   make bench-rdma      rdma: over 4 servers: naive, data sieving, list and datatype I/O
#   make bench-coll      rdma: collective I/O: disk-directed vs two-phase vs independent,
#                        and issue 21's interleaved segments against rfs: and ufs: (2 and 4
#                        processes, each row beside the time of one MPI_Barrier in its jobs)
#   make bench-scale     one rfsd holding 100 to 10,000 connections, 64 or 1,000 of them
#                        active, against the 64 active alone (scale_load.c): rates,
#                        latency, rfsd's memory per idle connection (plain and TLS); then
#                        one collective open's cost for 2 to 32 processes, rfs: and rdma:
#                        against ufs:, on loopback and the lab (open_cost.c)
#   make bench-reg       registration costs (seed 000 Table 3) on the first verbs device
#   make bench-lab       rfs:, rdma:, collective and abt: (MPI-IO, HDF5, PnetCDF) on the lab's
#                        virtual cluster against iperf3 on the same links (LAB_RATE, default
#                        500mbit; LAB_PARTS, default "rfs tls rdma coll abt abtlib interleave
#                        replicas mount", selects parts): docs/performance.md

# MPICH_SOURCE: an MPICH release tarball or source tree (4.0.x, 4.2.x, 4.3.x,
# 5.0.x) to build the drivers into; without it, Debian's own MPICH (bookworm
# 4.0.2, trixie 4.2.1) from apt-get source.
MPICH_SOURCE  ?=
MPICH_VERSION := $(shell bash scripts/mpich-version.sh '$(MPICH_SOURCE)')
CACHE_ROOT    ?= $(or $(ROMIO_DRIVERS_CACHE),/var/cache/romio-drivers)
# The MPICH build is keyed by version, the patch, the driver file lists and
# this checkout's path: its ROMIO tree links to this checkout's drivers, so
# each checkout on a machine has its own (a second checkout builds once).
MPICH_KEY     := $(shell { cat mpich-patch/* ad_*/Makefile.mk adio/romio.mk common/romio.mk; \
                   echo '$(CURDIR)'; } | sha256sum | cut -c1-16)
MPICH_DIR     := $(CACHE_ROOT)/mpich-$(MPICH_VERSION)-$(MPICH_KEY)
# Open MPI's io component with the drivers, for Debian's Open MPI (bookworm
# 4.1.4, ROMIO 3.2.1; trixie 5.0.7, ROMIO 3.4.1: scripts/openmpi-version.sh),
# keyed the same way (docs/openmpi.md).
OPENMPI_VERSION := $(shell bash scripts/openmpi-version.sh)
OPENMPI_KEY   := $(shell { cat mpich-patch/* openmpi-patch/* ad_*/Makefile.mk adio/romio.mk \
                   common/romio.mk; echo '$(OPENMPI_VERSION) $(CURDIR)'; } | sha256sum | cut -c1-16)
OPENMPI_DIR   := $(CACHE_ROOT)/openmpi-$(OPENMPI_VERSION)-$(OPENMPI_KEY)
# PnetCDF built with that MPICH's mpicc, for its own tests (test/apps/)
PNETCDF_DIR   := $(MPICH_DIR)-pnetcdf
# parallel HDF5 and its testpar programs, the same way (make check-apps)
HDF5_DIR      := $(MPICH_DIR)-hdf5
# The cached MPICH's install tree, linked as build/install
BUILD_PREFIX  := $(CURDIR)/build/install
# make install's prefix and staging directory (packagers' DESTDIR)
PREFIX        ?= /usr/local
DESTDIR       ?=
OBJ           := build/obj

CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror
CPPFLAGS := -Iadio
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS   := -lpthread -lssl -lcrypto -lrdmacm -libverbs

DTYPE_SRC  := adio/dtype/dtype.c adio/dtype/dtype_iter.c adio/dtype/dtype_wire.c
ABT_SRC    := adio/abt/abt_engine.c adio/abt/abt_pool.c adio/abt/abt_stage.c adio/abt/abt_model.c \
              adio/abt/abt_sink_posix.c adio/abt/abt_sink_rfs.c adio/abt/abt_sink_stripe.c
STRIPE_SRC := adio/stripe/stripe.c adio/stripe/stripe_servers.c adio/stripe/stripe_file.c \
              adio/stripe/stripe_copies.c adio/stripe/stripe_io.c
REG_SRC    := adio/verbs/ogr.c adio/verbs/regcache.c
VERBS_SRC  := adio/verbs/net_verbs.c adio/verbs/verbs_setup.c adio/verbs/verbs_listen.c \
              adio/verbs/verbs_progress.c adio/verbs/verbs_rdma.c adio/verbs/verbs_send.c \
              adio/verbs/verbs_recv.c adio/verbs/verbs_proto.c adio/verbs/verbs_reg.c $(REG_SRC)
CORE_SRC   := adio/net/net_tcp.c adio/net/net_tls.c adio/net/net_endpoint.c $(VERBS_SRC) \
              adio/proto/rfs_proto.c adio/proto/rfs_client.c adio/proto/rfs_shared.c \
              adio/proto/rfs_auth.c $(DTYPE_SRC) $(STRIPE_SRC)
SERVER_SRC := adio/server/rfs_server.c adio/server/rfs_frame.c adio/server/rfs_dispatch.c \
              adio/server/rfs_fileops.c adio/server/rfs_nsops.c adio/server/rfs_view_io.c \
              adio/server/rfs_server_auth.c adio/server/rfs_move.c adio/server/rfs_path.c adio/server/rfs_log.c \
              adio/server/rfs_rate.c adio/server/rfs_coll.c adio/server/rfs_loop.c \
              adio/server/rfs_peers.c adio/server/rfs_lease.c
# The one list of the unit tests: make check, check-sanitize (ASan, TSan,
# valgrind) read it through `make print-UNIT_TESTS` and the like.
UNIT_TESTS := test_proto test_net test_namespace test_verbs_proto test_server test_lease test_dtype test_abt test_stripe \
              test_replicas test_security test_coll test_ogr
MPI_TESTS  := test_dtype_mpi
# Under TSan, the tests that start threads: the rest have no race to find.
TSAN_TESTS := $(filter-out test_proto test_verbs_proto test_dtype,$(UNIT_TESTS))

# Objects per flavour (plain, asan, tsan) so sanitizer builds never mix; the
# programs in $(FOBJ), the objects in $(FOBJ)/o, so that a source folder may
# bear a program's name (rfsd/).
FLAVOUR ?= plain
FOBJ     = $(OBJ)/$(FLAVOUR)
objs     = $(patsubst %.c,$(FOBJ)/o/%.o,$(1))

.PHONY: FORCE all deps mpich openmpi install uninstall check-install check-openmpi check-trixie pnetcdf hdf5 layering rfsd unit check check-lab lab-deps \
        check-rdma rdma-deps rdma-vm-progs check-sanitize check-mpich-io check-apps check-apps-full \
        check-fuzz demo bench bench-noncontig bench-abt bench-rdma \
        bench-coll bench-scale \
        bench-reg bench-lab \
        clean distclean
.DEFAULT_GOAL := all
all: mpich rfsd

deps:
	@bash scripts/install-deps.sh

mpich: deps
	@bash scripts/build-mpich.sh $(CURDIR) $(MPICH_DIR) $(MPICH_VERSION) '$(MPICH_SOURCE)'
	@mkdir -p build && [ "$$(readlink build/install)" = $(MPICH_DIR)/install ] || \
	    ln -sfn $(MPICH_DIR)/install build/install

# Debian's Open MPI and parallel HDF5, and the io component for it, linked
# as build/openmpi (the directory to put first in Open MPI's component path)
openmpi:
	@bash scripts/install-deps.sh openmpi
	@bash scripts/build-openmpi.sh $(CURDIR) $(OPENMPI_DIR) $(OPENMPI_VERSION)
	@mkdir -p build && [ "$$(readlink build/openmpi)" = $(OPENMPI_DIR)/components ] || \
	    ln -sfn $(OPENMPI_DIR)/components build/openmpi

# The project on Debian 13 trixie, in a root made once (debootstrap, cached in
# CACHE_ROOT-trixie): a clean clone's make with trixie's packages and MPICH
# 4.2.1, our tests, ROMIO's suite under trixie's mpicc.mpich programs, and
# make openmpi / check-openmpi for trixie's Open MPI 5 (test/trixie/).
# TRIXIE_MPICH_SOURCE: MPICH 4.2.1's source where the archive serves none.
TRIXIE_MPICH_SOURCE ?= $(firstword $(wildcard $(CURDIR)/../shared/sources/mpich-4.2.1.tar.*))
check-trixie:
	@bash scripts/install-deps.sh trixie
	@bash test/trixie/run.sh $(CURDIR) $(CACHE_ROOT)-trixie '$(TRIXIE_MPICH_SOURCE)'

# The drivers under Debian's Open MPI: integration tests, HDF5, ROMIO's suite
check-openmpi: openmpi $(FOBJ)/rfsd $(FOBJ)/rfs-mount
	@w=$$(mktemp -d); bash test/openmpi/run.sh $(CURDIR) $(OPENMPI_DIR) $$w $$w/res; \
	 read p f s < $$w/res 2>/dev/null || { p=0 f=1 s=0; }; rm -rf $$w; \
	 echo "openmpi: $$p passed, $$f failed, $$s skipped"; [ $$f -eq 0 ]

$(FOBJ)/o/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

$(FOBJ)/rfsd: $(call objs,rfsd/rfsd.c $(SERVER_SRC) $(CORE_SRC))
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(FOBJ)/rdma-resync: $(call objs,rfsd/rdma_resync.c $(CORE_SRC))
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

MOUNT_SRC := mount/rfs_mount.c mount/mount_common.c mount/mount_rfs.c mount/mount_rdma.c \
             adio/mount/mount_desc.c
$(FOBJ)/o/mount/%.o: CPPFLAGS += $(shell pkg-config --cflags fuse3 2>/dev/null)
$(FOBJ)/rfs-mount: $(call objs,$(MOUNT_SRC) $(CORE_SRC))
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) -lfuse3

$(FOBJ)/test_%: $(call objs,test/unit/test_%.c test/unit/unit_util.c $(SERVER_SRC) $(CORE_SRC) $(ABT_SRC))
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) -lcmocka

# The MPICH the MPI programs below link, rewritten only when it changes
# (MPICH_SOURCE, a new cache directory): they are rebuilt then.
$(FOBJ)/mpich-dir: FORCE
	@mkdir -p $(@D); echo '$(MPICH_DIR)' | cmp -s - $@ || echo '$(MPICH_DIR)' > $@
FORCE:

# Unit tests that use MPI as their oracle: built with our mpicc.
$(FOBJ)/test_dtype_mpi: test/unit/test_dtype_mpi.c common/dtype_mpi.c $(DTYPE_SRC) \
                        $(FOBJ)/mpich-dir | mpich
	@mkdir -p $(dir $@)
	$(BUILD_PREFIX)/bin/mpicc $(CPPFLAGS) -Icommon $(ALL_CFLAGS) $(filter %.c,$^) -o $@ -lcmocka

# Installed only when it differs: a make with nothing changed touches nothing.
rfsd: mpich $(FOBJ)/rfsd $(FOBJ)/rdma-resync $(FOBJ)/rfs-mount
	@for p in rfsd rdma-resync rfs-mount; do cmp -s $(FOBJ)/$$p $(BUILD_PREFIX)/bin/$$p || \
	    install -m 755 $(FOBJ)/$$p $(BUILD_PREFIX)/bin/$$p; done

# The cached MPICH tree is relocated into PREFIX (scripts/install.sh says
# how); the Open MPI component goes too if make openmpi made it.
OMPI_COMPONENTS = $(if $(wildcard $(OPENMPI_DIR)/components/*.so),$(OPENMPI_DIR)/components)
install: all
	@bash scripts/install.sh install $(CURDIR) $(MPICH_DIR)/install $(PREFIX) "$(DESTDIR)" \
	    $(OMPI_COMPONENTS)

uninstall:
	@bash scripts/install.sh uninstall $(PREFIX) "$(DESTDIR)"

check-install: all
	@bash scripts/install-deps.sh install
	@bash test/install/run.sh $(CURDIR) $(MPICH_DIR)/install $(OMPI_COMPONENTS)

# Programs that need an RDMA device: run in the soft-RoCE guest of check-rdma.
RDMA_VM_PROGS := test_verbs rfs_verbs_client stripe_verbs_client verbs_bench
$(FOBJ)/test_verbs: $(call objs,test/rdma-vm/test_verbs.c $(CORE_SRC))
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) -lcmocka

$(FOBJ)/rfs_verbs_client $(FOBJ)/stripe_verbs_client $(FOBJ)/verbs_bench: $(FOBJ)/%: $(call objs,test/rdma-vm/%.c $(CORE_SRC))
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

rdma-vm-progs: $(addprefix $(FOBJ)/,$(RDMA_VM_PROGS) rfsd)

# The verbs transport and rfsd --rdma over soft-RoCE in a qemu guest
# (Debian's kernel, the host's root over 9p): docs/testing.md, "check-rdma".
check-rdma: rdma-deps
	@bash test/rdma-vm/run.sh $(CURDIR)

rdma-deps:
	@bash scripts/install-deps.sh rdma

lab-deps:
	@bash scripts/install-deps.sh lab

unit: $(addprefix $(FOBJ)/,$(UNIT_TESTS) $(MPI_TESTS))

# adio/ is the MPI-free core that rfsd links too: no MPI or ROMIO header in it
# (the drivers' ROMIO glue is in common/).
layering:
	@! grep -rnE '^#include *[<"](mpi|mpio|adio|adioi|adio_extern)\.h[>"]' adio \
	    || { echo "layering: adio/ includes MPI or ROMIO headers (above)" >&2; exit 1; }

pnetcdf: mpich
	@bash scripts/build-pnetcdf.sh $(BUILD_PREFIX) $(PNETCDF_DIR)

hdf5: mpich
	@bash scripts/build-hdf5.sh $(BUILD_PREFIX) $(HDF5_DIR)

# The test command of README.md and CI: every suite runs, one summary line.
check: layering all unit pnetcdf
	@bash test/check.sh $(CURDIR) $(MPICH_DIR) $(PNETCDF_DIR)

# The lab (test/lab/lab.sh): servers and ranks on hosts of their own, in
# network namespaces behind tbf-shaped links (LAB_RATE, default 1gbit).
check-lab: all lab-deps
	@bash test/lab/check.sh $(CURDIR) $(MPICH_DIR)

# MPICH's test/mpi/io over rfs: (ROMIO_FSTYPE_FORCE=rfs:), then its
# collective tests over rdma: with disk-directed and with two-phase
# collectives (test/mpich-io/run.sh's default passes); make check runs it too.
check-mpich-io: all
	@w=$$(mktemp -d); bash test/mpich-io/run.sh $(BUILD_PREFIX) $(MPICH_DIR) $$w $$w/res; \
	 read p f s < $$w/res; rm -rf $$w; echo "$$p passed, $$f failed, $$s skipped"; [ $$f -eq 0 ]

# The applications' own parallel suites over every prefix (test/apps/run.sh):
# quick is CI's subset, full every program with every process count.
check-apps: all pnetcdf hdf5
	@bash test/apps/run.sh $(CURDIR) $(MPICH_DIR) $(PNETCDF_DIR) $(HDF5_DIR) quick

check-apps-full: all pnetcdf hdf5
	@bash test/apps/run.sh $(CURDIR) $(MPICH_DIR) $(PNETCDF_DIR) $(HDF5_DIR) full

check-sanitize: all
	@bash test/sanitize.sh $(CURDIR)

# libFuzzer on the server's request engine and the client's reply handling.
FUZZ_SECONDS ?= 60
check-fuzz:
	@bash scripts/install-deps.sh fuzz
	@bash test/fuzz/run.sh $(CURDIR) $(FUZZ_SECONDS)

demo: all
	@bash test/demo.sh $(CURDIR)

bench: all
	@bash test/bench/run.sh $(CURDIR)
	@bash test/bench/noncontig.sh $(CURDIR)
	@bash test/bench/abt.sh $(CURDIR)
	@bash test/bench/rdma.sh $(CURDIR)

bench-rdma: all
	@bash test/bench/rdma.sh $(CURDIR)

bench-coll: all
	@bash test/bench/coll.sh $(CURDIR)

bench-lab: all pnetcdf hdf5
	@bash scripts/install-deps.sh bench-lab
	@HDF5_DIR=$(HDF5_DIR) PNETCDF_DIR=$(PNETCDF_DIR) bash test/bench/lab.sh $(CURDIR) \
	    $(or $(LAB_RATE),500mbit)

# Registration costs (seed 000, Table 3) through ibv_reg_mr on the first
# verbs device: only in the soft-RoCE VM (test/rdma-vm/); elsewhere it says
# it skips. Built against libibverbs when its headers are installed.
HAVE_VERBS := $(shell test -f /usr/include/infiniband/verbs.h && echo yes)
$(FOBJ)/o/test/bench/reg_bench.o: CPPFLAGS += $(if $(HAVE_VERBS),-DHAVE_VERBS)
$(FOBJ)/reg_bench: $(call objs,test/bench/reg_bench.c $(REG_SRC))
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(if $(HAVE_VERBS),-libverbs)

# The load generator of bench-scale: the client library, no MPI.
$(FOBJ)/scale_load: $(call objs,test/bench/scale_load.c adio/proto/rfs_proto.c \
                      adio/proto/rfs_client.c adio/proto/rfs_auth.c adio/net/net_tcp.c \
                      adio/net/net_tls.c adio/net/net_endpoint.c)
	$(CC) $(ALL_CFLAGS) $^ -o $@ -lpthread -lssl -lcrypto

# The collective open's cost of bench-scale's last part: an MPI program,
# built with our mpicc (as test_dtype_mpi).
$(FOBJ)/open_cost: test/bench/open_cost.c test/bench/bench_check.h $(FOBJ)/mpich-dir | mpich
	@mkdir -p $(dir $@)
	$(BUILD_PREFIX)/bin/mpicc $(ALL_CFLAGS) $< -o $@

bench-scale: all lab-deps $(FOBJ)/scale_load $(FOBJ)/open_cost
	@bash test/bench/scale.sh $(CURDIR)

bench-reg: $(FOBJ)/reg_bench
	@$(FOBJ)/reg_bench; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 77 ]

bench-abt: all
	@bash test/bench/abt.sh $(CURDIR)

bench-noncontig: all
	@bash test/bench/noncontig.sh $(CURDIR)

# The value of a variable, for the scripts: make -s print-UNIT_TESTS
print-%:
	@echo $($*)

clean:
	rm -rf $(OBJ)

distclean: clean
	rm -rf build

# Keep the objects of the test programs between runs.
.SECONDARY:
