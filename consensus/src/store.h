/* SPDX-License-Identifier: MIT
 *
 * store.h: the durable Raft state of one node (term, vote, log, snapshot),
 * and its manual. consensus's raft_io implementation (io.c) is its only user:
 * each raft_io method that touches the disk is one call here, and every call
 * is synchronous (io.c defers raft's callbacks). The semantics are those of
 * libraft 0.22.1's own disk backend (src/uv*.c) and of its in-memory one
 * (src/fixture.c), with one deliberate difference: nothing is ever recovered
 * automatically. A damaged file makes open or load fail with
 * CONSENSUS_ECORRUPT; the only bytes the store discards by itself are the
 * ones a crash can leave and that were never acknowledged (listed below).
 *
 * Files in the directory (created 0700 if missing; every file is the store's)
 *
 *   metadata        term and vote. Replaced atomically: written whole to
 *                   metadata.tmp, fdatasync'ed, renamed over, dir fsync'ed.
 *   snapshot        the newest snapshot only, replaced the same way.
 *   log-<20 digits> a log segment, named by the index of its first record
 *                   in decimal. Created the same way (header only), then
 *                   appended to; a new one is started once the current one
 *                   holds CONSENSUS__STORE_SEGMENT_SIZE_TARGET bytes, so that
 *                   dropping a log prefix after a snapshot deletes whole
 *                   files. One entry larger than that makes a larger file.
 *   *.tmp           an unfinished replacement: deleted by open (it was never
 *                   renamed, so nothing it holds was acknowledged).
 *   Other names are ignored.
 *
 * Byte layouts (integers little-endian; checksums are common_checksum64,
 * XXH3-64, seed 0 unless said otherwise)
 *
 *   metadata, 40 bytes:
 *     0  8  magic "SINEWMET"
 *     8  8  format, 1
 *     16 8  term
 *     24 8  voted_for (0: none)
 *     32 8  checksum of bytes 0..31
 *
 *   segment header, 32 bytes, then records back to back to the end of file:
 *     0  8  magic "SINEWLOG"
 *     8  8  format, 1
 *     16 8  first_index (equal to the number in the file name)
 *     24 8  checksum of bytes 0..23
 *
 *   record, 40 bytes, then payload_size bytes of payload (no padding):
 *     0  8  index (records of a segment are consecutive from first_index)
 *     8  8  term (>= 1, never lower than the previous record's)
 *     16 4  type: 1 RAFT_COMMAND, 2 RAFT_BARRIER, 3 RAFT_CHANGE (payload:
 *           raft_configuration_encode()'s bytes)
 *     20 4  payload_size (<= CONSENSUS__STORE_ENTRY_SIZE_MAX)
 *     24 8  payload checksum
 *     32 8  header checksum, of bytes 0..31
 *
 *   snapshot, 80-byte header, then the encoded configuration, then the data:
 *     0  8  magic "SINEWSNP"
 *     8  8  format, 1
 *     16 8  index (last entry the snapshot covers, >= 1)
 *     24 8  term of that entry (>= 1)
 *     32 8  configuration_index (1 <= it <= index)
 *     40 8  log_start: the first log index kept with this snapshot
 *           (1 <= it <= index + 1; see snapshot_put)
 *     48 8  configuration_size (<= CONSENSUS__STORE_CONFIGURATION_SIZE_MAX)
 *     56 8  data_size (header + both parts must be the whole file)
 *     64 8  data checksum
 *     72 8  header checksum: of bytes 0..71, then chained (as seed) over the
 *           configuration bytes
 *
 * What a crash can leave, and what open does about it
 *
 *   - A *.tmp file: deleted.
 *   - A torn tail of the LAST segment: appends are written without syncing
 *     (consensus__store_sync() makes them durable), so a crash can leave an
 *     incomplete or checksum-failing last record, and nothing after it. Open
 *     cuts such a tail (ftruncate + fsync) and appends continue after the
 *     last valid record. Bad bytes followed by a valid record, or anywhere
 *     but at the end of the last segment, are damage: CONSENSUS_ECORRUPT.
 *   - Segments wholly below the snapshot's log_start: a snapshot_put that
 *     crashed after its snapshot was renamed into place but before it
 *     deleted them. Open finishes that deletion (the snapshot, durable, says
 *     they are no longer needed); entries below log_start in a segment that
 *     straddles it are skipped.
 *   Everything else that does not check out is CONSENSUS_ECORRUPT: a bad
 *   metadata, snapshot or segment header, a gap or overlap between segments,
 *   a log that starts after the snapshot's index + 1 (or, without a
 *   snapshot, anywhere but at 1), a non-empty log that ends before the
 *   snapshot's index, a log or snapshot with term 0 in the metadata. Open
 *   checks every record's checksums and the snapshot's header and
 *   configuration; the snapshot's data checksum is checked when it is read
 *   (load, snapshot_get).
 *
 * The log in memory: only (term, offset of its record) per entry, for the
 * entries from log_start on; raft keeps the payloads. Indices below
 * log_start are gone for good.
 *
 * Errors: 0, or CONSENSUS_EIO (an I/O call failed; errno in the message),
 * CONSENSUS_ENOSPACE (ENOSPC/EDQUOT), CONSENSUS_ECORRUPT, CONSENSUS_ETOOBIG
 * (an entry above CONSENSUS__STORE_ENTRY_SIZE_MAX), COMMON_ENOMEM. A failure
 * in the middle of a write leaves the files in a state the store no longer
 * describes, so the store latches: that call and every later one except
 * close return the same code (an out-of-memory failure before anything is
 * written does not latch). consensus__store_errmsg() says what failed
 * ("append: log-00000000000000000017: No space left on device").
 *
 * Not thread-safe: one thread (the io's loop) calls everything. One process
 * per directory: nothing locks it.
 */
