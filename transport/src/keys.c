/* SPDX-License-Identifier: MIT
 *
 * keys.c: node ids as text, identity key files and authorized-keys files.
 *
 * An identity is an ed25519 key pair (libsodium crypto_sign_*). Its file is
 * text (docs/formats.md, "Key files"): a line naming the format and its
 * version, the public key, and the 32-byte seed the secret key is derived
 * from (crypto_sign_seed_keypair), each in hex. Like ssh, a key file that
 * its group or others may read or write is refused, and so is one whose
 * public key is not the one its seed derives: a mismatch means a damaged or
 * hand-edited file, never something to guess about. Secrets that pass
 * through the stack are wiped with sodium_memzero() on every path.
 */
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first line of an identity file. */
#define KEY_FILE_MAGIC "sinew-identity v1"

/* An identity file is three short lines; anything much longer is not one. */
#define KEY_FILE_SIZE_MAX 512

/* An authorized-keys file lists at most this many bytes: enough for about
 * 100,000 ids with comments, and a bound on what a bad path can make us
 * read. */
#define AUTHORIZED_KEYS_FILE_SIZE_MAX (8u << 20)

#define SEED_BYTES crypto_sign_SEEDBYTES
#define HEX_SIZE(bytes) (2 * (bytes) + 1)

STATIC_ASSERT(TRANSPORT_PUBLIC_KEY_BYTES == crypto_sign_PUBLICKEYBYTES,
              "node ids are ed25519 public keys");
STATIC_ASSERT(TRANSPORT_SECRET_KEY_BYTES == crypto_sign_SECRETKEYBYTES,
              "identities hold ed25519 secret keys");
STATIC_ASSERT(TRANSPORT_NODE_ID_TEXT_SIZE ==
                  HEX_SIZE(TRANSPORT_PUBLIC_KEY_BYTES),
              "a node id's text is its hex and a NUL");

/* sodium_init() is idempotent and thread-safe; it fails only when the
 * system has no random source, which we report as an I/O error. */
static int sodium_ready(void)
{
    return sodium_init() < 0 ? TRANSPORT_EIO : 0;
}

/* Lowercase hex of size bytes into out (2 * size + 1 bytes, NUL-ended). */
static void hex_encode(const uint8_t *bytes, size_t size, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < size; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    out[2 * size] = '\0';
}

/* Exactly 2 * size hex digits at text into out; TRANSPORT_EKEYFILE
 * otherwise (out may then hold part of the value). */
static int hex_decode(const char *text, size_t length, uint8_t *out,
                      size_t size)
{
    if (length != 2 * size) {
        return TRANSPORT_EKEYFILE;
    }
    for (size_t i = 0; i < size; i++) {
        int high = common_hex_value(text[2 * i]);
        int low = common_hex_value(text[2 * i + 1]);

        if (high < 0 || low < 0) {
            return TRANSPORT_EKEYFILE;
        }
        out[i] = (uint8_t)(high << 4 | low);
    }
    return 0;
}

void transport_node_id_format(const struct transport_node_id *id, char *out)
{
    ASSERT(id != NULL);
    ASSERT(out != NULL);
    hex_encode(id->key, sizeof(id->key), out);
}

int transport_node_id_parse(const char *text, struct transport_node_id *out)
{
    struct transport_node_id id;
    int rc;

    ASSERT(text != NULL);
    ASSERT(out != NULL);
    rc = hex_decode(text, strlen(text), id.key, sizeof(id.key));
    if (rc != 0) {
        return rc;
    }
    *out = id;
    return 0;
}

bool transport_node_id_equal(const struct transport_node_id *a,
                             const struct transport_node_id *b)
{
    ASSERT(a != NULL);
    ASSERT(b != NULL);
    return memcmp(a->key, b->key, sizeof(a->key)) == 0;
}

int transport_identity_generate(struct transport_identity *out)
{
    struct transport_identity identity;
    int rc;

    ASSERT(out != NULL);
    rc = sodium_ready();
    if (rc != 0) {
        return rc;
    }
    crypto_sign_keypair(identity.id.key, identity.secret);
    *out = identity;
    sodium_memzero(&identity, sizeof(identity));
    return 0;
}

/* Writes all of size bytes to fd, retrying short writes and EINTR. */
static int write_all(int fd, const char *bytes, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, bytes, size);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return -errno;
        }
        bytes += n;
        size -= (size_t)n;
    }
    return 0;
}

