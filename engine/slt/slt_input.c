/* SPDX-License-Identifier: MIT
 *
 * slt_input.c: reads a sqllogictest file whole, plain (.test) or
 * gzip-compressed (.test.gz, as ../shared/sqllogictest stores them).
 * zlib's gzread() passes bytes that are not gzip through unchanged, so
 * one path serves both; a truncated or damaged .gz is an error, never a
 * silently short file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "slt.h"

/* The largest file accepted: the corpus's biggest is 4 MB. */
#define SLT_FILE_SIZE_MAX (1024u * 1024u * 1024u)
#define SLT_READ_CHUNK (256u * 1024u)

/* Copies zlib's message for file (owned by file, gone at gzclose()). */
static void slt_gz_reason(gzFile file, char *reason, size_t reason_size)
{
    int zerr = Z_OK;
    const char *message = gzerror(file, &zerr);

    snprintf(reason, reason_size, "%s",
             message != NULL && message[0] != '\0' ? message : "read error");
}

int slt_read_file(const char *path, char **out, size_t *size, char *reason,
                  size_t reason_size)
{
    struct common_buf buf;
    gzFile file = gzopen(path, "rb");
    int rc = 0;

    *out = NULL;
    *size = 0;
    if (file == NULL) {
        snprintf(reason, reason_size, "cannot open: %s", strerror(errno));
        return COMMON_ECORRUPT;
    }
    common_buf_init(&buf, SLT_FILE_SIZE_MAX);
    for (;;) {
        rc = common_buf_reserve(&buf, SLT_READ_CHUNK);
        if (rc != 0) {
            snprintf(reason, reason_size, "%s",
                     rc == COMMON_ETOOBIG ? "file too large" : "out of memory");
            goto cleanup;
        }
        int got = gzread(file, buf.data + buf.size, SLT_READ_CHUNK);
        if (got < 0) {
            slt_gz_reason(file, reason, reason_size);
            rc = COMMON_ECORRUPT;
            goto cleanup;
        }
        if (got == 0) {
            break;
        }
        buf.size += (size_t)got;
    }
    /* A stream cut short ends the reads without an error from gzread;
     * gzerror() then says Z_BUF_ERROR. */
    int zerr = Z_OK;
    (void)gzerror(file, &zerr);
    if (zerr != Z_OK) {
        slt_gz_reason(file, reason, reason_size);
        rc = COMMON_ECORRUPT;
        goto cleanup;
    }
    *out = (char *)common_buf_detach(&buf, size);
    if (*out == NULL) {
        /* An empty file: a 1-byte buffer so callers need no special case. */
        *out = common_malloc(1);
        if (*out == NULL) {
            snprintf(reason, reason_size, "out of memory");
            rc = COMMON_ENOMEM;
        }
    }
cleanup:
    common_buf_close(&buf);
    gzclose(file);
    return rc;
}
