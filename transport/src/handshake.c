/* SPDX-License-Identifier: MIT
 *
 * handshake.c: the session's mutual handshake and key schedule, three
 * messages in the manner of SIGMA-I (Krawczyk 2003) and the Noise "XX"
 * pattern: fresh X25519 ephemerals on both sides, each side signs the whole
 * transcript (the protocol label, both ephemerals, both identities) with
 * its ed25519 identity key, and the signatures travel encrypted under keys
 * derived from the ephemeral Diffie-Hellman secret, the transcript and the
 * cluster secret when there is one:
 *
 *   I -> R  hello: "SNWT", version, e_I, id_I
 *   R -> I  reply: e_R, AEAD_K2(id_R | sign_R("...acceptor" | TH))
 *   I -> R  proof: AEAD_K3(sign_I("...initiator" | TH))
 *
 *   DH   = X25519(e, e')                              crypto_scalarmult
 *   TH1  = BLAKE2b-256(label | hello | e_R)           crypto_generichash
 *   PRK  = BLAKE2b-256[key = cluster secret or none]("... handshake" | DH
 *          | TH1)
 *   K2, K3 = KDF(PRK, 1 and 2, "sinewhs1")            crypto_kdf
 *   TH   = BLAKE2b-256(TH1 | id_R)
 *   TRAFFIC = BLAKE2b-256[key = PRK]("... traffic" | TH)
 *   initiator->acceptor, acceptor->initiator keys = KDF(TRAFFIC, 1 and 2,
 *          "sinewtr1"); ChaCha20-Poly1305 (IETF), counter nonces from 0
 *
 * Why it holds: a side without the ephemeral secret, or without the
 * cluster secret when one keys PRK, cannot decrypt the reply nor forge the
 * proof; a signature binds its signer to both ephemerals and both ids (no
 * unknown-key-share), and the role in the signed text stops reflection.
 * The initiator's id travels in the clear (so an acceptor with a list can
 * refuse an unlisted one before any public-key work); the acceptor's only
 * encrypted, to a peer that knows the cluster secret when there is one.
 * Failed decryption or proof is TRANSPORT_EAUTH; a wrong magic or version
 * is TRANSPORT_EPROTO.
 */
#include "session_int.h"

#include <string.h>

#define LABEL "sinew-transport-v1"
#define LABEL_HANDSHAKE LABEL " handshake"
#define LABEL_TRAFFIC LABEL " traffic"
#define LABEL_ACCEPTOR LABEL " acceptor"
#define LABEL_INITIATOR LABEL " initiator"
#define KDF_HANDSHAKE "sinewhs1"
#define KDF_TRAFFIC "sinewtr1"

STATIC_ASSERT(sizeof(KDF_HANDSHAKE) - 1 == crypto_kdf_CONTEXTBYTES,
              "kdf context");
STATIC_ASSERT(sizeof(KDF_TRAFFIC) - 1 == crypto_kdf_CONTEXTBYTES,
              "kdf context");
STATIC_ASSERT(SESSION_HASH_BYTES == crypto_kdf_KEYBYTES, "hash as kdf key");

static const uint8_t zero_nonce[SESSION_NONCE_BYTES];

static bool is_listed(const struct transport_admission *admission,
                      const struct transport_node_id *id)
{
    if (admission->authorized == NULL) {
        return true;
    }
    for (size_t i = 0; i < admission->authorized_count; i++) {
        if (transport_node_id_equal(&admission->authorized[i], id)) {
            return true;
        }
    }
    return false;
}

static void ephemeral_generate(struct transport__session *session)
{
    randombytes_buf(session->ephemeral_secret,
                    sizeof(session->ephemeral_secret));
    crypto_scalarmult_base(session->ephemeral_public,
                           session->ephemeral_secret);
}

/* From the peer's ephemeral and the hello: TH1 into transcript, PRK into
 * handshake_root, K3 into proof_key and K2 into *reply_key. EAUTH when the
 * peer's ephemeral is a low-order point (the shared secret is zero). */
