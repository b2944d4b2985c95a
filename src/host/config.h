/* config.h - what config.c offers the tracer besides fxt_config_parse (session.h). */
#ifndef FXTRACE_HOST_CONFIG_H
#define FXTRACE_HOST_CONFIG_H

#include <stddef.h>

/* The value of the last entry key=value of an FXTRACE text, blanks around it trimmed, into
 * out: 1, 0 when no entry has that key, or FXT_E2BIG when it does not fit in size bytes. For
 * keys that fxt_config_parse checked and other modules apply (the function tracer's). */
int fxt_config_value(const char *text, const char *key, char *out, size_t size);

#endif
