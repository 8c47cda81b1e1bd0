/* The protocol codec and its validation of hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "proto/rfs_proto.h"
#include "unit_util.h"

static struct rfs_hdr req_hdr(uint16_t op, uint64_t var)
{
    return (struct rfs_hdr) { .magic = RFS_MAGIC, .version = RFS_VERSION, .op = op, .tag = 7,
                              .status = 0, .len = RFS_REQ_FIXED + var };
}

static void test_header_roundtrip(void **state)
{
    (void) state;
    struct rfs_hdr h = { RFS_MAGIC, RFS_VERSION, RFS_OP_PWRITE, 0xdeadbeef, -3,
                         0x0123456789abcdefull }, out;
    uint8_t buf[RFS_HDR_SIZE];
    rfs_hdr_encode(&h, buf);
    assert_int_equal(buf[0], 'R');      /* little-endian "RFS1" */
    assert_int_equal(buf[3], '1');
    assert_int_equal(rfs_hdr_decode(buf, &out), RFS_OK);
    assert_memory_equal(&h, &out, sizeof h);

    buf[0] ^= 1;
    assert_int_equal(rfs_hdr_decode(buf, &out), RFS_E_PROTO);
    buf[0] ^= 1;
    buf[4] = 2;                         /* version 2 */
    assert_int_equal(rfs_hdr_decode(buf, &out), RFS_E_PROTO);
}

static void test_fixed_roundtrip(void **state)
{
    (void) state;
    struct rfs_req r = { 5, RFS_O_RDWR | RFS_O_CREAT, 0640, 11, UINT64_MAX - 1, 1ull << 40 }, r2;
    uint8_t buf[RFS_REQ_FIXED];
    rfs_req_encode(&r, buf);
    rfs_req_decode(buf, &r2);
    assert_memory_equal(&r, &r2, sizeof r);

    struct rfs_rep p = { 1ull << 33, 4096, 0 }, p2;
    uint8_t pbuf[RFS_REP_FIXED];
    rfs_rep_encode(&p, pbuf);
    rfs_rep_decode(pbuf, &p2);
    assert_memory_equal(&p, &p2, sizeof p);
}

static void test_request_validation(void **state)
{
    (void) state;
    struct rfs_hdr h;
    struct rfs_req r = { 0 };

    h = req_hdr(RFS_OP_OPEN, 5);
    r.aux = 5;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_OK);
    r.aux = 4;                                  /* path length disagrees */
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_OPEN, RFS_MAX_PATH + 1);
    r.aux = RFS_MAX_PATH + 1;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_TOOBIG);
    h = req_hdr(RFS_OP_OPEN, 5);
    r.aux = 5;
    r.flags = 0x400;                            /* unknown flag */
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_INVAL);
    r.flags = RFS_O_ACCMODE;                    /* access mode 3 */
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_INVAL);
    r.flags = 0;
    r.handle = RFS_MAX_HANDLES;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_BADF);

    memset(&r, 0, sizeof r);
    h = req_hdr(RFS_OP_PWRITE, 100);
    r.length = 100;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_OK);
    r.length = 99;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_PWRITE, (uint64_t) RFS_MAX_DATA + 1);
    r.length = (uint64_t) RFS_MAX_DATA + 1;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_TOOBIG);
    h = req_hdr(RFS_OP_PWRITE, 10);
    r.length = 10;
    r.offset = (uint64_t) INT64_MAX - 5;        /* offset + length overflows off_t */
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_INVAL);

    memset(&r, 0, sizeof r);
    h = req_hdr(RFS_OP_PREAD, 0);
    r.length = (uint64_t) RFS_MAX_DATA + 1;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_TOOBIG);
    h = req_hdr(RFS_OP_PREAD, 3);               /* a read carries no data */
    r.length = 1;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);

    memset(&r, 0, sizeof r);
    h = req_hdr(RFS_OP_LOCK, 0);
    r.flags = 9;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_INVAL);
    r.flags = RFS_LOCK_WRITE;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_OK);

    /* LEASE: its kind, then exactly its data (none for DRAIN), a range
     * that stays an off_t */
    memset(&r, 0, sizeof r);
    h = req_hdr(RFS_OP_LEASE, RFS_LEASE_DATA);
    r.flags = RFS_LEASE_TAKE;
    r.length = 10;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_OK);
    r.offset = (uint64_t) INT64_MAX - 5;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_INVAL);
    r.offset = 0;
    h = req_hdr(RFS_OP_LEASE, RFS_LEASE_DATA - 1);
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_LEASE, RFS_LEASE_DATA);
    r.flags = RFS_LEASE_DRAIN;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_LEASE, 0);
    assert_int_equal(rfs_req_validate(&h, &r), RFS_OK);
    r.flags = 0;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_INVAL);
    r.flags = RFS_LEASE_DRAIN + 1;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_INVAL);

    h = req_hdr(0, 0);
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_END, 0);
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_FSYNC | RFS_REPLY, 0);
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_FSYNC, 0);
    h.status = 1;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
    h = req_hdr(RFS_OP_FSYNC, 0);
    h.len = RFS_REQ_FIXED - 1;
    assert_int_equal(rfs_req_validate(&h, &r), RFS_E_PROTO);
}

