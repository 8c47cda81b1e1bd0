/*
 * The security hints through MPI-IO against rfsd started with --keys (and,
 * for "tls", --tls-cert):
 *   rfs_security PREFIX DIR tcp|tls
 * PREFIX is prepended to file names (rfs:HOST:PORT:/, abt:rfs:...:/,
 * rdma:/); DIR holds good.key, wrong.key, ro.key (the server's read-only
 * key), ca.crt (the server's certificate) and other.crt (another one).
 * Checked: data written and read back with the good key; what
 * MPI_File_get_info reports; MPI_ERR_ACCESS with the reason for no key, a
 * wrong key, a certificate of someone else, and writes with a read-only
 * key; MPI_ERR_INFO_VALUE for an unknown transport; MPI_File_delete taking
 * its key from the environment.
 */
#include "itest.h"

#define BLOCK (1 << 20)

static char prefix[1024], dir[1024], mode[8];
static int rank, nprocs;

static MPI_Info make_info(const char *key_file, const char *ca, const char *transport)
{
    MPI_Info info;
    char path[2048];
    MPI_Info_create(&info);
    MPI_Info_set(info, "rfs_transport", transport);
    if (key_file) {
        snprintf(path, sizeof path, "%s/%s", dir, key_file);
        MPI_Info_set(info, "rfs_key_file", path);
    }
    if (ca) {
        snprintf(path, sizeof path, "%s/%s", dir, ca);
        MPI_Info_set(info, "rfs_tls_ca", path);
    }
    return info;
}

static const char *ca_of_mode(void)
{
    return strcmp(mode, "tls") == 0 ? "ca.crt" : NULL;
}

static int open_with(const char *name, int amode, const char *key_file, const char *ca,
                     MPI_File *fh)
{
    char full[2048];
    MPI_Info info = make_info(key_file, ca, mode);
    snprintf(full, sizeof full, "%s%s", prefix, name);
    int rc = MPI_File_open(MPI_COMM_WORLD, full, amode, info, fh);
    MPI_Info_free(&info);
    return rc;
}

static void expect_hint(MPI_File fh, const char *key, const char *value)
{
    MPI_Info info;
    char got[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag);
    MPI_Info_free(&info);
    CHECK(flag && strcmp(got, value) == 0, "hint %s: '%s', expected '%s'", key,
          flag ? got : "(unset)", value);
}

static void check_read_back(MPI_File fh)
{
    unsigned char *buf = malloc(BLOCK);
    MPI_Offset off = (MPI_Offset) rank * BLOCK;
    CHECK_MPI(MPI_File_read_at_all(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    int64_t bad = pattern_check(buf, BLOCK, (uint64_t) off, 5);
    CHECK(bad < 0, "byte %lld differs", (long long) bad);
    free(buf);
}

static void write_with_good_key(void)
{
    MPI_File fh;
    unsigned char *buf = malloc(BLOCK);
    MPI_Offset off = (MPI_Offset) rank * BLOCK;
    char path[2048];
    CHECK_MPI(open_with("sec.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, "good.key", ca_of_mode(),
                        &fh));
    pattern_fill(buf, BLOCK, (uint64_t) off, 5);
    CHECK_MPI(MPI_File_write_at_all(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_sync(fh));
    check_read_back(fh);
    expect_hint(fh, "rfs_transport", mode);
    snprintf(path, sizeof path, "%s/good.key", dir);
    expect_hint(fh, "rfs_key_file", path);
    if (ca_of_mode()) {
        snprintf(path, sizeof path, "%s/ca.crt", dir);
        expect_hint(fh, "rfs_tls_ca", path);
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(buf);
}

/* The open must fail with MPI_ERR_ACCESS, the message saying why. */
static void expect_refused(int amode, const char *key_file, const char *ca, const char *why)
{
    MPI_File fh;
    int rc = open_with("sec.dat", amode, key_file, ca, &fh), cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ACCESS, "key %s, ca %s: class %d (%s)", key_file ? key_file : "none",
          ca ? ca : "none", cls, rc ? err_string(rc) : "success");
    CHECK(!why || strstr(err_string(rc), why), "'%s' not in: %s", why, err_string(rc));
}

static void read_only_key(void)
{
    MPI_File fh;
    expect_refused(MPI_MODE_RDWR, "ro.key", ca_of_mode(), NULL);
    CHECK_MPI(open_with("sec.dat", MPI_MODE_RDONLY, "ro.key", ca_of_mode(), &fh));
    check_read_back(fh);
    CHECK_MPI(MPI_File_close(&fh));
}

static void unknown_transport(void)
{
    MPI_File fh;
    char full[2048];
    MPI_Info info = make_info("good.key", NULL, "tsl");
    snprintf(full, sizeof full, "%ssec.dat", prefix);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, full, MPI_MODE_RDONLY, info, &fh),
                MPI_ERR_INFO_VALUE);
    MPI_Info_free(&info);
}

/* MPI_File_delete has no hints: the environment names key and transport. */
static void delete_with_environment(void)
{
    char full[2048], key[2048], ca[2048];
    snprintf(full, sizeof full, "%ssec.dat", prefix);
    snprintf(key, sizeof key, "%s/wrong.key", dir);
    snprintf(ca, sizeof ca, "%s/ca.crt", dir);
    setenv("ROMIO_RFS_TRANSPORT", mode, 1);
    setenv("ROMIO_RFS_TLS_CA", ca, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        setenv("ROMIO_RFS_KEY_FILE", key, 1);
        CHECK_CLASS(MPI_File_delete(full, MPI_INFO_NULL), MPI_ERR_ACCESS);
        snprintf(key, sizeof key, "%s/good.key", dir);
        setenv("ROMIO_RFS_KEY_FILE", key, 1);
        CHECK_MPI(MPI_File_delete(full, MPI_INFO_NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 4, "usage: rfs_security PREFIX DIR tcp|tls");
    snprintf(prefix, sizeof prefix, "%s", argv[1]);
    snprintf(dir, sizeof dir, "%s", argv[2]);
    snprintf(mode, sizeof mode, "%s", argv[3]);
    unsetenv("ROMIO_RFS_KEY_FILE");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    write_with_good_key();
    expect_refused(MPI_MODE_RDONLY, NULL, ca_of_mode(), "authentication");
    expect_refused(MPI_MODE_RDONLY, "wrong.key", ca_of_mode(), "refused the key");
    if (strcmp(mode, "tls") == 0)
        expect_refused(MPI_MODE_RDONLY, "good.key", "other.crt", "certificate");
    read_only_key();
    unknown_transport();
    delete_with_environment();

    MPI_Finalize();
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
