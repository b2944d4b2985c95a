/* tests/unit/test_fxt_encode_objects.c - FXT encoders against golden words, and back through
 * the decoder: blobs, objects, scheduling, logs, large blobs, and the inputs that are refused.
 *
 * As in test_fxt_encode.c: every golden word was worked out by hand from spec/fxt.md and is
 * commented field by field ([a..b] = bits a to b, both inclusive); each record goes through
 * check_record (fxt_encode_test.h).
 */
#include "fxt_encode_test.h"
#include "../test_main.h"

/* ---- blob, objects ------------------------------------------------------------------------ */

static void test_blob(void **state) {
  (void)state;
  /* type 5 | size 2 -> 0x25 | [16..31] name 2 | [32..46] 5 bytes | [48..55] type 1 (data) */
  static const uint64_t golden[] = {UINT64_C(0x0001000500020025),
                                    UINT64_C(0x00000021626f6c62)}; /* "blob!" + 3 zeros */
  struct fxt_record in = {.kind = FXT_KIND_BLOB};
  in.u.blob = (struct fxt_blob){.name = fxt_str_index(2), .blob_type = FXT_BLOB_DATA,
                                .size = 5, .data = "blob!"};
  const struct fxt_record *r = check_words(&in, golden, 2);
  assert_text(r->u.blob.name, "name");
  assert_int_equal(r->u.blob.size, 5);
  assert_memory_equal(r->u.blob.data, "blob!", 5);

  /* size 3 -> 0x35 | name 0x8002 ("nm") | [32..46] 8 | [48..55] 3 (perfetto); name stream;
   * 8 payload bytes, no padding */
  static const uint64_t golden2[] = {UINT64_C(0x0003000880020035), UINT64_C(0x0000000000006d6e),
                                     UINT64_C(0x0807060504030201)};
  static const uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  in.u.blob = (struct fxt_blob){.name = fxt_str_inline("nm", 2), .blob_type = FXT_BLOB_PERFETTO,
                                .size = 8, .data = payload};
  assert_int_equal(check_words(&in, golden2, 3)->u.blob.blob_type, FXT_BLOB_PERFETTO);
}

static void test_userspace_object(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 6 | size 5 -> 0x56 | [16..23] process 0 (inline) | [24..39] name 0x8003 ->
       * 0x80_0300_0000 | [40..43] 1 arg -> 0x100_0000_0000 */
      UINT64_C(0x0000018003000056),
      UINT64_C(0x000000007fff0000), /* pointer */
      100,                          /* process koid: one word only */
      UINT64_C(0x00000000006a626f), /* "obj" */
      UINT64_C(0x0000000700030012), /* uint32 arg, name 3, value 7 */
  };
  struct fxt_record in = {.kind = FXT_KIND_USERSPACE_OBJECT};
  struct fxt_userspace_object *o = &in.u.userspace_object;
  o->pointer = 0x7fff0000;
  o->process = fxt_thread_inline(100, 999); /* thread koid is not stored */
  o->name = fxt_str_inline("obj", 3);
  o->num_args = 1;
  o->args[0] = arg_u32(3, 7);
  const struct fxt_record *r = check_words(&in, golden, 5);
  assert_int_equal(r->u.userspace_object.process.process_koid, 100);
  assert_int_equal(r->u.userspace_object.process.thread_koid, 0);
  assert_text(r->u.userspace_object.name, "obj");

  /* Indexed process: size 2 -> 0x26 | [16..23] thread 1 -> 0x1_0000 | [24..39] name 5 ->
   * 0x500_0000 | 0 args */
  static const uint64_t indexed[] = {UINT64_C(0x0000000005010026), UINT64_C(0x1000)};
  o->pointer = 0x1000;
  o->process = fxt_thread_index(1);
  o->name = fxt_str_index(5);
  o->num_args = 0;
  r = check_words(&in, indexed, 2);
  assert_int_equal(r->u.userspace_object.process.process_koid, 100);
}

