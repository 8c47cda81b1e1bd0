#!/usr/bin/env python3
"""Seed inputs for the fuzzers: well-formed rfs request and reply streams
(docs/protocol.md), so that mutation starts from what the code expects."""
import os
import struct
import sys

MAGIC, VERSION, REPLY = 0x31534652, 1, 0x8000
(OPEN, CLOSE, PREAD, PWRITE, FSTAT, FTRUNCATE, FSYNC, UNLINK, PREALLOC, LOCK,
 SETVIEW, VREAD, VWRITE, LAYOUT, LREAD, LWRITE, AUTH, COLL) = range(1, 19)
HELLO, PROOF = 1, 2
VECTOR = 2


def request(op, tag, handle=0, flags=0, mode=0, aux=0, offset=0, length=0, var=b""):
    fixed = struct.pack("<IIIIQQ", handle, flags, mode, aux, offset, length)
    return struct.pack("<IHHIiQ", MAGIC, VERSION, op, tag, 0, 32 + len(var)) + fixed + var


def reply(op, tag, status=0, value=0, blksize=4096, data=b""):
    fixed = struct.pack("<QII", value, blksize, 0)
    return struct.pack("<IHHIiQ", MAGIC, VERSION, op | REPLY, tag, status, 16 + len(data)) + fixed + data


def main(out):
    os.makedirs(f"{out}/server", exist_ok=True)
    os.makedirs(f"{out}/client", exist_ok=True)
    path = b"/dir/file"
    session = (request(OPEN, 1, 0, 0x12, 0o644, len(path), var=path)
               + request(PWRITE, 2, 0, offset=10, length=5, var=b"hello")
               + request(PREAD, 3, 0, offset=0, length=100)
               + request(LOCK, 4, 0, flags=2, aux=1, offset=0, length=50)
               + request(LOCK, 5, 0, flags=3, offset=0, length=50)
               + request(FSTAT, 6) + request(FTRUNCATE, 7, length=3) + request(FSYNC, 8)
               + request(PREALLOC, 9, offset=0, length=4096) + request(CLOSE, 10)
               + request(UNLINK, 11, aux=len(path), var=path))
    open(f"{out}/server/session", "wb").write(session)
    # a view of 3 blocks of 4 bytes 10 apart (docs/protocol.md), written and read through
    view = struct.pack("<Bqqqqqq", VECTOR, 3, 4, 10, 0, 0, 24) + b"\0"
    open(f"{out}/server/view", "wb").write(
        request(OPEN, 1, 0, 0x12, 0o644, len(path), var=path)
        + request(SETVIEW, 2, 0, offset=16, length=len(view), var=view)
        + request(VWRITE, 3, 0, offset=5, length=20, var=b"v" * 20)
        + request(VREAD, 4, 0, offset=0, length=40) + request(CLOSE, 5))
    # object 1 of 3, 8-byte stripes after a 16-byte header: the view's share,
    # and list I/O of two pairs
    pairs = struct.pack("<QQQQ", 16, 4, 40, 6)
    open(f"{out}/server/striped", "wb").write(
        request(OPEN, 1, 0, 0x12, 0o644, len(path), var=path)
        + request(LAYOUT, 2, 0, flags=1, aux=3, offset=16, length=8)
        + request(SETVIEW, 3, 0, offset=0, length=len(view), var=view)
        + request(VWRITE, 4, 0, offset=0, length=12, var=b"s" * 4)
        + request(VREAD, 5, 0, offset=0, length=12)
        + request(LWRITE, 6, 0, aux=2, length=10, var=pairs + b"l" * 10)
        + request(LREAD, 7, 0, aux=2, length=10, var=pairs) + request(CLOSE, 8))
    # a collective call of one participant (it runs at once), a read kept hot,
    # and a call of two whose other participant never comes
    open(f"{out}/server/coll", "wb").write(
        request(OPEN, 1, 0, 0x12, 0o644, len(path), var=path)
        + request(COLL, 2, 0, flags=0, aux=1, offset=7, length=0xfeed)
        + request(LWRITE, 3, 0, aux=2, length=10, var=pairs + b"c" * 10)
        + request(COLL, 4, 0, flags=0, aux=1, mode=1, offset=8, length=0xfeed)
        + request(LREAD, 5, 0, aux=2, length=10, var=pairs)
        + request(COLL, 6, 0, flags=1, aux=2, offset=9, length=0xfeed)
        + request(SETVIEW, 7, 0, offset=0, length=len(view), var=view)
        + request(VWRITE, 8, 0, offset=0, length=12, var=b"d" * 12) + request(CLOSE, 9))
    # 'K' first: the server requires a key (fuzz_server.c); the fuzzer cannot
    # forge the proof, so this explores the exchange and the refusals
    name = b"fuzz"
    open(f"{out}/server/auth", "wb").write(
        b"K" + request(AUTH, 1, flags=HELLO, aux=len(name), var=name + b"n" * 32)
        + request(AUTH, 2, flags=PROOF, var=b"m" * 32)
        + request(OPEN, 3, 0, 0x12, 0o644, len(path), var=path))
    open(f"{out}/server/escape", "wb").write(
        request(OPEN, 1, 0, 0x12, 0o644, 9, var=b"../../etc"))
    # replies to fuzz_client's call sequence, tags in order
    answers = (reply(OPEN, 1, value=0)
               + reply(OPEN, 2) + reply(PREAD, 3, data=b"x" * 100)
               + reply(CLOSE, 4)
               + reply(PWRITE, 5, value=1 << 20) + reply(PWRITE, 6, value=1 << 20)
               + reply(PWRITE, 7, value=5)
               + reply(FSTAT, 8, value=123) + reply(LOCK, 9) + reply(UNLINK, 10))
    open(f"{out}/client/answers", "wb").write(answers)
    open(f"{out}/client/error", "wb").write(reply(OPEN, 1, status=1))


if __name__ == "__main__":
    main(sys.argv[1])