#ifndef SINEW_CONSENSUS_STORE_H
#define SINEW_CONSENSUS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>

#include "consensus.h"

/* A segment is closed once it holds this many bytes (the next append starts
 * a new one). Big enough that a rotation (two fsyncs) is rare, small enough
 * that a snapshot frees disk space in steps of this size. */
#define CONSENSUS__STORE_SEGMENT_SIZE_TARGET ((uint64_t)8 << 20)

/* The largest entry payload the store accepts (the record's size field is 32
 * bits). Raft holds every entry in memory, so a command near this size is
 * already a mistake; the limit bounds what a damaged file can make us
 * allocate. */
#define CONSENSUS__STORE_ENTRY_SIZE_MAX ((uint32_t)1 << 30)

/* The largest encoded configuration in a snapshot: a few dozen bytes per
 * member, so this is generous and still bounds an allocation. */
#define CONSENSUS__STORE_CONFIGURATION_SIZE_MAX ((uint64_t)1 << 20)

struct consensus__store;

/* Opens the store in dir (copied; created with mode 0700 if missing, its
 * parent must exist), checks every file as described above, cuts a torn tail
 * and stores a new store, owned by the caller, in *out. */
int consensus__store_open(const char *dir, struct consensus__store **out);

/* Closes the files and frees s (NULL is ignored). Appends not yet synced are
 * not synced: like a crash, they may or may not survive. */
void consensus__store_close(struct consensus__store *s);

/* raft_io->load. Everything returned is transferred to the caller, allocated
 * with raft_malloc exactly as raft expects (raft_start frees it):
 *   *term, *voted_for: the metadata (0, 0 when never set).
 *   *snapshot: NULL, or the snapshot with its decoded configuration and its
 *     data in bufs[0] (n_bufs 1; bufs and the struct each raft_malloc'd).
 *   *entries, *n_entries: NULL and 0, or an array of the log's entries in
 *     order; each entry's buf points into a batch (one raft_malloc'd block
 *     per segment, payloads 8-byte aligned inside it) and .batch is that
 *     block, so entryBatchesDestroy-style freeing (free each distinct batch
 *     once, then the array) releases everything.
 *   *start_index: the index of entries[0]; with no entries, the snapshot's
 *     index + 1, or 1 without a snapshot (as src/uv.c). */
int consensus__store_load(struct consensus__store *s, raft_term *term,
                          raft_id *voted_for, struct raft_snapshot **snapshot,
                          raft_index *start_index, struct raft_entry **entries,
                          size_t *n_entries);

/* raft_io->bootstrap: CONSENSUS_ECANTBOOTSTRAP unless the term is 0 (the
 * rule of src/uv.c: a crash between the two steps below leaves term 1 and an
 * empty log, which cannot be bootstrapped again). Otherwise sets the term to
 * 1, then appends entry 1 (term 1, RAFT_CHANGE, conf encoded) and syncs.
 * conf is borrowed for the call. */
int consensus__store_bootstrap(struct consensus__store *s,
                               const struct raft_configuration *conf);

/* raft_io->recover: appends one RAFT_CHANGE entry holding conf (borrowed),
 * with the term of the last entry (or of the snapshot when the log is
 * empty), after the last entry, and syncs. CONSENSUS_ECONFIG when the store
 * holds neither entries nor a snapshot (there is nothing to recover). */
int consensus__store_recover(struct consensus__store *s,
                             const struct raft_configuration *conf);

/* raft_io->set_term: term and vote 0, durable on return (src/uv.c resets the
 * vote the same way). */
int consensus__store_set_term(struct consensus__store *s, raft_term term);

/* raft_io->set_vote: the vote (term unchanged), durable on return. */
int consensus__store_set_vote(struct consensus__store *s, raft_id id);