static void test_kernel_object(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 7 | size 4 -> 0x47 | [16..23] 2 thread -> 0x2_0000 | [24..39] name 2 ->
       * 0x200_0000 | [40..43] 1 arg -> 0x100_0000_0000 */
      UINT64_C(0x0000010002020047),
      1234,                         /* koid */
      UINT64_C(0x0000000000030028), /* koid arg: [0..3] 8 | size 2 | name 3 */
      100,                          /* its value: the process */
  };
  struct fxt_record in = {.kind = FXT_KIND_KERNEL_OBJECT};
  struct fxt_kernel_object *o = &in.u.kernel_object;
  o->koid = 1234;
  o->obj_type = FXT_KOBJ_THREAD;
  o->name = fxt_str_index(2);
  o->num_args = 1;
  o->args[0] = (struct fxt_arg){.type = FXT_ARG_KOID, .name = fxt_str_index(3)};
  o->args[0].value.koid = 100;
  const struct fxt_record *r = check_words(&in, golden, 4);
  assert_int_equal(r->u.kernel_object.obj_type, FXT_KOBJ_THREAD);
  assert_int_equal(r->u.kernel_object.args[0].value.koid, 100);

  /* Process named inline: size 3 -> 0x37 | [16..23] 1 process | [24..39] 0x8004 -> 0x80_0400_0000 */
  static const uint64_t process[] = {UINT64_C(0x0000008004010037), 100,
                                     UINT64_C(0x00000000636f7270)}; /* "proc" */
  o->koid = 100;
  o->obj_type = FXT_KOBJ_PROCESS;
  o->name = fxt_str_inline("proc", 4);
  o->num_args = 0;
  assert_text(check_words(&in, process, 3)->u.kernel_object.name, "proc");
}

/* ---- scheduling, log ---------------------------------------------------------------------- */

static void test_context_switch(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 8 | size 5 -> 0x58 | [16..19] 1 arg -> 0x1_0000 | [20..35] cpu 3 -> 0x30_0000 |
       * [36..39] state 3 blocked -> 0x30_0000_0000 | [60..63] 1 -> 0x1000_0000_0000_0000 */
      UINT64_C(0x1000003000310058),
      5000, /* timestamp */
      101,  /* outgoing thread koid */
      102,  /* incoming thread koid */
      UINT64_C(0xffffffff00030011), /* int32 arg, name 3, -1 */
  };
  struct fxt_record in = {.kind = FXT_KIND_CONTEXT_SWITCH};
  struct fxt_context_switch *s = &in.u.context_switch;
  s->timestamp = 5000;
  s->cpu = 3;
  s->outgoing_state = FXT_THREAD_STATE_BLOCKED;
  s->outgoing_tid = 101;
  s->incoming_tid = 102;
  s->num_args = 1;
  s->args[0] = (struct fxt_arg){.type = FXT_ARG_INT32, .name = fxt_str_index(3)};
  s->args[0].value.i32 = -1;
  const struct fxt_record *r = check_words(&in, golden, 5);
  assert_int_equal(r->u.context_switch.cpu, 3);
  assert_int_equal(r->u.context_switch.outgoing_state, 3);
  assert_int_equal(r->u.context_switch.incoming_tid, 102);
}

static void test_wakeup(void **state) {
  (void)state;
  /* type 8 | size 3 -> 0x38 | 0 args | [20..35] cpu 0x1234 -> 0x1_2340_0000 | [60..63] 2 */
  static const uint64_t golden[] = {UINT64_C(0x2000000123400038), 6000, 102};
  struct fxt_record in = {.kind = FXT_KIND_WAKEUP};
  in.u.wakeup = (struct fxt_wakeup){.timestamp = 6000, .cpu = 0x1234, .waking_tid = 102};
  const struct fxt_record *r = check_words(&in, golden, 3);
  assert_int_equal(r->u.wakeup.cpu, 0x1234);
  assert_int_equal(r->u.wakeup.waking_tid, 102);
}

