/* SPDX-License-Identifier: MIT
 *
 * slt_label.c: the label table of a sqllogictest run.
 *
 * "query <types> <sort> <label>": every query of a file with the same
 * label must produce the same values (upstream's checkValue() in
 * src/sqllogictest.c). The random/ corpus has thousands of labels per
 * file, so this is a small open-addressing hash table rather than a list.
 */
#include <string.h>

#include "slt.h"

struct slt_label_slot {
    char *name; /* owned; NULL for an empty slot */
    char hash[SLT_MD5_HEX_SIZE];
};

void slt_labels_init(struct slt_labels *labels)
{
    memset(labels, 0, sizeof(*labels));
}

void slt_labels_close(struct slt_labels *labels)
{
    for (size_t i = 0; i < labels->capacity; i++) {
        common_free(labels->slots[i].name);
    }
    common_free(labels->slots);
    memset(labels, 0, sizeof(*labels));
}

/* FNV-1a over the name. */
static size_t slt_label_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (const char *p = name; *p != '\0'; p++) {
        h = (h ^ (unsigned char)*p) * 0x100000001b3u;
    }
    return (size_t)h;
}

static struct slt_label_slot *slt_labels_find(struct slt_label_slot *slots,
                                              size_t capacity, const char *name)
{
    size_t mask = capacity - 1;

    for (size_t i = slt_label_hash(name) & mask;; i = (i + 1) & mask) {
        if (slots[i].name == NULL || strcmp(slots[i].name, name) == 0) {
            return &slots[i];
        }
    }
}

/* Doubles the table (at most half full afterwards, so finds end). */
static int slt_labels_grow(struct slt_labels *labels)
{
    size_t capacity = labels->capacity == 0 ? 64 : labels->capacity * 2;
    struct slt_label_slot *slots = common_calloc(capacity, sizeof(*slots));

    if (slots == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < labels->capacity; i++) {
        if (labels->slots[i].name != NULL) {
            *slt_labels_find(slots, capacity, labels->slots[i].name) =
                labels->slots[i];
        }
    }
    common_free(labels->slots);
    labels->slots = slots;
    labels->capacity = capacity;
    return 0;
}

int slt_labels_reference(struct slt_labels *labels, const char *name,
                         const char *hash, const char **reference)
{
    if ((labels->count + 1) * 2 > labels->capacity) {
        int rc = slt_labels_grow(labels);
        if (rc != 0) {
            return rc;
        }
    }
    struct slt_label_slot *slot =
        slt_labels_find(labels->slots, labels->capacity, name);
    if (slot->name == NULL) {
        size_t size = strlen(name) + 1;
        slot->name = common_malloc(size);
        if (slot->name == NULL) {
            return COMMON_ENOMEM;
        }
        memcpy(slot->name, name, size);
        memcpy(slot->hash, hash, SLT_MD5_HEX_SIZE);
        labels->count++;
    }
    *reference = slot->hash;
    return 0;
}
