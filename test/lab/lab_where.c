/*
 * Where the ranks run in the lab: each rank finds its host's address (the
 * IPv4 address of its namespace's eth0), rank 0 prints them and checks
 * that there are HOSTS distinct hosts with the same number of ranks each;
 * and that each host has its own TMPDIR (abt:'s stage directory); then MB MiB cross the hosts by MPI_Allreduce (the runner checks that the
 * shaped links carried them), with the result checked.
 *   lab_where HOSTS MB
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include "../integration/itest.h"

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 3, "usage: lab_where HOSTS MB");
    int hosts = atoi(argv[1]);
    long mb = atol(argv[2]);

    char addr[INET_ADDRSTRLEN] = "none";
    struct ifaddrs *ifs, *i;
    CHECK(getifaddrs(&ifs) == 0, "getifaddrs");
    for (i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, "eth0") == 0)
            inet_ntop(AF_INET, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, addr, sizeof addr);
    freeifaddrs(ifs);
    const char *mine = getenv("MPIR_CVAR_CH3_INTERFACE_HOSTNAME");
    CHECK(mine && strcmp(mine, addr) == 0, "rank %d: eth0 %s, MPI's interface %s", rank, addr,
          mine ? mine : "(unset)");

    /* abt:'s stage directory (TMPDIR) is the host's own */
    const char *tmp = getenv("TMPDIR");
    CHECK(tmp && strstr(tmp, "/tmp-") != NULL, "rank %d: TMPDIR %s is not a lab host's", rank,
          tmp ? tmp : "(unset)");
    char tmps[256] = "";
    snprintf(tmps, sizeof tmps, "%s", tmp);
    char *alltmp = malloc((size_t) nprocs * sizeof tmps);
    MPI_Gather(tmps, sizeof tmps, MPI_CHAR, alltmp, sizeof tmps, MPI_CHAR, 0, MPI_COMM_WORLD);
    char *all = malloc((size_t) nprocs * sizeof addr);
    MPI_Gather(addr, sizeof addr, MPI_CHAR, all, sizeof addr, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int distinct = 0;
        for (int r = 0; r < nprocs; r++) {
            const char *a = all + r * sizeof addr;
            int count = 0, first = 1;
            for (int q = 0; q < nprocs; q++)
                if (strcmp(a, all + q * sizeof addr) == 0) {
                    count++;
                    if (q < r)
                        first = 0;
                }
            printf("rank %d on %s, TMPDIR %s\n", r, a, alltmp + r * sizeof tmps);
            for (int q = 0; q < nprocs; q++)
                CHECK((strcmp(a, all + q * sizeof addr) == 0)
                      == (strcmp(alltmp + r * sizeof tmps, alltmp + q * sizeof tmps) == 0),
                      "ranks %d and %d: TMPDIR is not per host", r, q);
            CHECK(count == nprocs / hosts, "%d ranks on %s, expected %d", count, a, nprocs / hosts);
            distinct += first;
        }
        CHECK(distinct == hosts, "%d hosts, expected %d", distinct, hosts);
    }
    free(all);
    free(alltmp);

    size_t n = (size_t) mb * 1048576 / sizeof(int);
    int *v = malloc(n * sizeof(int)), *sum = malloc(n * sizeof(int));
    CHECK(v && sum, "out of memory");
    for (size_t k = 0; k < n; k++)
        v[k] = (int) (k % 1000) + rank;
    CHECK_MPI(MPI_Allreduce(v, sum, (int) n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (size_t k = 0; k < n; k++)
        CHECK(sum[k] == (int) (k % 1000) * nprocs + nprocs * (nprocs - 1) / 2,
              "allreduce element %zu", k);
    free(v);
    free(sum);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