/* Writes n >= 1 entries (borrowed for the call) at indices last_index + 1
 * on, without syncing. Types must be RAFT_COMMAND, RAFT_BARRIER or
 * RAFT_CHANGE and terms >= 1. CONSENSUS_ETOOBIG, before anything is
 * written, if a payload exceeds CONSENSUS__STORE_ENTRY_SIZE_MAX. */
int consensus__store_append(struct consensus__store *s,
                            const struct raft_entry *entries, unsigned n);

/* Makes every entry appended so far durable (fdatasync; nothing when there
 * is nothing new). */
int consensus__store_sync(struct consensus__store *s);

/* raft_io->truncate: deletes the entries at index and after, durably
 * (ftruncate + fsync, deleted segments + dir fsync). Nothing to do when
 * index > last_index (raft calls it before every append). Otherwise index
 * must be above the snapshot's index and at least the first index kept:
 * raft only truncates uncommitted entries. Also makes the entries before
 * index durable. */
int consensus__store_truncate(struct consensus__store *s, raft_index index);

/* raft_io->snapshot_put: stores snapshot (borrowed for the call; n_bufs >= 1
 * buffers, concatenated) durably as the only snapshot, then drops log
 * entries as src/uv_snapshot.c does:
 *   trailing > 0 (raft took the snapshot): the entries below
 *     index - trailing + 1 go (those below the previous first index already
 *     went); snapshot->index must not be above last_index. Entries appended
 *     earlier are synced first, so the snapshot never covers entries that
 *     a crash could lose.
 *   trailing == 0 (a snapshot installed from the leader): the whole log
 *     goes; the next append is at index + 1.
 * Whole segments are deleted; the snapshot records the first index kept
 * (log_start), so load returns exactly the kept entries.
 * CONSENSUS_EPROTO, before anything is written, when index or term is 0 or
 * configuration_index is not within [1, index]. */
int consensus__store_snapshot_put(struct consensus__store *s, unsigned trailing,
                                  const struct raft_snapshot *snapshot);

/* raft_io->snapshot_get: *out = the stored snapshot, allocated as load's
 * (transferred), or NULL, with 0, when there is none. */
int consensus__store_snapshot_get(struct consensus__store *s,
                                  struct raft_snapshot **out);

/* The index of the last entry; with an empty log, the snapshot's index, or
 * 0. The next append is at last_index + 1. */
raft_index consensus__store_last_index(const struct consensus__store *s);

/* The term of the last entry, else the snapshot's, else 0. */
raft_term consensus__store_last_term(const struct consensus__store *s);

/* The index of the stored snapshot, 0 when there is none. */
raft_index consensus__store_snapshot_index(const struct consensus__store *s);

/* What the last failure was about, "" if none. Borrowed from s. */
const char *consensus__store_errmsg(const struct consensus__store *s);

/* For tests: rotate segments at segment_size bytes instead of
 * CONSENSUS__STORE_SEGMENT_SIZE_TARGET (the on-disk format is the same). */
void consensus__store_set_segment_size(struct consensus__store *s,
                                       uint64_t segment_size);

/* ------------------------------------------------------------------------
 * Internals shared by store*.c only (io.c uses nothing below).
 * ------------------------------------------------------------------------ */

#define CONSENSUS__STORE_FORMAT 1
#define CONSENSUS__STORE_METADATA_SIZE 40
#define CONSENSUS__STORE_SEGMENT_HEADER_SIZE 32
#define CONSENSUS__STORE_RECORD_HEADER_SIZE 40
#define CONSENSUS__STORE_SNAPSHOT_HEADER_SIZE 80
#define CONSENSUS__STORE_ERRMSG_SIZE 256

/* One log segment file. Its records run from first_index to the next
 * segment's first_index - 1 (the last one's to the store's last index). */
struct consensus__store_segment {
    raft_index first_index; /* of its first record; also its name */
    uint64_t size;          /* bytes written: header and whole records */
};

/* Where one entry lives. */
struct consensus__store_entry {
    raft_term term;  /* the entry's term */
    uint64_t offset; /* of its record within its segment */
};

/* Invariants: segments are sorted and contiguous; segments[0].first_index
 * <= log_start unless entry_count is 0; entries[i] describes index
 * log_start + i, so the last index is log_start + entry_count - 1; with a
 * snapshot, log_start <= snapshot_index + 1 and, if entry_count > 0,
 * log_start + entry_count - 1 >= snapshot_index; active_fd is open (for
 * writing) on the last segment, or -1 when there is none; the scratch
 * buffer is empty between calls. */