static int keys_derive(struct transport__session *session,
                       const uint8_t *peer_ephemeral,
                       const uint8_t *acceptor_ephemeral, uint8_t *reply_key)
{
    const uint8_t *cluster = session->config.admission->cluster_secret;
    crypto_generichash_state state;
    uint8_t shared[SESSION_DH_BYTES];
    int rc = 0;

    if (crypto_scalarmult(shared, session->ephemeral_secret, peer_ephemeral) !=
        0) {
        rc = TRANSPORT_EAUTH;
        goto done;
    }
    crypto_generichash_init(&state, NULL, 0, SESSION_HASH_BYTES);
    crypto_generichash_update(&state, (const uint8_t *)LABEL,
                              sizeof(LABEL) - 1);
    crypto_generichash_update(&state, session->hello, sizeof(session->hello));
    crypto_generichash_update(&state, acceptor_ephemeral, SESSION_DH_BYTES);
    crypto_generichash_final(&state, session->transcript, SESSION_HASH_BYTES);

    crypto_generichash_init(
        &state, cluster, cluster != NULL ? TRANSPORT_CLUSTER_SECRET_BYTES : 0,
        SESSION_HASH_BYTES);
    crypto_generichash_update(&state, (const uint8_t *)LABEL_HANDSHAKE,
                              sizeof(LABEL_HANDSHAKE) - 1);
    crypto_generichash_update(&state, shared, sizeof(shared));
    crypto_generichash_update(&state, session->transcript, SESSION_HASH_BYTES);
    crypto_generichash_final(&state, session->handshake_root,
                             SESSION_HASH_BYTES);
    crypto_kdf_derive_from_key(reply_key, SESSION_KEY_BYTES, 1, KDF_HANDSHAKE,
                               session->handshake_root);
    crypto_kdf_derive_from_key(session->proof_key, SESSION_KEY_BYTES, 2,
                               KDF_HANDSHAKE, session->handshake_root);
done:
    sodium_memzero(shared, sizeof(shared));
    sodium_memzero(&state, sizeof(state));
    return rc;
}

/* TH = BLAKE2b-256(TH1 | id_R), in place. */
static void transcript_finish(struct transport__session *session,
                              const struct transport_node_id *acceptor)
{
    crypto_generichash_state state;

    crypto_generichash_init(&state, NULL, 0, SESSION_HASH_BYTES);
    crypto_generichash_update(&state, session->transcript, SESSION_HASH_BYTES);
    crypto_generichash_update(&state, acceptor->key, sizeof(acceptor->key));
    crypto_generichash_final(&state, session->transcript, SESSION_HASH_BYTES);
}

/* The text a side signs: its role's label, then TH. */
#define SIGNED_SIZE_MAX (sizeof(LABEL_INITIATOR) - 1 + SESSION_HASH_BYTES)

static size_t signed_text(const struct transport__session *session,
                          bool initiator, uint8_t *out)
{
    const char *label = initiator ? LABEL_INITIATOR : LABEL_ACCEPTOR;
    size_t length = strlen(label);

    memcpy(out, label, length);
    memcpy(out + length, session->transcript, SESSION_HASH_BYTES);
    return length + SESSION_HASH_BYTES;
}

static void transcript_sign(const struct transport__session *session,
                            uint8_t *signature)
{
    uint8_t text[SIGNED_SIZE_MAX];
    size_t size = signed_text(session, session->config.initiator, text);

    crypto_sign_detached(signature, NULL, text, size,
                         session->config.identity->secret);
}

static int transcript_verify(const struct transport__session *session,
                             const uint8_t *signature,
                             const struct transport_node_id *signer)
{
    uint8_t text[SIGNED_SIZE_MAX];
    size_t size = signed_text(session, !session->config.initiator, text);

    if (crypto_sign_verify_detached(signature, text, size, signer->key) != 0) {
        return TRANSPORT_EAUTH;
    }
    return 0;
}

