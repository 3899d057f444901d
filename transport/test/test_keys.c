/* SPDX-License-Identifier: MIT
 *
 * test_keys.c: node ids as text, identity key files and authorized-keys
 * files. Goal: what is saved loads back the same; a key file others may
 * read, an existing file, damaged hex, a wrong header or a public key that
 * is not its seed's are all refused; authorized-keys files take comments
 * and blank lines and refuse anything else. Method: files in a fresh
 * temporary directory, written by the API or by hand.
 */
#include "common_test.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport.h"

static char directory[64];

static int group_setup(void **state)
{
    const char *tmp = getenv("TMPDIR");
    int n;

    common_test_group_setup(state);
    n = snprintf(directory, sizeof(directory), "%s/sinew-keys-XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof(directory)) {
        return -1; /* $TMPDIR too long for this test's paths */
    }
    return mkdtemp(directory) == NULL ? -1 : 0;
}

static int group_teardown(void **state)
{
    char command[128];

    (void)state;
    snprintf(command, sizeof(command), "rm -rf '%s'", directory);
    return system(command) == 0 ? 0 : -1;
}

static void path_make(char *out, const char *name)
{
    snprintf(out, 128, "%s/%s", directory, name);
}

/* Writes text to a new file at path with mode. */
static void file_write(const char *path, const char *text, mode_t mode)
{
    FILE *file;

    unlink(path);
    file = fopen(path, "w");
    assert_non_null(file);
    assert_int_equal(fputs(text, file) >= 0, 1);
    assert_int_equal(fclose(file), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static void node_id_text(void **state)
{
    struct transport_identity identity;
    struct transport_node_id parsed;
    char text[TRANSPORT_NODE_ID_TEXT_SIZE];
    char upper[TRANSPORT_NODE_ID_TEXT_SIZE];

    (void)state;
    assert_int_equal(transport_identity_generate(&identity), 0);
    transport_node_id_format(&identity.id, text);
    assert_int_equal(strlen(text), 64);
    assert_int_equal(transport_node_id_parse(text, &parsed), 0);
    assert_true(transport_node_id_equal(&parsed, &identity.id));
    for (size_t i = 0; i < sizeof(text); i++) {
        upper[i] =
            (char)(text[i] >= 'a' && text[i] <= 'f' ? text[i] - 32 : text[i]);
    }
    assert_int_equal(transport_node_id_parse(upper, &parsed), 0);
    assert_true(transport_node_id_equal(&parsed, &identity.id));

    memset(&parsed, 0xee, sizeof(parsed));
    text[63] = '\0';
    assert_int_equal(transport_node_id_parse(text, &parsed),
                     TRANSPORT_EKEYFILE);
    assert_int_equal(parsed.key[0], 0xee); /* untouched on failure */
    assert_int_equal(transport_node_id_parse("", &parsed), TRANSPORT_EKEYFILE);
    transport_node_id_format(&identity.id, text);
    text[10] = 'g';
    assert_int_equal(transport_node_id_parse(text, &parsed),
                     TRANSPORT_EKEYFILE);
}

static void identity_round_trip(void **state)
{
    struct transport_identity identity;
    struct transport_identity loaded;
    char path[128];
    struct stat st;

    (void)state;
    path_make(path, "round-trip.key");
    assert_int_equal(transport_identity_generate(&identity), 0);
    assert_int_equal(transport_identity_save(&identity, path), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(transport_identity_load(path, &loaded), 0);
    assert_memory_equal(&loaded, &identity, sizeof(identity));
}

static void identity_existing_file_kept(void **state)
{
    struct transport_identity first;
    struct transport_identity second;
    struct transport_identity loaded;
    char path[128];

    (void)state;
    path_make(path, "existing.key");
    assert_int_equal(transport_identity_generate(&first), 0);
    assert_int_equal(transport_identity_generate(&second), 0);
    assert_int_equal(transport_identity_save(&first, path), 0);
    assert_int_equal(transport_identity_save(&second, path),
                     TRANSPORT_EKEYFILE);
    assert_int_equal(transport_identity_load(path, &loaded), 0);
    assert_memory_equal(&loaded, &first, sizeof(first));
}

static void identity_open_mode_refused(void **state)
{
    struct transport_identity identity;
    struct transport_identity loaded;
    char path[128];

    (void)state;
    path_make(path, "open.key");
    assert_int_equal(transport_identity_generate(&identity), 0);
    assert_int_equal(transport_identity_save(&identity, path), 0);
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(transport_identity_load(path, &loaded),
                     TRANSPORT_EKEYFILE);
    assert_int_equal(chmod(path, 0620), 0);
    assert_int_equal(transport_identity_load(path, &loaded),
                     TRANSPORT_EKEYFILE);
    assert_int_equal(chmod(path, 0400), 0);
    assert_int_equal(transport_identity_load(path, &loaded), 0);
}

static void identity_missing_file(void **state)
{
    struct transport_identity loaded;
    char path[128];

    (void)state;
    path_make(path, "missing.key");
    assert_int_equal(transport_identity_load(path, &loaded), -ENOENT);
}

/* The text of a valid key file for identity. */
static void key_text(const struct transport_identity *identity, char *out)
{
    char public_hex[65];
    char seed_hex[65];
    uint8_t seed[32];

    crypto_sign_ed25519_sk_to_seed(seed, identity->secret);
    sodium_bin2hex(public_hex, sizeof(public_hex), identity->id.key, 32);
    sodium_bin2hex(seed_hex, sizeof(seed_hex), seed, 32);
    sprintf(out, "sinew-identity v1\npublic %s\nseed %s\n", public_hex,
            seed_hex);
}

/* Variants of a valid file, each damaged in one way, are refused. */
static void identity_damaged_refused(void **state)
{
    struct transport_identity identity;
    struct transport_identity other;
    struct transport_identity loaded;
    char good[256];
    char bad[256];
    char path[128];
    size_t seed_at;
    size_t public_at;

    (void)state;
    path_make(path, "damaged.key");
    assert_int_equal(transport_identity_generate(&identity), 0);
    assert_int_equal(transport_identity_generate(&other), 0);
    key_text(&identity, good);
    file_write(path, good, 0600);
    assert_int_equal(transport_identity_load(path, &loaded), 0);
    assert_memory_equal(&loaded, &identity, sizeof(identity));
    seed_at = (size_t)(strstr(good, "seed ") - good) + 5;
    public_at = (size_t)(strstr(good, "public ") - good) + 7;

    const char *edits[] = {"hex",   "short", "version", "mismatch",
                           "extra", "empty", "noseed"};
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        strcpy(bad, good);
        if (i == 0) {
            bad[seed_at + 3] = 'z';
        } else if (i == 1) {
            strcpy(bad + seed_at + 62, "\n");
        } else if (i == 2) {
            bad[16] = '2';
        } else if (i == 3) {
            key_text(&other, bad);
            memcpy(bad + public_at, good + public_at, 64);
        } else if (i == 4) {
            strcat(bad, "seed 00\n");
        } else if (i == 5) {
            bad[0] = '\0';
        } else {
            bad[seed_at - 5] = '\0';
        }
        file_write(path, bad, 0600);
        assert_int_equal(transport_identity_load(path, &loaded),
                         TRANSPORT_EKEYFILE);
    }
}

static void authorized_keys_parsing(void **state)
{
    struct transport_identity ids[3];
    char hex[3][65];
    char text[1024];
    char path[128];
    struct transport_node_id *list = NULL;
    size_t count = 99;

    (void)state;
    path_make(path, "authorized");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(transport_identity_generate(&ids[i]), 0);
        transport_node_id_format(&ids[i].id, hex[i]);
    }
    snprintf(text, sizeof(text),
             "# the cluster\n\n%s\n   \t\n  %s   # node two\r\n"
             "#%s\n%s",
             hex[0], hex[1], hex[2], hex[2]);
    file_write(path, text, 0644);
    assert_int_equal(transport_authorized_keys_load(path, &list, &count), 0);
    assert_int_equal(count, 3);
    for (int i = 0; i < 3; i++) {
        assert_true(transport_node_id_equal(&list[i], &ids[i].id));
    }
    common_free(list);

    file_write(path, "# nobody\n\n", 0644);
    assert_int_equal(transport_authorized_keys_load(path, &list, &count), 0);
    assert_int_equal(count, 0);
    assert_null(list);

    for (int i = 0; i < 4; i++) {
        const char *line = i == 0 ? "abc" : i == 1 ? "zz" : hex[1];
        const char *tail = i == 2 ? " extra" : i == 3 ? hex[2] : "";

        snprintf(text, sizeof(text), "%s\n%s%s\n", hex[0], line, tail);
        file_write(path, text, 0644);
        count = 99;
        assert_int_equal(transport_authorized_keys_load(path, &list, &count),
                         TRANSPORT_EKEYFILE);
        assert_int_equal(count, 99);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_id_text),
        cmocka_unit_test(identity_round_trip),
        cmocka_unit_test(identity_existing_file_kept),
        cmocka_unit_test(identity_open_mode_refused),
        cmocka_unit_test(identity_missing_file),
        cmocka_unit_test(identity_damaged_refused),
        cmocka_unit_test(authorized_keys_parsing),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