static void test_legacy_context_switch(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 8 | size 4 -> 0x48 | [16..23] cpu 2 -> 0x2_0000 | [24..27] state 2 ->
       * 0x200_0000 | [28..35] out thread 1 -> 0x1000_0000 | [36..43] in thread 0 (inline) |
       * [44..51] out prio 20 -> 0x0001_4000_0000_0000 | [52..59] in prio 30 ->
       * 0x01e0_0000_0000_0000 | [60..63] 0 */
      UINT64_C(0x01e1400012020048),
      7000, /* timestamp */
      100,  /* incoming process koid (outgoing is indexed: no koids) */
      102,  /* incoming thread koid */
  };
  struct fxt_record in = {.kind = FXT_KIND_LEGACY_CONTEXT_SWITCH};
  struct fxt_legacy_context_switch *s = &in.u.legacy_context_switch;
  s->timestamp = 7000;
  s->cpu = 2;
  s->outgoing_state = FXT_THREAD_STATE_SUSPENDED;
  s->outgoing = fxt_thread_index(1);
  s->incoming = fxt_thread_inline(100, 102);
  s->outgoing_priority = 20;
  s->incoming_priority = 30;
  const struct fxt_record *r = check_words(&in, golden, 4);
  assert_int_equal(r->u.legacy_context_switch.outgoing.thread_koid, 101);
  assert_int_equal(r->u.legacy_context_switch.incoming.thread_koid, 102);
  assert_int_equal(r->u.legacy_context_switch.incoming_priority, 30);
}

static void test_log(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* type 9 | size 6 -> 0x69 | [16..30] length 9 -> 0x9_0000 | [32..39] thread 0 */
      UINT64_C(0x0000000000090069),
      8000,                         /* timestamp */
      100,                          /* process koid */
      101,                          /* thread koid */
      UINT64_C(0x6f6c206f6c6c6568), /* "hello lo" */
      UINT64_C(0x0000000000000067), /* "g" + 7 zero bytes */
  };
  struct fxt_record in = {.kind = FXT_KIND_LOG};
  in.u.log = (struct fxt_log){.timestamp = 8000, .len = 9, .message = "hello log"};
  in.u.log.thread = fxt_thread_inline(100, 101);
  const struct fxt_record *r = check_words(&in, golden, 6);
  assert_true(text_is(r->u.log.message, r->u.log.len, "hello log"));

  /* Indexed thread, empty message: size 2 -> 0x29 | length 0 | [32..39] thread 1 */
  static const uint64_t empty[] = {UINT64_C(0x0000000100000029), 8001};
  in.u.log = (struct fxt_log){.timestamp = 8001, .len = 0, .message = NULL};
  in.u.log.thread = fxt_thread_index(1);
  assert_int_equal(check_words(&in, empty, 2)->u.log.len, 0);
}

/* ---- large blobs -------------------------------------------------------------------------- */

static void test_large_blob_event(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* [0..3] 15 | [4..35] size 6 -> 0x60 | [36..39] 0 large blob | [40..43] format 0 */
      UINT64_C(0x000000000000006f),
      /* format header: [0..15] category 1 | [16..31] name 2 | [32..35] 1 arg | [36..43]
       * thread 1 -> 0x10_0000_0000 */
      UINT64_C(0x0000001100020001),
      9000,                         /* timestamp (thread indexed: no koids) */
      UINT64_C(0x0000000700030012), /* uint32 arg, name 3, 7 */
      3,                            /* blob size */
      UINT64_C(0x0000000000636261), /* "abc" */
  };
  struct fxt_record in = {.kind = FXT_KIND_LARGE_BLOB_EVENT};
  struct fxt_large_blob_event *b = &in.u.large_blob_event;
  b->category = fxt_str_index(1);
  b->name = fxt_str_index(2);
  b->timestamp = 9000;
  b->thread = fxt_thread_index(1);
  b->num_args = 1;
  b->args[0] = arg_u32(3, 7);
  b->size = 3;
  b->data = "abc";
  const struct fxt_record *r = check_words(&in, golden, 6);
  assert_int_equal(r->u.large_blob_event.size, 3);
  assert_memory_equal(r->u.large_blob_event.data, "abc", 3);
  assert_int_equal(r->u.large_blob_event.thread.thread_koid, 101);
}