/* The traffic keys from PRK and TH, into send and recv by role. */
static void traffic_derive(struct transport__session *session)
{
    crypto_generichash_state state;
    uint8_t root[SESSION_HASH_BYTES];
    uint64_t send_id = session->config.initiator ? 1 : 2;

    crypto_generichash_init(&state, session->handshake_root,
                            sizeof(session->handshake_root),
                            SESSION_HASH_BYTES);
    crypto_generichash_update(&state, (const uint8_t *)LABEL_TRAFFIC,
                              sizeof(LABEL_TRAFFIC) - 1);
    crypto_generichash_update(&state, session->transcript, SESSION_HASH_BYTES);
    crypto_generichash_final(&state, root, sizeof(root));
    crypto_kdf_derive_from_key(session->send.key, SESSION_KEY_BYTES, send_id,
                               KDF_TRAFFIC, root);
    crypto_kdf_derive_from_key(session->recv.key, SESSION_KEY_BYTES,
                               3 - send_id, KDF_TRAFFIC, root);
    session->send.counter = 0;
    session->recv.counter = 0;
    sodium_memzero(root, sizeof(root));
    sodium_memzero(&state, sizeof(state));
}

int transport__handshake_start(struct transport__session *session,
                               struct common_buf *out)
{
    uint8_t *p = session->hello;

    ASSERT(session->config.initiator);
    ephemeral_generate(session);
    memcpy(p, SESSION_MAGIC, SESSION_MAGIC_SIZE);
    p[SESSION_MAGIC_SIZE] = SESSION_VERSION;
    p += SESSION_MAGIC_SIZE + 1;
    memcpy(p, session->ephemeral_public, SESSION_DH_BYTES);
    memcpy(p + SESSION_DH_BYTES, session->config.identity->id.key,
           TRANSPORT_PUBLIC_KEY_BYTES);
    return common_buf_append(out, session->hello, sizeof(session->hello));
}

/* The acceptor's reply: e_R, then id_R and its signature sealed with K2. */
static int reply_build(struct transport__session *session,
                       const uint8_t *reply_key, struct common_buf *out)
{
    const struct transport_node_id *self = &session->config.identity->id;
    uint8_t reply[SESSION_REPLY_SIZE];
    uint8_t *sealed = reply + SESSION_DH_BYTES;

    memcpy(reply, session->ephemeral_public, SESSION_DH_BYTES);
    memcpy(sealed, self->key, sizeof(self->key));
    transcript_sign(session, sealed + sizeof(self->key));
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        sealed, sealed + SESSION_REPLY_PLAIN_SIZE, NULL, sealed,
        SESSION_REPLY_PLAIN_SIZE, NULL, 0, NULL, zero_nonce, reply_key);
    return common_buf_append(out, reply, sizeof(reply));
}

int transport__handshake_hello(struct transport__session *session,
                               const uint8_t *bytes, struct common_buf *out)
{
    uint8_t reply_key[SESSION_KEY_BYTES];
    const uint8_t *peer_ephemeral = bytes + SESSION_MAGIC_SIZE + 1;
    int rc;

    if (memcmp(bytes, SESSION_MAGIC, SESSION_MAGIC_SIZE) != 0 ||
        bytes[SESSION_MAGIC_SIZE] != SESSION_VERSION) {
        return TRANSPORT_EPROTO;
    }
    memcpy(session->hello, bytes, SESSION_HELLO_SIZE);
    memcpy(session->peer.key, peer_ephemeral + SESSION_DH_BYTES,
           sizeof(session->peer.key));
    session->has_claim = true;
    if (!is_listed(session->config.admission, &session->peer)) {
        return TRANSPORT_EAUTH;
    }
    ephemeral_generate(session);
    rc = keys_derive(session, peer_ephemeral, session->ephemeral_public,
                     reply_key);
    if (rc == 0) {
        transcript_finish(session, &session->config.identity->id);
        rc = reply_build(session, reply_key, out);
    }
    sodium_memzero(reply_key, sizeof(reply_key));
    return rc;
}

/* The initiator checks the acceptor it reached: the one it dialed, listed
 * when there is a list, and the holder of that id's secret. */
