/* tests/unit/test_grow.c - fxt_grow (src/base/grow.h), the growable arrays' growth step: the
 * capacities it picks (first, then doubled until need fits), the contents kept, and the
 * refusals that leave the caller's array and capacity as they were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../test_main.h"

#include <stdlib.h>

#include "base/grow.h"

static void test_capacities(void **state) {
  (void)state;
  int *v = NULL;
  size_t cap = 0;
  assert_true(fxt_grow((void **)&v, &cap, 0, sizeof *v, 16)); /* nothing needed: no array */
  assert_null(v);
  assert_int_equal(cap, 0);
  assert_true(fxt_grow((void **)&v, &cap, 1, sizeof *v, 16)); /* the first capacity */
  assert_non_null(v);
  assert_int_equal(cap, 16);
  for (int i = 0; i < 16; i++)
    v[i] = i;
  int *was = v;
  assert_true(fxt_grow((void **)&v, &cap, 16, sizeof *v, 16)); /* fits: untouched */
  assert_ptr_equal(v, was);
  assert_int_equal(cap, 16);
  assert_true(fxt_grow((void **)&v, &cap, 17, sizeof *v, 16)); /* one more: doubled */
  assert_int_equal(cap, 32);
  assert_true(fxt_grow((void **)&v, &cap, 100, sizeof *v, 16)); /* 32 -> 64 -> 128 */
  assert_int_equal(cap, 128);
  for (int i = 0; i < 16; i++)
    assert_int_equal(v[i], i);
  free(v);
  unsigned char *b = NULL;
  cap = 0;
  assert_true(fxt_grow((void **)&b, &cap, 1000, 1, 8)); /* from the first: 8 -> ... -> 1024 */
  assert_int_equal(cap, 1024);
  free(b);
}

static void test_refusals(void **state) {
  (void)state;
  unsigned char *b = malloc(4);
  assert_non_null(b);
  /* The capacity would overflow when doubled: no realloc, nothing changed. */
  size_t cap = SIZE_MAX / 2 + 1;
  assert_false(fxt_grow((void **)&b, &cap, cap + 1, 1, 16));
  assert_int_equal(cap, SIZE_MAX / 2 + 1);
  /* The bytes would overflow: the first capacity of 16 elements of SIZE_MAX / 8 bytes. */
  void *p = b;
  cap = 0;
  assert_false(fxt_grow(&p, &cap, 1, SIZE_MAX / 8, 16));
  assert_ptr_equal(p, b);
  assert_int_equal(cap, 0);
  free(b);
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_capacities), cmocka_unit_test(test_refusals))