static void test_large_blob_attachment(void **state) {
  (void)state;
  static const uint64_t golden[] = {
      /* 15 | size 6 -> 0x60 | [36..39] 0 | [40..43] format 1 -> 0x100_0000_0000 */
      UINT64_C(0x000001000000006f),
      /* [0..15] category 0x8003 ("cat") | [16..31] name 2 */
      UINT64_C(0x0000000000028003),
      UINT64_C(0x0000000000746163), /* "cat" */
      9,                            /* blob size */
      UINT64_C(0x0807060504030201), /* payload bytes 1..8 */
      UINT64_C(0x0000000000000009), /* payload byte 9 + 7 zero bytes */
  };
  static const uint8_t payload[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  struct fxt_record in = {.kind = FXT_KIND_LARGE_BLOB_ATTACHMENT};
  in.u.large_blob_attachment = (struct fxt_large_blob_attachment){
      .category = fxt_str_inline("cat", 3), .name = fxt_str_index(2), .size = 9, .data = payload};
  const struct fxt_record *r = check_words(&in, golden, 6);
  assert_text(r->u.large_blob_attachment.category, "cat");
  assert_text(r->u.large_blob_attachment.name, "name");
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_invalid_inputs(void **state) {
  (void)state;
  uint8_t out[256];
  struct fxt_string s = {.index = 0, .len = 1, .data = "x"};
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_EINVAL); /* index 0 */
  s.index = 0x8000;
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_EINVAL); /* index > 0x7fff */
  s.index = 1;
  s.data = NULL;
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_EINVAL); /* NULL text */
  s = (struct fxt_string){.index = 1, .len = 0x8000, .data = "x"};
  assert_int_equal(fxt_encode_string(NULL, 0, &s), FXT_EINVAL); /* length > 15 bits */

  struct fxt_thread t = {.index = 0, .process_koid = 1, .thread_koid = 2};
  assert_int_equal(fxt_encode_thread(out, sizeof out, &t), FXT_EINVAL);

  struct fxt_event ev = {.type = FXT_EVENT_INSTANT};
  ev.thread = fxt_thread_index(1);
  ev.name = fxt_str_index(0x8001); /* neither an index nor the inline marker */
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.name = fxt_str_index(0xffff);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  static char big[32001];
  ev.name = fxt_str_inline(big, 32001); /* over Fuchsia's 32000-byte limit */
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), FXT_EINVAL);
  ev.name = fxt_str_inline(big, 32000);
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), 16 + 32000);
  ev.name = fxt_str_inline(NULL, 3);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.name = fxt_str_index(2);
  ev.type = 11;
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.type = FXT_EVENT_INSTANT;
  ev.num_args = 16;
  for (int i = 0; i < 15; i++)
    ev.args[i] = arg_u32(3, 1);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.num_args = 15;
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), 16 + 15 * 8);
  ev.args[14].name = fxt_str_index(0); /* empty argument name */
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14].name = fxt_str_inline("", 0);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14] = arg_u32(3, 1);
  ev.args[14].type = FXT_ARG_BLOB; /* decode-only */
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14].type = 11;
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);
  ev.args[14] = (struct fxt_arg){.type = FXT_ARG_STRING, .name = fxt_str_index(3)};
  ev.args[14].value.str = fxt_str_index(0x9000);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_EINVAL);

  struct fxt_arg blob = {.type = FXT_ARG_BLOB, .name = fxt_str_index(3)};
  assert_int_equal(fxt_arg_size(&blob), FXT_EINVAL);
  assert_int_equal(fxt_encode_arg(out, sizeof out, &blob), FXT_EINVAL);

  struct fxt_provider_event pe = {.id = 1, .event_id = 16};
  assert_int_equal(fxt_encode_provider_event(out, sizeof out, &pe), FXT_EINVAL);
  struct fxt_context_switch cs = {.outgoing_state = 16};
  assert_int_equal(fxt_encode_context_switch(out, sizeof out, &cs), FXT_EINVAL);
  struct fxt_legacy_context_switch lcs = {.outgoing_state = 16};
  assert_int_equal(fxt_encode_legacy_context_switch(out, sizeof out, &lcs), FXT_EINVAL);
  struct fxt_blob bl = {.size = 0x8000, .data = big};
  assert_int_equal(fxt_encode_blob(out, sizeof out, &bl), FXT_EINVAL);
  struct fxt_log lg = {.len = 0x8000, .message = big};
  assert_int_equal(fxt_encode_log(out, sizeof out, &lg), FXT_EINVAL);
  struct fxt_provider_info pi = {.id = 1, .name_len = 3, .name = NULL};
  assert_int_equal(fxt_encode_provider_info(out, sizeof out, &pi), FXT_EINVAL);

  struct fxt_record rec = {.kind = FXT_KIND_UNKNOWN};
  assert_int_equal(fxt_encode_record(out, sizeof out, &rec), FXT_EINVAL);
  rec.kind = 0;
  assert_int_equal(fxt_encode_record(out, sizeof out, &rec), FXT_EINVAL);
  assert_int_equal(fxt_encode_record(out, sizeof out, NULL), FXT_EINVAL);
  assert_int_equal(fxt_encode_event(out, sizeof out, NULL), FXT_EINVAL);
}