static int reply_check(struct transport__session *session,
                       const uint8_t *opened)
{
    struct transport_node_id acceptor;
    const struct transport_node_id *expected = session->config.expected_peer;

    memcpy(acceptor.key, opened, sizeof(acceptor.key));
    if (!transport_node_id_equal(&acceptor, expected) ||
        !is_listed(session->config.admission, &acceptor)) {
        return TRANSPORT_EAUTH;
    }
    transcript_finish(session, &acceptor);
    if (transcript_verify(session, opened + sizeof(acceptor.key), &acceptor) !=
        0) {
        return TRANSPORT_EAUTH;
    }
    session->peer = acceptor;
    return 0;
}

int transport__handshake_reply(struct transport__session *session,
                               const uint8_t *bytes, struct common_buf *out)
{
    uint8_t reply_key[SESSION_KEY_BYTES];
    uint8_t opened[SESSION_REPLY_PLAIN_SIZE];
    uint8_t proof[SESSION_PROOF_SIZE];
    const uint8_t *sealed = bytes + SESSION_DH_BYTES;
    int rc;

    rc = keys_derive(session, bytes, bytes, reply_key);
    if (rc != 0) {
        goto done;
    }
    if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(
            opened, NULL, sealed, SESSION_REPLY_PLAIN_SIZE,
            sealed + SESSION_REPLY_PLAIN_SIZE, NULL, 0, zero_nonce,
            reply_key) != 0) {
        rc = TRANSPORT_EAUTH;
        goto done;
    }
    rc = reply_check(session, opened);
    if (rc != 0) {
        goto done;
    }
    transcript_sign(session, proof);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        proof, proof + SESSION_SIGNATURE_BYTES, NULL, proof,
        SESSION_SIGNATURE_BYTES, NULL, 0, NULL, zero_nonce, session->proof_key);
    rc = common_buf_append(out, proof, sizeof(proof));
    if (rc == 0) {
        traffic_derive(session);
    }
done:
    sodium_memzero(reply_key, sizeof(reply_key));
    return rc;
}

int transport__handshake_proof(struct transport__session *session,
                               const uint8_t *bytes)
{
    uint8_t signature[SESSION_SIGNATURE_BYTES];

    if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(
            signature, NULL, bytes, SESSION_SIGNATURE_BYTES,
            bytes + SESSION_SIGNATURE_BYTES, NULL, 0, zero_nonce,
            session->proof_key) != 0) {
        return TRANSPORT_EAUTH;
    }
    if (transcript_verify(session, signature, &session->peer) != 0) {
        return TRANSPORT_EAUTH;
    }
    traffic_derive(session);
    return 0;
}

int transport__handshake_plain_start(struct transport__session *session,
                                     struct common_buf *out)
{
    uint8_t hello[SESSION_PLAIN_HELLO_SIZE];

    memcpy(hello, SESSION_PLAIN_MAGIC, SESSION_MAGIC_SIZE);
    hello[SESSION_MAGIC_SIZE] = SESSION_VERSION;
    memcpy(hello + SESSION_MAGIC_SIZE + 1, session->config.identity->id.key,
           TRANSPORT_PUBLIC_KEY_BYTES);
    return common_buf_append(out, hello, sizeof(hello));
}

/* Plaintext mode: the peer's claimed id, checked only against the
 * initiator's expected_peer (a configuration check, not a proof). */
int transport__handshake_plain_hello(struct transport__session *session,
                                     const uint8_t *bytes,
                                     struct common_buf *out)
{
    if (memcmp(bytes, SESSION_PLAIN_MAGIC, SESSION_MAGIC_SIZE) != 0 ||
        bytes[SESSION_MAGIC_SIZE] != SESSION_VERSION) {
        return TRANSPORT_EPROTO;
    }
    memcpy(session->peer.key, bytes + SESSION_MAGIC_SIZE + 1,
           sizeof(session->peer.key));
    session->has_claim = true;
    if (session->config.initiator) {
        if (!transport_node_id_equal(&session->peer,
                                     session->config.expected_peer)) {
            return TRANSPORT_EAUTH;
        }
        return 0;
    }
    return transport__handshake_plain_start(session, out);
}
