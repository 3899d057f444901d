/* SPDX-License-Identifier: MIT
 *
 * frame.c: sealing and opening the frames that follow the handshake.
 *
 * A frame is a header (body size, payload size, type, flags) and a body
 * (the payload, then zero padding), each sealed on its own with
 * ChaCha20-Poly1305 (IETF; libsodium crypto_aead_chacha20poly1305_ietf_*),
 * the header with nonce n and the body with n + 1, n counting up from 0 per
 * direction. Sealing the header on its own, as Lightning's BOLT 8 transport
 * does for its length, means the receiver authenticates a body's size
 * before it buffers a byte of the body, and a tampered size is caught at
 * once instead of leaving the receiver waiting. The counter nonce makes a
 * replayed, reordered or dropped frame fail to open. Plaintext mode
 * (benchmark only) writes the same header and body without tags.
 *
 * Payloads of at least compress_min_bytes are lz4-compressed when that
 * shrinks them (the original size goes first, so the receiver bounds its
 * buffer before decompressing); with pad_frames, bodies are padded to size
 * buckets (transport__frame_padded_size()). Compression comes before
 * encryption, so a message mixing a secret with attacker-chosen bytes
 * could leak through its size (as in CRIME); sinew's messages are change
 * sets and Raft traffic between admitted nodes, where that does not apply.
 */
#include "session_int.h"

#include <lz4.h>
#include <string.h>

STATIC_ASSERT(SESSION_MESSAGE_MAX_BYTES + SESSION_PAD_STEP < LZ4_MAX_INPUT_SIZE,
              "every payload fits lz4");
STATIC_ASSERT(SESSION_NONCE_BYTES == 12, "IETF nonce: 8-byte counter + 4");

static const uint8_t empty_bytes[1];

size_t transport__frame_padded_size(size_t size)
{
    size_t padded = SESSION_PAD_MIN;

    ASSERT(size <= SESSION_MESSAGE_MAX_BYTES);
    if (size > SESSION_PAD_STEP) {
        return (size + SESSION_PAD_STEP - 1) / SESSION_PAD_STEP *
               SESSION_PAD_STEP;
    }
    while (padded < size) {
        padded *= 2;
    }
    return padded;
}

static void nonce_make(uint64_t counter, uint8_t *nonce)
{
    memset(nonce, 0, SESSION_NONCE_BYTES);
    common_put_u64le(nonce, counter);
}

/* Seals size bytes from plain to sealed (may be the same), the tag after
 * them, with the cipher's next nonce. */
static void cipher_seal(struct session_cipher *cipher, uint8_t *sealed,
                        const uint8_t *plain, size_t size)
{
    uint8_t nonce[SESSION_NONCE_BYTES];

    ASSERT(cipher->counter < UINT64_MAX);
    nonce_make(cipher->counter++, nonce);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        sealed, sealed + size, NULL, plain, size, NULL, 0, NULL, nonce,
        cipher->key);
}

/* Opens size bytes and their tag in place with the next nonce. */
static int cipher_open(struct session_cipher *cipher, uint8_t *bytes,
                       size_t size)
{
    uint8_t nonce[SESSION_NONCE_BYTES];

    if (cipher->counter == UINT64_MAX) {
        return TRANSPORT_EPROTO;
    }
    nonce_make(cipher->counter, nonce);
    if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(
            bytes, NULL, bytes, size, bytes + size, NULL, 0, nonce,
            cipher->key) != 0) {
        return TRANSPORT_EPROTO;
    }
    cipher->counter++;
    return 0;
}

/* Compresses size bytes into tx (original size, then the lz4 block) if
 * that makes them smaller: 1 if it did, 0 if not, or an error. */
static int payload_compress(struct transport__session *session,
                            const uint8_t *bytes, size_t size)
{
    size_t room;
    int compressed;
    int rc;

    if (size <= SESSION_ORIGINAL_SIZE_BYTES + 1 ||
        size < session->config.compress_min_bytes) {
        return 0;
    }
    rc = common_buf_reserve(&session->tx, size);
    if (rc != 0) {
        return rc;
    }
    /* Room for one byte less than the input: lz4 gives up (0) when the
     * block would not shrink, so incompressible input costs little. */
    room = size - SESSION_ORIGINAL_SIZE_BYTES - 1;
    compressed = LZ4_compress_default((const char *)bytes,
                                      (char *)session->tx.data +
                                          SESSION_ORIGINAL_SIZE_BYTES,
                                      (int)size, (int)room);
    if (compressed <= 0) {
        return 0;
    }
    common_put_u32le(session->tx.data, (uint32_t)size);
    session->tx.size = SESSION_ORIGINAL_SIZE_BYTES + (size_t)compressed;
    return 1;
}

/* Copies the payload into tx unless it is there, then zeros to body_size. */
static int payload_pad(struct transport__session *session,
                       const uint8_t **payload, size_t payload_size,
                       size_t body_size)
{
    int rc;

    if (*payload != session->tx.data) {
        session->tx.size = 0;
        rc = common_buf_append(&session->tx, *payload, payload_size);
        if (rc != 0) {
            return rc;
        }
    }
    rc = common_buf_reserve(&session->tx, body_size - payload_size);
    if (rc != 0) {
        return rc;
    }
    memset(session->tx.data + payload_size, 0, body_size - payload_size);
    session->tx.size = body_size;
    *payload = session->tx.data != NULL ? session->tx.data : empty_bytes;
    return 0;
}

static void header_write(uint8_t *p, size_t body_size, size_t payload_size,
                         uint16_t type, unsigned flags)
{
    common_put_u32le(p, (uint32_t)body_size);
    common_put_u32le(p + 4, (uint32_t)payload_size);
    common_put_u16le(p + 8, type);
    p[10] = (uint8_t)flags;
}