/* Records are limited to 4095 words (32760 bytes), large blobs included. */
static void test_record_size_limits(void **state) {
  (void)state;
  static char text[40000];
  static uint8_t out[FXT_MAX_RECORD_BYTES];
  /* String record: 1 header word + words(len). 32752 bytes -> 4095 words: fits exactly. */
  struct fxt_string s = {.index = 9, .len = 32752, .data = text};
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_MAX_RECORD_BYTES);
  s.len = 32753; /* 4096 words */
  assert_int_equal(fxt_encode_string(NULL, 0, &s), FXT_E2BIG);
  s.len = 0x7fff;
  assert_int_equal(fxt_encode_string(out, sizeof out, &s), FXT_E2BIG);

  /* Attachment: header, format header, size word + words(payload): 32736 bytes -> 4095. */
  struct fxt_large_blob_attachment a = {.size = 32736, .data = text};
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_MAX_RECORD_BYTES);
  a.size = 32737;
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_E2BIG);
  a.size = UINT64_C(1) << 40; /* no overflow in the size arithmetic */
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_E2BIG);
  a.size = UINT64_MAX;
  assert_int_equal(fxt_encode_large_blob_attachment(NULL, 0, &a), FXT_E2BIG);
  struct fxt_large_blob_event le = {.size = UINT64_MAX, .data = text};
  assert_int_equal(fxt_encode_large_blob_event(NULL, 0, &le), FXT_E2BIG);

  /* An argument alone over 4095 words: header + 32000-byte name (4000) + 800-byte value. */
  struct fxt_arg arg = {.type = FXT_ARG_STRING, .name = fxt_str_inline(text, 32000)};
  arg.value.str = fxt_str_inline(text, 800);
  assert_int_equal(fxt_arg_size(&arg), FXT_E2BIG);
  arg.value.str = fxt_str_inline(text, 752); /* 1 + 4000 + 94 = 4095 words */
  assert_int_equal(fxt_arg_size(&arg), FXT_MAX_RECORD_BYTES);

  /* An event whose arguments fit one by one but not together. */
  struct fxt_event ev = {.type = FXT_EVENT_INSTANT, .num_args = 15};
  ev.thread = fxt_thread_index(1);
  for (int i = 0; i < 15; i++) {
    ev.args[i] = (struct fxt_arg){.type = FXT_ARG_STRING, .name = fxt_str_index(3)};
    ev.args[i].value.str = fxt_str_inline(text, 2200); /* 1 + 275 words each */
  }
  assert_int_equal(fxt_encode_event(NULL, 0, &ev), FXT_E2BIG);
  assert_int_equal(fxt_encode_event(out, sizeof out, &ev), FXT_E2BIG);
}

FXT_TEST_MAIN(
    cmocka_unit_test(test_blob),
    cmocka_unit_test(test_userspace_object),
    cmocka_unit_test(test_kernel_object),
    cmocka_unit_test(test_context_switch),
    cmocka_unit_test(test_wakeup),
    cmocka_unit_test(test_legacy_context_switch),
    cmocka_unit_test(test_log),
    cmocka_unit_test(test_large_blob_event),
    cmocka_unit_test(test_large_blob_attachment),
    cmocka_unit_test(test_invalid_inputs),
    cmocka_unit_test(test_record_size_limits))