/* The file's text: the magic line, "public <hex>" and "seed <hex>". */
#define KEY_FILE_TEXT_SIZE                                                     \
    (sizeof(KEY_FILE_MAGIC) + sizeof("public ") +                              \
     HEX_SIZE(TRANSPORT_PUBLIC_KEY_BYTES) + sizeof("seed ") +                  \
     HEX_SIZE(SEED_BYTES))

static size_t key_file_text(const struct transport_identity *identity,
                            char *out)
{
    char public_hex[HEX_SIZE(TRANSPORT_PUBLIC_KEY_BYTES)];
    char seed_hex[HEX_SIZE(SEED_BYTES)];
    uint8_t seed[SEED_BYTES];
    int n;

    crypto_sign_ed25519_sk_to_seed(seed, identity->secret);
    hex_encode(identity->id.key, sizeof(identity->id.key), public_hex);
    hex_encode(seed, sizeof(seed), seed_hex);
    n = snprintf(out, KEY_FILE_TEXT_SIZE, "%s\npublic %s\nseed %s\n",
                 KEY_FILE_MAGIC, public_hex, seed_hex);
    sodium_memzero(seed, sizeof(seed));
    sodium_memzero(seed_hex, sizeof(seed_hex));
    ASSERT(n > 0);
    ASSERT((size_t)n < KEY_FILE_TEXT_SIZE);
    return (size_t)n;
}

int transport_identity_save(const struct transport_identity *identity,
                            const char *path)
{
    char text[KEY_FILE_TEXT_SIZE];
    size_t size;
    int fd;
    int rc;

    ASSERT(identity != NULL);
    ASSERT(path != NULL);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return errno == EEXIST ? TRANSPORT_EKEYFILE : -errno;
    }
    size = key_file_text(identity, text);
    rc = write_all(fd, text, size);
    sodium_memzero(text, sizeof(text));
    if (rc == 0 && fsync(fd) != 0) {
        rc = -errno;
    }
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    if (rc != 0) {
        unlink(path);
    }
    return rc;
}

/* Reads the whole of a file of at most size_max bytes into *out
 * (common_malloc'd, NUL-ended, *size bytes before the NUL). With
 * owner_only, a file whose mode grants anything to group or others is
 * refused. */
static int file_read(const char *path, size_t size_max, bool owner_only,
                     char **out, size_t *size)
{
    struct stat st;
    char *text = NULL;
    size_t used = 0;
    int fd;
    int rc = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        goto err_after_open;
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > size_max ||
        (owner_only && (st.st_mode & 077) != 0)) {
        rc = TRANSPORT_EKEYFILE;
        goto err_after_open;
    }
    text = common_malloc((size_t)st.st_size + 1);
    if (text == NULL) {
        rc = COMMON_ENOMEM;
        goto err_after_open;
    }
    while (used < (size_t)st.st_size) {
        ssize_t n = read(fd, text + used, (size_t)st.st_size - used);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rc = n < 0 ? -errno : TRANSPORT_EKEYFILE;
            goto err_after_alloc;
        }
        used += (size_t)n;
    }
    text[used] = '\0';
    close(fd);
    *out = text;
    *size = used;
    return 0;

err_after_alloc:
    sodium_memzero(text, (size_t)st.st_size + 1);
    common_free(text);
err_after_open:
    close(fd);
    return rc;
}

/* The next line of text from *cursor (up to '\n' or the end), without its
 * newline; advances *cursor past it. NULL when nothing is left. */
static const char *line_next(const char **cursor, const char *end,
                             size_t *length)
{
    const char *line = *cursor;
    const char *newline;

    if (line >= end) {
        return NULL;
    }
    newline = memchr(line, '\n', (size_t)(end - line));
    *length = (size_t)((newline != NULL ? newline : end) - line);
    *cursor = newline != NULL ? newline + 1 : end;
    return line;
}

/* A line "<name> <hex of size bytes>" into out. */
static int field_parse(const char *line, size_t length, const char *name,
                       uint8_t *out, size_t size)
{
    size_t name_length = strlen(name);

    if (line == NULL || length <= name_length ||
        memcmp(line, name, name_length) != 0 || line[name_length] != ' ') {
        return TRANSPORT_EKEYFILE;
    }
    return hex_decode(line + name_length + 1, length - name_length - 1, out,
                      size);
}

/* Parses the text of an identity file into *out, checking that the public
 * key is the one the seed derives. */
