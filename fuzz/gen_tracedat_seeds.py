#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_tracedat (fuzz/corpus/tracedat/): small trace.dat files, v6
and v7, built from spec tracedat.md with the kernel's own sched_switch / sched_wakeup /
ftrace print format texts (Linux 6.18), pages of 256 bytes (the reader takes the page size
from the file) holding every record form: short and long data records, TIME_EXTEND,
TIME_STAMP, a discarded-event padding, the kernel's tail padding, a page with missed events
(count stored) and one whose count is unknown (RB_MISSED_EVENTS alone). Also the refused
forms: compressed v7 and latency.

    gen_tracedat_seeds.py OUTDIR
"""
import os
import struct
import sys

HEADER_PAGE = (b"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
               b"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
               b"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
               b"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n")
HEADER_EVENT = (b"# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
                b"\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
                b"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n")
COMMON = (b"format:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
          b"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
          b"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
          b"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n")
SWITCH = (b"name: sched_switch\nID: 316\n" + COMMON +
          b"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
          b"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
          b"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
          b"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
          b"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
          b"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
          b"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
          b"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
          b"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
          b"(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
          b"0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? \"S\" : \"R\", \"\", "
          b"REC->next_comm, REC->next_pid, REC->next_prio\n")
WAKEUP = (b"name: sched_wakeup\nID: 374\n" + COMMON +
          b"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
          b"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
          b"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
          b"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
          b"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, "
          b"REC->target_cpu\n")
PRINT = (b"name: print\nID: 5\n" + COMMON +
         b"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
         b"\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n\n"
         b"print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n")
BLOB = (b"name: blob\nID: 1000\n" + COMMON +
        b"\tfield:__data_loc char[] path;\toffset:8;\tsize:4;\tsigned:0;\n"
        b"\tfield:u8 addr[4];\toffset:12;\tsize:4;\tsigned:0;\n"
        b"\tfield:s16 delta;\toffset:16;\tsize:2;\tsigned:1;\n"
        b"\tfield:const void * where;\toffset:24;\tsize:8;\tsigned:0;\n"
        b"\tfield:__rel_loc u32[] words;\toffset:32;\tsize:4;\tsigned:0;\n\n"
        b"print fmt: \"path=%s\", __get_str(path)\n")

PAGE = 256


def switch(pid, prev, nxt, nxt_pid, state):
    return (struct.pack("<HBBi16siiq16sii", 316, 0, 0, pid, prev, pid, 120, state, nxt,
                        nxt_pid, 120 if nxt_pid else 120))


def wakeup(pid, comm, woken, cpu):
    return struct.pack("<HBBi16siii", 374, 0, 0, pid, comm, woken, 120, cpu) + b"\0" * 4


def marker(pid, text):
    body = struct.pack("<HBBiQ", 5, 0, 0, pid, 0xffffffff81000000) + text + b"\0"
    return body + b"\0" * (-len(body) % 4)


def blob(pid):
    path = b"/tmp/x\0"
    words = struct.pack("<II", 7, 9)
    head = struct.pack("<HBBi", 1000, 0, 0, pid)
    # path at 36, words right after the rel_loc field end (36) + len(path) -> relative offset
    rel_off = 36 + len(path) - 36
    body = head + struct.pack("<I", (len(path) << 16) | 36) + bytes([10, 0, 0, 1])
    body += struct.pack("<h", -3) + b"\0" * 6 + struct.pack("<Q", 0xdeadbeef)
    body += struct.pack("<I", (len(words) << 16) | rel_off) + path + words
    return body + b"\0" * (-len(body) % 4)


def data_rec(payload, delta, long_form=False):
    assert len(payload) % 4 == 0
    if long_form or len(payload) > 112:
        return struct.pack("<II", delta << 5, len(payload) + 4) + payload
    return struct.pack("<I", (delta << 5) | (len(payload) // 4)) + payload


def extend(delta):
    return struct.pack("<II", ((delta & ((1 << 27) - 1)) << 5) | 30, delta >> 27)


def stamp(ts):
    return struct.pack("<II", ((ts & ((1 << 27) - 1)) << 5) | 31, (ts >> 27) & 0xffffffff)


def padding(nbytes):  # a discarded event: delta 1, array[0] = bytes after the header
    return struct.pack("<II", (1 << 5) | 29, nbytes) + b"\0" * (nbytes - 4)


UNKNOWN = -1  # missed= of page(): events were lost, the page does not say how many


def page(ts, records, missed=None, tail_pad=False):
    data = b"".join(records)
    if tail_pad:
        data += struct.pack("<I", 29)  # null padding: the page ends here
    commit = len(data)
    if missed == UNKNOWN:
        commit |= 1 << 31
    elif missed is not None:
        commit |= 1 << 31 | 1 << 30
        data += struct.pack("<Q", missed)
    body = struct.pack("<QQ", ts, commit) + data
    assert len(body) <= PAGE, len(body)
    return body + b"\0" * (PAGE - len(body))


def cpu_pages():
    base = 5000000000  # 5 s
    cpu0 = page(base, [data_rec(switch(100, b"app", b"swapper/0", 0, 1), 0),
                       data_rec(wakeup(0, b"app", 100, 0), 1500),
                       extend(750000000),
                       data_rec(switch(0, b"swapper/0", b"app", 100, 0), 0),
                       data_rec(marker(100, b"hello kernel"), 2000, long_form=True)])
    cpu0 += page(base + 800000000, [padding(12), data_rec(blob(100), 10),
                                    stamp(base + 900000000),
                                    data_rec(switch(100, b"app", b"worker", 101, 256), 0)],
                 missed=3, tail_pad=True)
    cpu1 = page(base + 100, [data_rec(switch(101, b"worker", b"swapper/1", 0, 2), 0),
                             data_rec(marker(101, b"tick"), 50)])
    cpu1 += page(base + 850000000, [data_rec(marker(101, b"late"), 0)], missed=UNKNOWN)
    return [cpu0, cpu1]


def options_v6(opts):
    out = b""
    for oid, payload in opts:
        out += struct.pack("<HI", oid, len(payload)) + payload
    return out + struct.pack("<H", 0)


COMMON_OPTS = [(4, b"local global [mono] boot x86-tsc\n\0"), (5, b"Linux seed 6.18 x86_64\0"),
               (1, b"0x66171596df64b\0"), (7, b"250\0"),
               (2, b"CPU: 0\nentries: 9\noverrun: 5\ncommit overrun: 0\nbytes: 400\n"
                   b"dropped events: 1\nread events: 9\n\0"),
               (8, struct.pack("<I", 2))]
CMDLINES = b"100 app\n101 worker\n"


def formats_v6():
    out = struct.pack("<I", 1) + struct.pack("<Q", len(PRINT)) + PRINT  # ftrace formats
    out += struct.pack("<I", 2)
    out += b"sched\0" + struct.pack("<I", 2)
    for f in (SWITCH, WAKEUP):
        out += struct.pack("<Q", len(f)) + f
    out += b"demo\0" + struct.pack("<I", 1) + struct.pack("<Q", len(BLOB)) + BLOB
    return out


def v6(with_options=True, latency=False):
    head = b"\x17\x08Dtracing6\0" + bytes([0, 8]) + struct.pack("<I", PAGE)
    head += b"header_page\0" + struct.pack("<Q", len(HEADER_PAGE)) + HEADER_PAGE
    head += b"header_event\0" + struct.pack("<Q", len(HEADER_EVENT)) + HEADER_EVENT
    head += formats_v6()
    head += struct.pack("<I", 0) + struct.pack("<I", 0)  # kallsyms, printk
    head += struct.pack("<Q", len(CMDLINES)) + CMDLINES
    head += struct.pack("<I", 2)
    if with_options:
        head += b"options  \0" + options_v6(COMMON_OPTS)
    if latency:
        return head + b"latency  \0" + b"# tracer: nop\n"
    head += b"flyrecord\0"
    pages = cpu_pages()
    table_at = len(head)
    clock = struct.pack("<Q", 6) + b"[mono]"
    start = table_at + 32 + len(clock)
    start += -start % PAGE
    table, data, off = b"", b"", start
    for p in pages:
        table += struct.pack("<QQ", off, len(p))
        data += p
        off += len(p)
    out = head + table + clock
    return out + b"\0" * (start - len(out)) + data


def section(sid, desc, payload):
    return struct.pack("<HHIQ", sid, 0, desc, len(payload)) + payload


def v7(compression=b"none\0\0"):
    head = b"\x17\x08Dtracing7\0" + bytes([0, 8]) + struct.pack("<I", PAGE) + compression
    opt_at_pos = len(head)
    head += struct.pack("<Q", 0)  # patched below
    secs, offsets = b"", {}
    base = len(head)
    def add(sid, payload):
        nonlocal secs
        offsets[sid] = base + len(secs)
        secs += section(sid, 0, payload)
    add(16, b"header_page\0" + struct.pack("<Q", len(HEADER_PAGE)) + HEADER_PAGE +
        b"header_event\0" + struct.pack("<Q", len(HEADER_EVENT)) + HEADER_EVENT)
    f = formats_v6()
    ftrace_len = 4 + 8 + len(PRINT)
    add(17, f[:ftrace_len])
    add(18, f[ftrace_len:])
    add(19, struct.pack("<I", 0))
    add(20, struct.pack("<I", 0))
    add(21, struct.pack("<Q", len(CMDLINES)) + CMDLINES)
    pages = cpu_pages()
    buf_hdr_at = base + len(secs)
    data_at = buf_hdr_at + 16
    data_at += -data_at % PAGE
    blob = b"\0" * (data_at - buf_hdr_at - 16) + b"".join(pages)
    add(3, blob)
    cpu_entries, off = b"", data_at
    for i, p in enumerate(pages):
        cpu_entries += struct.pack("<IQQ", i, off, len(p))
        off += len(p)
    opts = b"".join(struct.pack("<HI", oid, len(p)) + p for oid, p in COMMON_OPTS)
    for sid in (16, 17, 18, 19, 20, 21):
        opts += struct.pack("<HIQ", sid, 8, offsets[sid])
    buf_opt = struct.pack("<Q", buf_hdr_at) + b"\0" + b"mono\0" + struct.pack("<II", PAGE, 2)
    opts += struct.pack("<HI", 3, len(buf_opt) + len(cpu_entries)) + buf_opt + cpu_entries
    opts += struct.pack("<HIQ", 0, 8, 0)
    options_at = base + len(secs)
    secs += section(0, 0, opts)
    secs += section(15, 0, b"headers\0")
    out = head + secs
    return out[:opt_at_pos] + struct.pack("<Q", options_at) + out[opt_at_pos + 8:]


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    seeds = {"v6_all_records.dat": v6(), "v6_no_options.dat": v6(with_options=False),
             "v7_all_records.dat": v7(), "v7_zstd_refused.dat": v7(b"zstd\x001.5.4\0"),
             "v6_latency_refused.dat": v6(latency=True)}
    for name, data in seeds.items():
        with open(os.path.join(outdir, name), "wb") as fh:
            fh.write(data)


if __name__ == "__main__":
    main()
