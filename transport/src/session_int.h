/* SPDX-License-Identifier: MIT
 *
 * session_int.h: the session's state, shared by session.c (the receive loop
 * and the state machine), handshake.c (the three handshake messages and the
 * key schedule) and frame.c (sealing and opening frames). Never included
 * from outside transport/src, except by the session's tests and fuzzer.
 *
 * Byte layouts (also in docs/formats.md, "Transport"; all integers
 * little-endian):
 *
 *   hello (initiator -> acceptor), 69 bytes, plaintext:
 *     0   4  magic "SNWT"
 *     4   1  version, 1
 *     5  32  initiator's ephemeral X25519 public key
 *    37  32  initiator's node id (ed25519 public key)
 *
 *   reply (acceptor -> initiator), 144 bytes:
 *     0  32  acceptor's ephemeral X25519 public key
 *    32  96  ChaCha20-Poly1305 (key K2, nonce 0) of:
 *              acceptor's node id (32) | its signature (64)
 *   128  16  the tag
 *
 *   proof (initiator -> acceptor), 80 bytes:
 *     0  64  ChaCha20-Poly1305 (key K3, nonce 0) of the initiator's signature
 *    64  16  the tag
 *
 *   frame header, 11 bytes (encrypted: + 16-byte tag, nonce n):
 *     0   4  body size: bytes of the body's plaintext (payload + padding)
 *     4   4  payload size
 *     8   2  message type
 *    10   1  flags: COMPRESSED 1, PADDED 2, PING 4
 *   frame body, body size bytes (encrypted: + 16-byte tag, nonce n + 1):
 *     payload (COMPRESSED: original size u32 | lz4 block), zero padding
 *
 *   plaintext mode (benchmark only): the hello is "SNWP", version 1 and the
 *   sender's node id (37 bytes), sent by the initiator first and answered
 *   by the acceptor; frames as above without tags.
 */
#ifndef SINEW_TRANSPORT_SESSION_INT_H
#define SINEW_TRANSPORT_SESSION_INT_H

#include <sodium.h>

#include "session.h"

#define SESSION_VERSION 1
#define SESSION_MAGIC "SNWT"
#define SESSION_PLAIN_MAGIC "SNWP"
#define SESSION_MAGIC_SIZE 4

#define SESSION_KEY_BYTES crypto_aead_chacha20poly1305_ietf_KEYBYTES
#define SESSION_TAG_BYTES crypto_aead_chacha20poly1305_ietf_ABYTES
#define SESSION_NONCE_BYTES crypto_aead_chacha20poly1305_ietf_NPUBBYTES
#define SESSION_DH_BYTES crypto_scalarmult_BYTES
#define SESSION_SIGNATURE_BYTES crypto_sign_BYTES
#define SESSION_HASH_BYTES crypto_generichash_BYTES

#define SESSION_HELLO_SIZE                                                     \
    (SESSION_MAGIC_SIZE + 1 + SESSION_DH_BYTES + TRANSPORT_PUBLIC_KEY_BYTES)
#define SESSION_REPLY_PLAIN_SIZE                                               \
    (TRANSPORT_PUBLIC_KEY_BYTES + SESSION_SIGNATURE_BYTES)
#define SESSION_REPLY_SIZE                                                     \
    (SESSION_DH_BYTES + SESSION_REPLY_PLAIN_SIZE + SESSION_TAG_BYTES)
#define SESSION_PROOF_SIZE (SESSION_SIGNATURE_BYTES + SESSION_TAG_BYTES)
#define SESSION_PLAIN_HELLO_SIZE                                               \
    (SESSION_MAGIC_SIZE + 1 + TRANSPORT_PUBLIC_KEY_BYTES)

#define SESSION_HEADER_SIZE 11
#define SESSION_FLAG_COMPRESSED 1u
#define SESSION_FLAG_PADDED 2u
#define SESSION_FLAG_PING 4u
#define SESSION_FLAGS_ALL 7u

/* A compressed payload starts with the original size. */
#define SESSION_ORIGINAL_SIZE_BYTES 4

/* Padding rounds a body up to a power of two of at least PAD_MIN bytes, up
 * to PAD_STEP; above, to a multiple of PAD_STEP. */
#define SESSION_PAD_MIN 64
#define SESSION_PAD_STEP (64u << 10)

/* The largest max_message_bytes a session takes: body sizes, padded, must
 * fit the header's uint32 and lz4's input limit with room to spare. */
#define SESSION_MESSAGE_MAX_BYTES (1u << 30)

STATIC_ASSERT(SESSION_HELLO_SIZE == 69, "hello layout");
STATIC_ASSERT(SESSION_REPLY_SIZE == 144, "reply layout");
STATIC_ASSERT(SESSION_PROOF_SIZE == 80, "proof layout");
STATIC_ASSERT(SESSION_PLAIN_HELLO_SIZE == 37, "plaintext hello layout");
STATIC_ASSERT(SESSION_DH_BYTES == crypto_kdf_KEYBYTES, "kdf keys");
STATIC_ASSERT(SESSION_KEY_BYTES == crypto_kdf_KEYBYTES, "kdf subkeys");