/* Appends the header and the body_size bytes at body, sealed unless in
 * plaintext mode. */
static int frame_write(struct transport__session *session,
                       const uint8_t *header, const uint8_t *body,
                       size_t body_size, struct common_buf *out)
{
    size_t tag = session->config.plaintext ? 0 : SESSION_TAG_BYTES;
    size_t total = SESSION_HEADER_SIZE + tag + body_size + tag;
    uint8_t *p;
    int rc;

    rc = common_buf_reserve(out, total);
    if (rc != 0) {
        return rc;
    }
    p = out->data + out->size;
    if (session->config.plaintext) {
        memcpy(p, header, SESSION_HEADER_SIZE);
        memcpy(p + SESSION_HEADER_SIZE, body, body_size);
    } else {
        cipher_seal(&session->send, p, header, SESSION_HEADER_SIZE);
        cipher_seal(&session->send, p + SESSION_HEADER_SIZE + tag, body,
                    body_size);
    }
    out->size += total;
    return 0;
}

int transport__frame_seal(struct transport__session *session, uint16_t type,
                          unsigned flags, const uint8_t *bytes, size_t size,
                          struct common_buf *out)
{
    uint8_t header[SESSION_HEADER_SIZE];
    const uint8_t *payload = size > 0 ? bytes : empty_bytes;
    size_t payload_size = size;
    size_t body_size = size;
    int rc;

    ASSERT(size <= session->config.max_message_bytes);
    session->tx.size = 0;
    rc = payload_compress(session, payload, size);
    if (rc < 0) {
        return rc;
    }
    if (rc == 1) {
        flags |= SESSION_FLAG_COMPRESSED;
        payload = session->tx.data;
        payload_size = session->tx.size;
        body_size = payload_size;
    }
    if (session->config.pad_frames) {
        body_size = transport__frame_padded_size(payload_size);
        rc = payload_pad(session, &payload, payload_size, body_size);
        if (rc != 0) {
            return rc;
        }
        flags |= SESSION_FLAG_PADDED;
    }
    ASSERT(body_size <= session->body_max);
    header_write(header, body_size, payload_size, type, flags);
    return frame_write(session, header, payload, body_size, out);
}

/* Whether an opened header describes a frame this side accepts. */
static bool header_is_valid(const struct transport__session *session)
{
    uint32_t body = session->header_body_size;
    uint32_t payload = session->header_payload_size;
    unsigned flags = session->header_flags;

    if ((flags & ~SESSION_FLAGS_ALL) != 0 || body > session->body_max ||
        payload > body || payload > session->config.max_message_bytes) {
        return false;
    }
    if (!(flags & SESSION_FLAG_PADDED) && payload != body) {
        return false;
    }
    if ((flags & SESSION_FLAG_PING) &&
        (payload != 0 || session->header_type != 0)) {
        return false;
    }
    if ((flags & SESSION_FLAG_COMPRESSED) &&
        payload <= SESSION_ORIGINAL_SIZE_BYTES) {
        return false;
    }
    return true;
}

int transport__frame_open_header(struct transport__session *session,
                                 uint8_t *bytes)
{
    if (!session->config.plaintext &&
        cipher_open(&session->recv, bytes, SESSION_HEADER_SIZE) != 0) {
        return TRANSPORT_EPROTO;
    }
    session->header_body_size = common_get_u32le(bytes);
    session->header_payload_size = common_get_u32le(bytes + 4);
    session->header_type = common_get_u16le(bytes + 8);
    session->header_flags = bytes[10];
    return header_is_valid(session) ? 0 : TRANSPORT_EPROTO;
}

/* Decompresses a payload into the session's message buffer; its original
 * size is bounded by max_message_bytes before anything is allocated. */
static int payload_decompress(struct transport__session *session,
                              const uint8_t *payload, size_t size)
{
    uint32_t original = common_get_u32le(payload);
    int decompressed;
    int rc;

    if (original == 0 || original > session->config.max_message_bytes) {
        return TRANSPORT_EPROTO;
    }
    session->message.size = 0;
    rc = common_buf_reserve(&session->message, original);
    if (rc != 0) {
        return rc;
    }
    decompressed = LZ4_decompress_safe(
        (const char *)payload + SESSION_ORIGINAL_SIZE_BYTES,
        (char *)session->message.data,
        (int)(size - SESSION_ORIGINAL_SIZE_BYTES), (int)original);
    if (decompressed < 0 || (uint32_t)decompressed != original) {
        return TRANSPORT_EPROTO;
    }
    session->message.size = original;
    return 0;
}

int transport__frame_open_body(struct transport__session *session,
                               uint8_t *bytes,
                               const struct transport__session_sink *sink)
{
    size_t body = session->header_body_size;
    size_t payload = session->header_payload_size;
    int rc;

    if (!session->config.plaintext &&
        cipher_open(&session->recv, bytes, body) != 0) {
        return TRANSPORT_EPROTO;
    }
    if (body > payload && !sodium_is_zero(bytes + payload, body - payload)) {
        return TRANSPORT_EPROTO;
    }
    if (session->header_flags & SESSION_FLAG_PING) {
        return 0;
    }
    if (session->header_flags & SESSION_FLAG_COMPRESSED) {
        rc = payload_decompress(session, bytes, payload);
        if (rc != 0) {
            return rc;
        }
        sink->deliver(sink->ctx, session->header_type, session->message.data,
                      session->message.size);
        return 0;
    }
    sink->deliver(sink->ctx, session->header_type,
                  payload > 0 ? bytes : empty_bytes, payload);
    return 0;
}