struct consensus__store {
    char *dir;  /* owned: the directory's path */
    int dir_fd; /* the directory, for *at() calls and fsync */
    raft_term term;
    raft_id voted_for;
    bool has_snapshot;
    raft_index snapshot_index;
    raft_term snapshot_term;
    raft_index log_start; /* index of entries[0], even when there is none */
    struct consensus__store_segment *segments; /* owned array */
    size_t segment_count;
    size_t segment_capacity;
    int active_fd;
    struct consensus__store_entry *entries; /* owned array */
    size_t entry_count;
    size_t entry_capacity;
    uint64_t segment_size_target; /* rotation threshold, bytes */
    bool is_dirty;                /* bytes written since the last sync */
    int failed;                   /* 0, or the latched error code */
    struct common_buf scratch;    /* small records coalesced into one write */
    char errmsg[CONSENSUS__STORE_ERRMSG_SIZE];
};

/* A piece of bytes to write (store_file.c). */
struct consensus__store_piece {
    const void *data; /* borrowed */
    size_t size;
};

/* store_file.c: file helpers. Each sets s->errmsg on failure ("what: name:
 * strerror") and returns CONSENSUS_EIO, CONSENSUS_ENOSPACE or
 * COMMON_ENOMEM. */
int consensus__store_file_fail(struct consensus__store *s, int err,
                               const char *what, const char *name);
int consensus__store_corrupt(struct consensus__store *s, const char *format,
                             ...) __attribute__((format(printf, 2, 3)));
int consensus__store_file_sync_dir(struct consensus__store *s);
/* fsync(2) (fdatasync(2) with data_only) through consensus_io_hooks: -1
 * and errno on failure. */
int consensus__store_file_fsync(int fd, bool data_only);
int consensus__store_file_write_at(struct consensus__store *s, int fd,
                                   const char *name, const void *data,
                                   size_t size, uint64_t offset);
int consensus__store_file_read_at(struct consensus__store *s, int fd,
                                  const char *name, void *data, size_t size,
                                  uint64_t offset);
/* Reads the whole file into *data (common_malloc'd, transferred; NULL when
 * empty) and its size into *size, after checking size <= size_max
 * (CONSENSUS_ECORRUPT otherwise). *exists = false, and 0, if it is missing. */
int consensus__store_file_read_all(struct consensus__store *s, const char *name,
                                   uint64_t size_max, uint8_t **data,
                                   size_t *size, bool *exists);
/* Writes the pieces to name.tmp, fdatasyncs, renames it over name and
 * fsyncs the directory. */
int consensus__store_file_replace(struct consensus__store *s, const char *name,
                                  const struct consensus__store_piece *pieces,
                                  size_t piece_count);
int consensus__store_file_remove(struct consensus__store *s, const char *name);

/* store_log.c, store_log_write.c, store_log_load.c: the segments. */
int consensus__store_log_open(struct consensus__store *s,
                              raft_index stored_log_start);
void consensus__store_log_close(struct consensus__store *s);
int consensus__store_log_append(struct consensus__store *s,
                                const struct raft_entry *entries, unsigned n);
int consensus__store_log_sync(struct consensus__store *s);
int consensus__store_log_truncate(struct consensus__store *s, raft_index index);
/* Deletes the segments wholly below log_start and forgets the entries below
 * it; log_start must be within [s->log_start, last index]. */
int consensus__store_log_drop_before(struct consensus__store *s,
                                     raft_index log_start);
/* Deletes every segment; the next append is at next_index. */
int consensus__store_log_drop_all(struct consensus__store *s,
                                  raft_index next_index);
int consensus__store_log_load(struct consensus__store *s,
                              struct raft_entry **entries, size_t *n_entries);
void consensus__store_segment_name(raft_index first_index, char *name,
                                   size_t size);
/* Room for extra more entries / one more segment, or COMMON_ENOMEM. */
int consensus__store_entries_reserve(struct consensus__store *s, size_t extra);
int consensus__store_segments_reserve(struct consensus__store *s);
/* The segment holding index (which must be in the log). */
size_t consensus__store_segment_find(const struct consensus__store *s,
                                     raft_index index);

/* A decoded record (store_log.c). payload points into the decoded bytes. */
struct consensus__store_record {
    raft_index index;
    raft_term term;
    uint32_t type;
    uint32_t payload_size;
    const uint8_t *payload;
};
/* True when size bytes at data hold a whole record with good checksums and
 * a known type, which it decodes into *out. */
bool consensus__store_record_decode(const uint8_t *data, size_t size,
                                    struct consensus__store_record *out);
/* True when the bytes are a well-formed raft configuration encoding (raft's
 * own decoder trusts its input's bounds). */
bool consensus__store_conf_is_valid(const uint8_t *data, size_t size);

/* store_snapshot.c. */
int consensus__store_snapshot_open(struct consensus__store *s,
                                   raft_index *stored_log_start);
void consensus__store_snapshot_destroy(struct raft_snapshot *snapshot);

#endif /* SINEW_CONSENSUS_STORE_H */
