/* core_ops.h - measured operations of bench_core (see core_ops.c). */
#ifndef FXT_BENCH_CORE_OPS_H
#define FXT_BENCH_CORE_OPS_H

#include <fxtrace/ring.h>
#include <fxtrace/writer.h>

FXT_EXTERN_C_BEGIN
/* n x (reserve a 48-byte record, write 5 words, commit); drains when full. */
void bench_writer_ops(struct fxt_writer *w, uint32_t n);
/* The same through fxt_ring_* with one 48-byte write. */
void bench_ring_ops(struct fxt_ring *r, uint32_t n);
/* The peer: n x (lock a mutex, copy 48 bytes into an array slot, unlock). */
void bench_peer_ops(uint32_t n);
/* Fills r with 48-byte records until full. */
void bench_fill(struct fxt_ring *r);
FXT_EXTERN_C_END

#endif