/* The state machine (session.c, session_state_set()):
 *
 *   initiator: START -start()-> WAIT_REPLY -reply-> ESTABLISHED
 *   acceptor:  WAIT_HELLO -hello-> WAIT_PROOF -proof-> ESTABLISHED
 *   plaintext: the same, with the plaintext hello in place of the reply
 *              (initiator) and of the hello (acceptor, then ESTABLISHED)
 *   any state -error-> FAILED, which refuses everything after
 */
enum session_state {
    SESSION_START = 1,
    SESSION_WAIT_HELLO,
    SESSION_WAIT_REPLY,
    SESSION_WAIT_PROOF,
    SESSION_ESTABLISHED,
    SESSION_FAILED,
};

/* One direction's traffic key and the nonce counter of its next AEAD
 * operation (a frame takes two: its header, then its body). A counter is
 * never reused with its key; a receiver that expects counter n rejects a
 * frame sealed with any other, which is what stops replays and reorders. */
struct session_cipher {
    uint8_t key[SESSION_KEY_BYTES]; /* secret; wiped when done */
    uint64_t counter;               /* the next nonce */
};

/* Invariants: rx.size < rx_need unless a unit is being processed;
 * rx.size_max bounds the largest unit (the largest frame body and tag), so
 * no input, however split, makes the session buffer more. in_body says the
 * header of the frame being read has been opened into the header_* fields.
 */
struct transport__session {
    struct transport__session_config config; /* copied; pointers borrowed */
    enum session_state state;                /* see the table above */
    int failure;                   /* the code FAILED returns; 0 before */
    struct transport_node_id peer; /* the peer's id (claimed until has_peer) */
    bool has_peer;                 /* peer proven: ESTABLISHED was reached */
    bool has_claim;                /* peer holds what the peer claimed */
    /* The handshake's secrets (wiped once established or failed). */
    uint8_t ephemeral_public[SESSION_DH_BYTES];
    uint8_t ephemeral_secret[SESSION_DH_BYTES];
    uint8_t hello[SESSION_HELLO_SIZE];         /* as sent or received */
    uint8_t transcript[SESSION_HASH_BYTES];    /* what the signatures cover */
    uint8_t handshake_root[SESSION_KEY_BYTES]; /* PRK, docs/formats.md */
    uint8_t proof_key[SESSION_KEY_BYTES];      /* K3 */
    struct session_cipher send;                /* this side's frames */
    struct session_cipher recv;                /* the peer's frames */
    size_t body_max; /* the largest body size accepted */
    /* Receiving. */
    struct common_buf rx; /* the unit being assembled; owned */
    size_t rx_need;       /* bytes the current unit takes */
    bool in_body;         /* the header is read; the body is next */
    uint32_t header_body_size;
    uint32_t header_payload_size;
    uint16_t header_type;
    uint8_t header_flags;
    struct common_buf message; /* a decompressed message; owned */
    /* Sending: the compressed or padded body before sealing; owned. */
    struct common_buf tx;
};

/* What receive() hands each message to. */
struct transport__session_sink {
    void (*deliver)(void *ctx, uint16_t type, const uint8_t *bytes,
                    size_t size);
    void *ctx;
    struct common_buf *out; /* replies (the handshake's); borrowed */
};

/* handshake.c. Each takes a whole message (size given by the state), and
 * returns 0, TRANSPORT_EAUTH or TRANSPORT_EPROTO, or COMMON_ENOMEM. */
int transport__handshake_start(struct transport__session *session,
                               struct common_buf *out);
int transport__handshake_hello(struct transport__session *session,
                               const uint8_t *bytes, struct common_buf *out);
int transport__handshake_reply(struct transport__session *session,
                               const uint8_t *bytes, struct common_buf *out);
int transport__handshake_proof(struct transport__session *session,
                               const uint8_t *bytes);
int transport__handshake_plain_hello(struct transport__session *session,
                                     const uint8_t *bytes,
                                     struct common_buf *out);
/* The plaintext hello: this side's id. */
int transport__handshake_plain_start(struct transport__session *session,
                                     struct common_buf *out);

/* frame.c */

/* The body size a payload of size bytes is padded to. */
size_t transport__frame_padded_size(size_t size);

/* Seals one frame (flags: 0 or SESSION_FLAG_PING) to out. */
int transport__frame_seal(struct transport__session *session, uint16_t type,
                          unsigned flags, const uint8_t *bytes, size_t size,
                          struct common_buf *out);

/* Opens the header in bytes (SESSION_HEADER_SIZE, plus the tag when
 * encrypted; decrypted in place) into the session's header_* fields and
 * checks them. 0 or TRANSPORT_EPROTO. */
int transport__frame_open_header(struct transport__session *session,
                                 uint8_t *bytes);

/* Opens the body in bytes (header_body_size, plus the tag when encrypted;
 * decrypted in place) and delivers its message unless it is a ping. */
int transport__frame_open_body(struct transport__session *session,
                               uint8_t *bytes,
                               const struct transport__session_sink *sink);

#endif /* SINEW_TRANSPORT_SESSION_INT_H */
