/* src/base/ftrace_format.c - record layout and format-file head of ftrace events (see
 * ftrace_format.h).
 */
#include "ftrace_format.h"

#include <stdio.h>

#include <fxtrace/fxt.h>
#include <fxtrace/tracepoint.h>

/* Per field type: the format's type text, size, signedness, and the FXT argument a typed
 * tracepoint records the value as (docs/fxt-conventions.md, events). */
static const struct {
  const char *name;
  uint32_t size;
  int is_signed;
  uint32_t arg;
} k_types[] = {
    [FXT_TYPE_U8] = {"u8", 1, 0, FXT_ARG_UINT32},
    [FXT_TYPE_U16] = {"u16", 2, 0, FXT_ARG_UINT32},
    [FXT_TYPE_U32] = {"u32", 4, 0, FXT_ARG_UINT32},
    [FXT_TYPE_U64] = {"u64", 8, 0, FXT_ARG_UINT64},
    [FXT_TYPE_S8] = {"s8", 1, 1, FXT_ARG_INT32},
    [FXT_TYPE_S16] = {"s16", 2, 1, FXT_ARG_INT32},
    [FXT_TYPE_S32] = {"s32", 4, 1, FXT_ARG_INT32},
    [FXT_TYPE_S64] = {"s64", 8, 1, FXT_ARG_INT64},
    [FXT_TYPE_BOOL] = {"bool", 1, 0, FXT_ARG_BOOL},
    [FXT_TYPE_DOUBLE] = {"double", 8, 1, FXT_ARG_DOUBLE},
    [FXT_TYPE_PTR] = {"void *", 8, 0, FXT_ARG_POINTER},
    [FXT_TYPE_STR] = {"__data_loc char[]", 4, 0, FXT_ARG_STRING},
    [FXT_TYPE_BYTES] = {"u8", 1, 0, FXT_ARG_STRING}, /* lowercase hex text */
};

/* Unknown types are taken as u64. */
static uint8_t known(uint8_t type) {
  return type == 0 || type > FXT_TYPE_BYTES ? FXT_TYPE_U64 : type;
}

const char *fxt_ff_type(uint8_t type, uint32_t *size, int *is_signed) {
  type = known(type);
  *size = k_types[type].size;
  *is_signed = k_types[type].is_signed;
  return k_types[type].name;
}

uint32_t fxt_ff_arg_type(uint8_t type) { return k_types[known(type)].arg; }

uint8_t fxt_ff_type_of_arg(uint32_t arg_type) {
  switch (arg_type) {
  case FXT_ARG_INT32: return FXT_TYPE_S32;
  case FXT_ARG_UINT32: return FXT_TYPE_U32;
  case FXT_ARG_INT64: return FXT_TYPE_S64;
  case FXT_ARG_UINT64:
  case FXT_ARG_KOID: return FXT_TYPE_U64;
  case FXT_ARG_DOUBLE: return FXT_TYPE_DOUBLE;
  case FXT_ARG_STRING: return FXT_TYPE_STR;
  case FXT_ARG_POINTER: return FXT_TYPE_PTR;
  case FXT_ARG_BOOL: return FXT_TYPE_BOOL;
  default: return 0;
  }
}

bool fxt_ff_arg_fits(uint8_t type, uint32_t arg) {
  return arg == fxt_ff_arg_type(type) || (type == FXT_TYPE_U64 && arg == FXT_ARG_UINT32) ||
         (type == FXT_TYPE_S64 && arg == FXT_ARG_INT32);
}

/* The offset of field f placed at *off or after (aligned to its size), moving *off past it. */
static uint32_t place(const struct fxt_ff_field *f, uint32_t *off, uint32_t *align) {
  int sg;
  fxt_ff_type(f->type, align, &sg); /* byte arrays: their element's alignment */
  uint32_t at = (*off + *align - 1) & ~(*align - 1);
  *off = at + (f->type == FXT_TYPE_BYTES ? f->bound : *align);
  return at;
}

uint32_t fxt_ff_layout(const struct fxt_ff_field *f, uint32_t n, uint32_t *offsets) {
  uint32_t off = FXT_FF_COMMON_BYTES, struct_align = 4, align;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t at = place(&f[i], &off, &align);
    if (offsets != NULL)
      offsets[i] = at;
    if (align > struct_align)
      struct_align = align;
  }
  return (off + struct_align - 1) & ~(struct_align - 1);
}

void fxt_ff_head(struct fxt_tbuf *b, const char *name, size_t name_len, uint32_t id,
                 const struct fxt_ff_field *f, uint32_t n) {
  char line[128];
  fxt_tbuf_puts(b, "name: ");
  fxt_tbuf_put(b, name, name_len);
  int k = snprintf(line, sizeof line, "\nID: %u\nformat:\n", id);
  fxt_tbuf_put(b, line, (size_t)k);
  fxt_tbuf_puts(b, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                   "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
                   "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
                   "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
  uint32_t off = FXT_FF_COMMON_BYTES, size;
  for (uint32_t i = 0; i < n; i++) {
    int sg;
    uint32_t at = place(&f[i], &off, &size);
    const char *type = fxt_ff_type(f[i].type, &size, &sg);
    fxt_tbuf_put(b, "\tfield:", 7);
    fxt_tbuf_puts(b, type);
    fxt_tbuf_put(b, " ", 1);
    fxt_tbuf_put(b, f[i].name, f[i].name_len);
    if (f[i].type == FXT_TYPE_BYTES)
      k = snprintf(line, sizeof line, "[%u];\toffset:%u;\tsize:%u;\tsigned:%d;\n", f[i].bound, at,
                   f[i].bound, sg);
    else
      k = snprintf(line, sizeof line, ";\toffset:%u;\tsize:%u;\tsigned:%d;\n", at, size, sg);
    fxt_tbuf_put(b, line, (size_t)k);
  }
  fxt_tbuf_put(b, "\nprint fmt: ", 12);
}
