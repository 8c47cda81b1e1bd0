/* The verbs transport's pure logic: message framing, credits, the choice
 * of RDMA READ or WRITE, the cut of I/O vectors into work requests. Runs
 * without an RDMA device. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "verbs/verbs_proto.h"
#include "unit_util.h"

static void test_header_round_trip(void **state)
{
    (void) state;
    uint8_t buf[VMSG_HDR_SIZE + 5];
    struct vmsg_hdr h = { .type = VMSG_RTS, .flags = VMSG_F_SERVER, .credits = 7, .seq = 3,
                          .rkey = 0xdeadbeef, .total = (5ull << 32) + 1,
                          .addr = 0x7f0012345678ull, .load = 0xfffffffe };
    vmsg_encode(&h, buf);
    struct vmsg_hdr d;
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), 0);
    assert_int_equal(d.type, VMSG_RTS);
    assert_int_equal(d.credits, 7);
    assert_int_equal(d.seq, 3);
    assert_int_equal(d.rkey, 0xdeadbeef);
    assert_true(d.total == (5ull << 32) + 1);
    assert_true(d.addr == 0x7f0012345678ull);
    assert_int_equal(d.flags, VMSG_F_SERVER);
    assert_true(d.load == 0xfffffffe);

    struct vmsg_hdr data = { .type = VMSG_DATA, .len = 5 };
    vmsg_encode(&data, buf);
    assert_int_equal(vmsg_decode(buf, sizeof buf, &d), 0);
    assert_int_equal(d.len, 5);
}

static void test_header_rejects(void **state)
{
    (void) state;
    uint8_t buf[VMSG_HDR_SIZE + 8];
    struct vmsg_hdr d;
    struct vmsg_hdr data = { .type = VMSG_DATA, .len = 8 };
    vmsg_encode(&data, buf);
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE + 7, &d), -EPROTO);    /* short */
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE - 1, &d), -EPROTO);
    struct vmsg_hdr fin = { .type = VMSG_FIN, .len = 8 };                   /* FIN with data */
    vmsg_encode(&fin, buf);
    assert_int_equal(vmsg_decode(buf, sizeof buf, &d), -EPROTO);
    struct vmsg_hdr rts = { .type = VMSG_RTS };                             /* empty rendezvous */
    vmsg_encode(&rts, buf);
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), -EPROTO);
    buf[0] = 9;                                                             /* unknown type */
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), -EPROTO);

    struct vmsg_hdr ok = { .type = VMSG_RTS, .total = 1, .flags = VMSG_F_SERVER, .load = 3 };
    vmsg_encode(&ok, buf);
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), 0);
    buf[1] = 0x02;                                                          /* unknown flag */
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), -EPROTO);
    vmsg_encode(&ok, buf);
    buf[39] = 1;                                                            /* padding not zero */
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), -EPROTO);
    struct vmsg_hdr cts = { .type = VMSG_CTS, .total = 1, .flags = VMSG_F_SERVER };
    vmsg_encode(&cts, buf);                                                 /* flags off an RTS */
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), -EPROTO);
    struct vmsg_hdr credit = { .type = VMSG_CREDIT, .load = 1 };            /* load off an RTS */
    vmsg_encode(&credit, buf);
    assert_int_equal(vmsg_decode(buf, VMSG_HDR_SIZE, &d), -EPROTO);
}

static void test_hello(void **state)
{
    (void) state;
    uint8_t b[VHELLO_SIZE];
    struct vhello h = { .depth = 16, .slot = 8224 }, d;
    vhello_encode(&h, b);
    assert_int_equal(vhello_decode(b, sizeof b, &d), 0);
    assert_int_equal(d.depth, 16);
    assert_int_equal(d.slot, 8224);
    assert_int_equal(vhello_decode(b, sizeof b - 1, &d), -EPROTO);
    assert_int_equal(vhello_decode(NULL, 0, &d), -EPROTO);
    h.depth = 1;                        /* no credit left after the reserved one */
    vhello_encode(&h, b);
    assert_int_equal(vhello_decode(b, sizeof b, &d), -EPROTO);
    h.depth = 16;
    h.slot = VMSG_HDR_SIZE;             /* no room for data */
    vhello_encode(&h, b);
    assert_int_equal(vhello_decode(b, sizeof b, &d), -EPROTO);
    h.slot = 8232;
    vhello_encode(&h, b);
    b[4] = 1;                           /* version 1: a 32-byte header, no load in the RTS */
    assert_int_equal(vhello_decode(b, sizeof b, &d), -EPROTO);
}

