/* tests/mcu/test_small_table.c - the decoder built with a smaller string table
 * (FXT_STRING_TABLE_SIZE=256 in the MCU build): the last index that fits binds and resolves,
 * the first past it fails with FXT_ENOSPC and says so, and fxt_decoder_string reports it
 * unbound. Golden words from spec/fxt.md §4.6 (string record). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../test_main.h"

#include <fxtrace/fxt.h>
#include <string.h>

_Static_assert(FXT_STRING_TABLE_SIZE == 256, "the MCU build's table");

static struct fxt_str_slot table[FXT_STRING_TABLE_SIZE];
static struct fxt_decoder dec;

/* String record: type 2 [0..3] | size 2 words [4..15] -> 0x22; index [16..30]; length
 * [32..46]; then "abcdefgh" (8 bytes, no padding). */
static const uint64_t input[] = {
    UINT64_C(0x0016547846040010), /* magic */
    UINT64_C(0x0000000800ff0022), /* string, index 255, length 8 */
    UINT64_C(0x6867666564636261), /* "abcdefgh" */
    UINT64_C(0x0000000801000022), /* string, index 256, length 8 */
    UINT64_C(0x6867666564636261),
};

static void last_index_binds_next_fails(void **state)
{
  (void)state;
  struct fxt_record r;
  char err[FXT_DECODER_MSG_SIZE];
  const char *data;
  size_t len;
  assert_int_equal(fxt_decoder_init(&dec, input, sizeof input, table), 0);
  assert_int_equal(fxt_decoder_next(&dec, &r, err, sizeof err), 1); /* magic */
  assert_int_equal(fxt_decoder_next(&dec, &r, err, sizeof err), 1);
  assert_int_equal(r.kind, FXT_KIND_STRING);
  assert_int_equal(r.u.string.index, 255);
  assert_int_equal(fxt_decoder_string(&dec, 255, &data, &len), 0);
  assert_int_equal(len, 8);
  assert_memory_equal(data, "abcdefgh", 8);
  assert_int_equal(fxt_decoder_next(&dec, &r, err, sizeof err), FXT_ENOSPC);
  assert_true(strstr(err, "string index 256 past this build's table of 256") != NULL);
  assert_int_equal(fxt_decoder_string(&dec, 256, &data, &len), FXT_ENOENT);
  assert_int_equal(fxt_decoder_string(&dec, 0x7fff, &data, &len), FXT_ENOENT);
}

FXT_TEST_MAIN(
    cmocka_unit_test(last_index_binds_next_fails))