static int key_file_parse(const char *text, size_t size,
                          struct transport_identity *out)
{
    const char *cursor = text;
    const char *end = text + size;
    struct transport_identity identity;
    uint8_t public_key[TRANSPORT_PUBLIC_KEY_BYTES];
    uint8_t seed[SEED_BYTES];
    const char *line;
    size_t length = 0;
    int rc = TRANSPORT_EKEYFILE;

    line = line_next(&cursor, end, &length);
    if (line == NULL || length != strlen(KEY_FILE_MAGIC) ||
        memcmp(line, KEY_FILE_MAGIC, length) != 0) {
        goto done;
    }
    line = line_next(&cursor, end, &length);
    if (field_parse(line, length, "public", public_key, sizeof(public_key))) {
        goto done;
    }
    line = line_next(&cursor, end, &length);
    if (field_parse(line, length, "seed", seed, sizeof(seed)) != 0 ||
        cursor != end) {
        goto done;
    }
    crypto_sign_seed_keypair(identity.id.key, identity.secret, seed);
    if (sodium_memcmp(identity.id.key, public_key, sizeof(public_key)) != 0) {
        goto done;
    }
    *out = identity;
    rc = 0;
done:
    sodium_memzero(seed, sizeof(seed));
    sodium_memzero(&identity, sizeof(identity));
    return rc;
}

int transport_identity_load(const char *path, struct transport_identity *out)
{
    char *text;
    size_t size;
    int rc;

    ASSERT(path != NULL);
    ASSERT(out != NULL);
    rc = sodium_ready();
    if (rc != 0) {
        return rc;
    }
    rc = file_read(path, KEY_FILE_SIZE_MAX, true, &text, &size);
    if (rc != 0) {
        return rc;
    }
    rc = key_file_parse(text, size, out);
    sodium_memzero(text, size);
    common_free(text);
    return rc;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* One line of an authorized-keys file: blank or a comment (then *has_id is
 * false), or a node id, optionally followed by blanks and a comment. */
static int authorized_line_parse(const char *line, size_t length,
                                 struct transport_node_id *id, bool *has_id)
{
    size_t start = 0;
    size_t stop;

    while (start < length && is_blank(line[start])) {
        start++;
    }
    *has_id = false;
    if (start == length || line[start] == '#') {
        return 0;
    }
    stop = start;
    while (stop < length && !is_blank(line[stop])) {
        stop++;
    }
    for (size_t i = stop; i < length && line[i] != '#'; i++) {
        if (!is_blank(line[i])) {
            return TRANSPORT_EKEYFILE;
        }
    }
    *has_id = true;
    return hex_decode(line + start, stop - start, id->key, sizeof(id->key));
}

/* Counts the lines of text: an upper bound on its ids. */
static size_t line_count(const char *text, size_t size)
{
    size_t count = 1;

    for (size_t i = 0; i < size; i++) {
        count += text[i] == '\n';
    }
    return count;
}

static int authorized_parse(const char *text, size_t size,
                            struct transport_node_id *ids, size_t *count)
{
    const char *cursor = text;
    const char *line;
    size_t length = 0;
    size_t used = 0;

    while ((line = line_next(&cursor, text + size, &length)) != NULL) {
        bool has_id;
        int rc = authorized_line_parse(line, length, &ids[used], &has_id);

        if (rc != 0) {
            return rc;
        }
        used += has_id;
    }
    *count = used;
    return 0;
}

int transport_authorized_keys_load(const char *path,
                                   struct transport_node_id **out,
                                   size_t *count)
{
    struct transport_node_id *ids;
    size_t used = 0;
    char *text;
    size_t size;
    int rc;

    ASSERT(path != NULL);
    ASSERT(out != NULL);
    ASSERT(count != NULL);
    rc = file_read(path, AUTHORIZED_KEYS_FILE_SIZE_MAX, false, &text, &size);
    if (rc != 0) {
        return rc;
    }
    ids = common_malloc_array(line_count(text, size), sizeof(*ids));
    if (ids == NULL) {
        rc = COMMON_ENOMEM;
        goto err_after_text;
    }
    rc = authorized_parse(text, size, ids, &used);
    if (rc != 0) {
        goto err_after_ids;
    }
    common_free(text);
    if (used == 0) {
        common_free(ids);
        ids = NULL;
    }
    *out = ids;
    *count = used;
    return 0;

err_after_ids:
    common_free(ids);
err_after_text:
    common_free(text);
    return rc;
}