/* Fig. 6 of seed 001, every branch. */
static enum vrdv_way choose(uint32_t rload, int rserver, uint32_t sload, int sserver)
{
    return verbs_rendezvous_choose((struct vrdv_side) { rload, rserver },
                                   (struct vrdv_side) { sload, sserver }, 8);
}

static void test_rendezvous_choice(void **state)
{
    (void) state;
    /* No server under heavy load: the less loaded receiver reads, else the sender writes. */
    assert_int_equal(choose(1, 0, 2, 1), VRDV_READ);
    assert_int_equal(choose(2, 0, 2, 1), VRDV_WRITE);   /* equal: not less loaded */
    assert_int_equal(choose(3, 0, 2, 1), VRDV_WRITE);
    assert_int_equal(choose(1, 1, 7, 0), VRDV_READ);    /* server just below the threshold */
    assert_int_equal(choose(7, 1, 1, 0), VRDV_WRITE);
    /* A heavily loaded server receives: the client (sender) RDMA-writes, even when the
     * server is the less loaded side. */
    assert_int_equal(choose(8, 1, 100, 0), VRDV_WRITE);
    assert_int_equal(choose(8, 1, 1, 0), VRDV_WRITE);
    /* A heavily loaded server sends: the client (receiver) RDMA-reads, even when the
     * client is the more loaded side. */
    assert_int_equal(choose(100, 0, 8, 1), VRDV_READ);
    assert_int_equal(choose(1, 0, 8, 1), VRDV_READ);
    /* A busy client is no reason: loads decide. */
    assert_int_equal(choose(100, 0, 1, 0), VRDV_WRITE);
    assert_int_equal(choose(1, 0, 100, 0), VRDV_READ);
    /* Both servers busy (no client to turn to): loads decide. */
    assert_int_equal(choose(9, 1, 10, 1), VRDV_READ);
    assert_int_equal(choose(10, 1, 9, 1), VRDV_WRITE);
    /* Two servers, one busy: the other one does the work. */
    assert_int_equal(choose(9, 1, 1, 1), VRDV_WRITE);
    assert_int_equal(choose(1, 1, 9, 1), VRDV_READ);
    /* Loads at the top of the range. */
    assert_int_equal(choose(UINT32_MAX - 1, 0, UINT32_MAX, 0), VRDV_READ);
    assert_int_equal(choose(UINT32_MAX, 0, UINT32_MAX, 0), VRDV_WRITE);
}

/* Data messages never take the last credit; a credit return may. */
static void test_credits_reserve(void **state)
{
    (void) state;
    struct vcredits c;
    vcredits_init(&c, 4, 4);
    int sent = 0;
    while (vcredits_may_send(&c, 0)) {
        assert_int_equal(vcredits_spend(&c), 0);
        sent++;
    }
    assert_int_equal(sent, 3);
    assert_int_equal(c.send, 1);
    assert_false(vcredits_may_send(&c, 1));     /* nothing owed: no credit message */
    vcredits_reposted(&c);
    assert_false(vcredits_return_due(&c));      /* 1 of 4 owed */
    vcredits_reposted(&c);
    assert_true(vcredits_return_due(&c));       /* half */
    assert_true(vcredits_may_send(&c, 1));
    assert_int_equal(vcredits_spend(&c), 2);    /* carries both back */
    assert_int_equal(c.owed, 0);
    assert_int_equal(c.send, 0);
    vcredits_granted(&c, 3);
    assert_true(vcredits_may_send(&c, 0));
}

/* Two peers that exchange messages by the rules, each side running out in
 * turn, never get stuck: a simulation of the credit loop. */
