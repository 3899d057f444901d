/* SPDX-License-Identifier: MIT
 *
 * keygen.c: `sinew keygen --out FILE`, `sinew keygen --show FILE` and
 * `sinew keygen --secret --out FILE` (keygen.h). The key file's format and its
 * checks are transport's (transport.h, docs/formats.md "Key files"); this file
 * only adds the command line and messages that say what to do about a refused
 * file. The secret key is wiped from memory before returning.
 */
#include "keygen.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport.h"

static void print_id(const struct transport_identity *identity)
{
    char text[TRANSPORT_NODE_ID_TEXT_SIZE];
    transport_node_id_format(&identity->id, text);
    printf("%s\n", text);
}

/* Why path is not a usable key file, from its mode, after
 * transport_identity_load() refused it with TRANSPORT_EKEYFILE. */
static const char *key_file_problem(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        return "its group or others may read or write it (chmod 600 it)";
    }
    return "not a sinew identity key file, or a damaged one";
}

static int keygen_out(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        fprintf(stderr, "sinew keygen: %s already exists; not overwriting it\n",
                path);
        return KEYGEN_EXIT_FAILED;
    }
    struct transport_identity identity;
    int rc = transport_identity_generate(&identity);
    rc = rc == 0 ? transport_identity_save(&identity, path) : rc;
    if (rc == 0) {
        print_id(&identity);
    } else if (rc == TRANSPORT_EKEYFILE) {
        fprintf(stderr, "sinew keygen: %s already exists; not overwriting it\n",
                path);
    } else {
        fprintf(stderr, "sinew keygen: cannot write %s: %s\n", path,
                rc > -4096 ? strerror(-rc) : transport_strerror(rc));
    }
    sodium_memzero(&identity, sizeof(identity));
    return rc == 0 ? KEYGEN_EXIT_OK : KEYGEN_EXIT_FAILED;
}

/* A cluster secret (transport.h, "Who may connect"): 32 random bytes as
 * 64 hex digits and a newline, in a new file only its owner may read,
 * synced. Nothing is printed: the secret stays in the file. */
static int keygen_secret(const char *path)
{
    uint8_t secret[TRANSPORT_CLUSTER_SECRET_BYTES];
    char text[2 * TRANSPORT_CLUSTER_SECRET_BYTES + 2];
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok;

    if (fd < 0) {
        fprintf(stderr, "sinew keygen: cannot create %s: %s%s\n", path,
                strerror(errno),
                errno == EEXIST ? " (not overwriting it)" : "");
        return KEYGEN_EXIT_FAILED;
    }
    randombytes_buf(secret, sizeof secret);
    sodium_bin2hex(text, sizeof text - 1, secret, sizeof secret);
    text[sizeof text - 2] = '\n';
    text[sizeof text - 1] = '\0';
    ok = write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1) &&
         fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    sodium_memzero(secret, sizeof secret);
    sodium_memzero(text, sizeof text);
    if (!ok) {
        fprintf(stderr, "sinew keygen: cannot write %s: %s\n", path,
                strerror(errno));
        unlink(path);
        return KEYGEN_EXIT_FAILED;
    }
    return KEYGEN_EXIT_OK;
}

static int keygen_show(const char *path)
{
    struct transport_identity identity;
    int rc = transport_identity_load(path, &identity);
    if (rc == 0) {
        print_id(&identity);
    } else if (rc == TRANSPORT_EKEYFILE) {
        fprintf(stderr, "sinew keygen: %s: %s\n", path, key_file_problem(path));
    } else {
        fprintf(stderr, "sinew keygen: %s: %s\n", path,
                rc > -4096 ? strerror(-rc) : transport_strerror(rc));
    }
    sodium_memzero(&identity, sizeof(identity));
    return rc == 0 ? KEYGEN_EXIT_OK : KEYGEN_EXIT_FAILED;
}

void keygen_usage(FILE *stream)
{
    fprintf(stream,
            "Usage: sinew keygen --out FILE\n"
            "       sinew keygen --show FILE\n"
            "       sinew keygen --secret --out FILE\n"
            "Makes a node identity (an ed25519 key pair) in the new file\n"
            "FILE, readable by its owner only, or reads an existing one, and\n"
            "prints the node id (64 hex digits) alone on standard output:\n"
            "  ID=$(sinew keygen --out n1.key)\n"
            "  --out FILE   write a new identity to FILE (never overwrites)\n"
            "  --show FILE  print the id of the identity in FILE\n"
            "  --secret --out FILE  write a new cluster secret (64 hex\n"
            "               digits) for --cluster-secret-file; prints nothing\n"
            "  -h, --help   show this message\n");
}

int keygen_main(int argc, char **argv)
{
    if (argc == 1 &&
        (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-help") == 0 ||
         strcmp(argv[0], "-h") == 0)) {
        keygen_usage(stdout);
        return KEYGEN_EXIT_OK;
    }
    if (argc == 3 && strcmp(argv[0], "--secret") == 0 &&
        strcmp(argv[1], "--out") == 0 && argv[2][0] != '\0') {
        return keygen_secret(argv[2]);
    }
    const char *flag = argc > 0 ? argv[0] : "";
    bool is_out = strcmp(flag, "--out") == 0 || strcmp(flag, "-out") == 0;
    bool is_show = strcmp(flag, "--show") == 0 || strcmp(flag, "-show") == 0;
    if (argc != 2 || (!is_out && !is_show) || argv[1][0] == '\0') {
        fprintf(stderr, "sinew keygen: expected --out FILE or --show FILE\n"
                        "Try 'sinew keygen --help'.\n");
        return KEYGEN_EXIT_USAGE;
    }
    return is_out ? keygen_out(argv[1]) : keygen_show(argv[1]);
}