static void test_reply_validation(void **state)
{
    (void) state;
    struct rfs_hdr h = { RFS_MAGIC, RFS_VERSION, RFS_OP_PREAD | RFS_REPLY, 9, 0,
                         RFS_REP_FIXED + 100 };
    assert_int_equal(rfs_rep_validate(&h, RFS_OP_PREAD, 9, 100), RFS_OK);
    assert_int_equal(rfs_rep_validate(&h, RFS_OP_PREAD, 9, 99), RFS_E_PROTO);
    assert_int_equal(rfs_rep_validate(&h, RFS_OP_PREAD, 8, 100), RFS_E_PROTO);
    assert_int_equal(rfs_rep_validate(&h, RFS_OP_PWRITE, 9, 100), RFS_E_PROTO);
    h.len = RFS_REP_FIXED - 1;
    assert_int_equal(rfs_rep_validate(&h, RFS_OP_PREAD, 9, 100), RFS_E_PROTO);
    h.len = RFS_REP_FIXED;
    h.status = RFS_E_END;
    assert_int_equal(rfs_rep_validate(&h, RFS_OP_PREAD, 9, 100), RFS_E_PROTO);
    h.status = -1;
    assert_int_equal(rfs_rep_validate(&h, RFS_OP_PREAD, 9, 100), RFS_E_PROTO);
}

static void test_path_and_status(void **state)
{
    (void) state;
    assert_int_equal(rfs_path_validate("a/b", 3), RFS_OK);
    assert_int_equal(rfs_path_validate("a\0b", 3), RFS_E_INVAL);
    assert_int_equal(rfs_path_validate("", 0), RFS_E_INVAL);
    assert_int_equal(rfs_status_from_errno(ENOENT), RFS_E_NOENT);
    assert_int_equal(rfs_status_from_errno(EXDEV), RFS_E_ESCAPE);
    assert_int_equal(rfs_status_from_errno(ENOSPC), RFS_E_NOSPC);
    assert_int_equal(rfs_status_from_errno(EHOSTDOWN), RFS_E_IO);
    for (int s = 0; s < RFS_E_END; s++)
        assert_string_not_equal(rfs_status_str(s), "unknown status");
    assert_string_equal(rfs_status_str(RFS_E_END), "unknown status");
    assert_string_equal(rfs_op_name(RFS_OP_LOCK | RFS_REPLY), "lock");
}

/* Random frames: the validator never accepts one that breaks a limit. */
static void test_random_frames(void **state)
{
    (void) state;
    uint8_t buf[RFS_HDR_SIZE + RFS_REQ_FIXED];
    for (unsigned i = 0; i < 200000; i++) {
        fill_random(buf, sizeof buf, i);
        if (i & 1) {                    /* half of them with a valid preamble */
            buf[0] = 'R'; buf[1] = 'F'; buf[2] = 'S'; buf[3] = '1';
            buf[4] = RFS_VERSION; buf[5] = 0;
            buf[6] = (uint8_t) (i % (RFS_OP_END + 1)); buf[7] = 0;
            memset(buf + 12, 0, 4);
            for (int b = 19; b < 24; b++)
                buf[b] = 0;             /* plausible lengths */
        }
        struct rfs_hdr h;
        struct rfs_req r;
        if (rfs_hdr_decode(buf, &h) != RFS_OK)
            continue;
        rfs_req_decode(buf + RFS_HDR_SIZE, &r);
        if (rfs_req_validate(&h, &r) != RFS_OK)
            continue;
        uint64_t var = h.len - RFS_REQ_FIXED;
        assert_true(h.len >= RFS_REQ_FIXED);
        assert_true(var <= RFS_MAX_DATA);
        assert_true(h.op > 0 && h.op < RFS_OP_END);
        if (h.op != RFS_OP_UNLINK)
            assert_true(r.handle < RFS_MAX_HANDLES);
        if (h.op == RFS_OP_OPEN || h.op == RFS_OP_UNLINK)
            assert_true(var == r.aux && var <= RFS_MAX_PATH);
        if (h.op == RFS_OP_PREAD)
            assert_true(r.length <= RFS_MAX_DATA);
        assert_true(r.offset <= (uint64_t) INT64_MAX);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_roundtrip),
        cmocka_unit_test(test_fixed_roundtrip),
        cmocka_unit_test(test_request_validation),
        cmocka_unit_test(test_reply_validation),
        cmocka_unit_test(test_path_and_status),
        cmocka_unit_test(test_random_frames),
    };
    return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