static void test_credits_no_deadlock(void **state)
{
    (void) state;
    struct vcredits side[2];
    vcredits_init(&side[0], 4, 4);
    vcredits_init(&side[1], 4, 4);
    unsigned inflight[2] = { 0, 0 };    /* messages towards side i, credits they carry */
    uint16_t carried[2][64];
    int head[2] = { 0, 0 };
    unsigned want[2] = { 100, 37 };     /* data messages each wants to send */
    for (int step = 0; step < 10000 && (want[0] || want[1] || inflight[0] || inflight[1]); step++) {
        int s = step & 1, peer = !s;
        if (want[s] && vcredits_may_send(&side[s], 0)) {
            carried[peer][(head[peer] + inflight[peer]++) % 64] = vcredits_spend(&side[s]);
            want[s]--;
        } else if (vcredits_return_due(&side[s]) && vcredits_may_send(&side[s], 1)) {
            carried[peer][(head[peer] + inflight[peer]++) % 64] = vcredits_spend(&side[s]);
        }
        /* the receiving side takes one message and reposts its buffer */
        if (inflight[s]) {
            vcredits_granted(&side[s], carried[s][head[s]]);
            head[s] = (head[s] + 1) % 64;
            inflight[s]--;
            vcredits_reposted(&side[s]);
        }
        assert_true(inflight[0] <= 4 && inflight[1] <= 4);      /* never more than posted */
    }
    assert_int_equal(want[0], 0);
    assert_int_equal(want[1], 0);
}

/* Work requests of at most max_sge pieces and max_bytes bytes, in order,
 * empty segments skipped, covering the vector exactly. */
static void test_wr_plan(void **state)
{
    (void) state;
    enum { N = 100 };
    static char mem[N * 10];
    struct iovec iov[N];
    for (int i = 0; i < N; i++)
        iov[i] = (struct iovec) { mem + 10 * i, (size_t) (i % 7 == 3 ? 0 : 7) };
    struct viov_cursor c;
    viov_start(&c, iov, N);
    uint64_t total = viov_left(&c), seen = 0;
    struct viov_piece pc[4];
    int wrs = 0, expect_seg = 0;
    char *expect_addr = NULL;
    while (viov_left(&c) > 0) {
        uint64_t bytes;
        int np = viov_next_wr(&c, 4, 25, pc, &bytes);
        assert_true(np >= 1 && np <= 4);
        assert_true(bytes <= 25);
        uint64_t sum = 0;
        for (int j = 0; j < np; j++) {
            assert_true(pc[j].len > 0);
            if (expect_addr && pc[j].seg == expect_seg)
                assert_ptr_equal(pc[j].addr, expect_addr);      /* a split piece resumes */
            sum += pc[j].len;
            expect_seg = pc[j].seg;
            expect_addr = pc[j].addr + pc[j].len;
        }
        assert_true(sum == bytes);
        seen += bytes;
        wrs++;
    }
    assert_true(seen == total);
    assert_true(wrs >= (int) ((total + 24) / 25));
}

static void test_copy_and_skip(void **state)
{
    (void) state;
    char a[3], b[5], src[10], out[10];
    for (int i = 0; i < 10; i++)
        src[i] = (char) ('a' + i);
    struct iovec iov[3] = { { a, 3 }, { NULL, 0 }, { b, 5 } };
    struct viov_cursor c;
    viov_start(&c, iov, 3);
    viov_copy_in(&c, src, 4);
    viov_copy_in(&c, src + 4, 4);
    assert_memory_equal(a, "abc", 3);
    assert_memory_equal(b, "defgh", 5);
    assert_true(viov_left(&c) == 0);
    viov_start(&c, iov, 3);
    viov_skip(&c, 2);
    viov_copy_out(&c, out, 6);
    assert_memory_equal(out, "cdefgh", 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_round_trip),
        cmocka_unit_test(test_header_rejects),
        cmocka_unit_test(test_hello),
        cmocka_unit_test(test_rendezvous_choice),
        cmocka_unit_test(test_credits_reserve),
        cmocka_unit_test(test_credits_no_deadlock),
        cmocka_unit_test(test_wr_plan),
        cmocka_unit_test(test_copy_and_skip),
    };
    return cmocka_run_group_tests_name("verbs_proto", tests, NULL, NULL);
}
