// The few libcrypto operations Courier needs, as non-variadic functions: RS256 signatures for
// service-account JWTs (and their verification, for the test server), RSA key generation for
// tests, ES256 for GDCH service accounts, SHA-256, HMAC-SHA256 (AWS Signature Version 4), and
// streaming MD5 for upload integrity.
#ifndef COURIER_COPENSSL_SHIM_H
#define COURIER_COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/// A parsed key of `type` (EVP_PKEY_RSA, EVP_PKEY_EC), of `bits` when not 0; NULL (and freed) otherwise.
static inline EVP_PKEY *courier_pkey_of_type(EVP_PKEY *key, int type, int bits) {
    if (key && (EVP_PKEY_get_base_id(key) != type || (bits && EVP_PKEY_get_bits(key) != bits))) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    ERR_clear_error();
    return key;
}

/// Parses a PEM key, private (PKCS#8, or PKCS#1/SEC1) or public (SubjectPublicKeyInfo); NULL
/// unless of `type` (and `bits`, when not 0). NULL too for a text past what a BIO takes (int).
static inline EVP_PKEY *courier_key_from_pem(const char *pem, size_t length, int is_public, int type, int bits) {
    if (length > INT_MAX) return NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)length);
    if (!bio) return NULL;
    EVP_PKEY *key = is_public ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    return courier_pkey_of_type(key, type, bits);
}

/// Parses a PEM private key (PKCS#8 or PKCS#1); NULL if it is not one. Only RSA keys are accepted.
static inline EVP_PKEY *courier_rsa_private_key_from_pem(const char *pem, size_t length) {
    return courier_key_from_pem(pem, length, 0, EVP_PKEY_RSA, 0);
}

static inline void courier_pkey_free(EVP_PKEY *key) { EVP_PKEY_free(key); }

static inline size_t courier_pkey_size(EVP_PKEY *key) { return (size_t)EVP_PKEY_get_size(key); }

/// RS256: RSASSA-PKCS1-v1_5 with SHA-256. `signature` must hold courier_pkey_size(key) bytes.
static inline int courier_rs256_sign(EVP_PKEY *key, const unsigned char *data, size_t length,
                                     unsigned char *signature, size_t *signature_length) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (!context) return 0;
    int ok = EVP_DigestSignInit(context, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestSign(context, signature, signature_length, data, length) == 1;
    EVP_MD_CTX_free(context);
    ERR_clear_error();
    return ok;
}

/// Parses a PEM public key (SubjectPublicKeyInfo); NULL if it is not an RSA one.
static inline EVP_PKEY *courier_rsa_public_key_from_pem(const char *pem, size_t length) {
    return courier_key_from_pem(pem, length, 1, EVP_PKEY_RSA, 0);
}

/// 1 when `signature` is the RS256 signature of `data` by `key`'s private half.
static inline int courier_rs256_verify(EVP_PKEY *key, const unsigned char *data, size_t length,
                                       const unsigned char *signature, size_t signature_length) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (!context) return 0;
    int ok = EVP_DigestVerifyInit(context, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestVerify(context, signature, signature_length, data, length) == 1;
    EVP_MD_CTX_free(context);
    ERR_clear_error();
    return ok;
}

/// `key` (which it frees) as PEM text: PKCS#8, or the traditional form (PKCS#1, SEC1) when
/// `traditional`, and SubjectPublicKeyInfo; the caller frees both strings. 1 on success.
static inline int courier_pem_pair(EVP_PKEY *key, int traditional, char **private_pem, char **public_pem) {
    if (!key) return 0;
    BIO *private_bio = BIO_new(BIO_s_mem()), *public_bio = BIO_new(BIO_s_mem());
    int ok = private_bio && public_bio
        && (traditional ? PEM_write_bio_PrivateKey_traditional(private_bio, key, NULL, NULL, 0, NULL, NULL)
                        : PEM_write_bio_PrivateKey(private_bio, key, NULL, NULL, 0, NULL, NULL)) == 1
        && PEM_write_bio_PUBKEY(public_bio, key) == 1;
    if (ok) {
        char *data; long length;
        length = BIO_get_mem_data(private_bio, &data);
        *private_pem = strndup(data, (size_t)length);
        length = BIO_get_mem_data(public_bio, &data);
        *public_pem = strndup(data, (size_t)length);
    }
    BIO_free(private_bio);
    BIO_free(public_bio);
    EVP_PKEY_free(key);
    return ok;
}

/// A new RSA key pair as PEM text (PKCS#8 private, SubjectPublicKeyInfo public); the caller frees both.
static inline int courier_rsa_generate_pem(int bits, char **private_pem, char **public_pem) {
    return courier_pem_pair(EVP_RSA_gen((unsigned int)bits), 0, private_pem, public_pem);
}

// MARK: - ES256 (ECDSA on P-256 with SHA-256), as JWS writes it: r and s, 32 bytes each

/// Parses a PEM private key (SEC1 "EC PRIVATE KEY" or PKCS#8); NULL unless it is a P-256 key.
static inline EVP_PKEY *courier_ec_private_key_from_pem(const char *pem, size_t length) {
    return courier_key_from_pem(pem, length, 0, EVP_PKEY_EC, 256);
}

/// Parses a PEM public key (SubjectPublicKeyInfo); NULL unless it is a P-256 key.
static inline EVP_PKEY *courier_ec_public_key_from_pem(const char *pem, size_t length) {
    return courier_key_from_pem(pem, length, 1, EVP_PKEY_EC, 256);
}

/// Signs `data` with ES256 into `signature` (64 bytes: r then s, big-endian); 1 on success.
static inline int courier_es256_sign(EVP_PKEY *key, const unsigned char *data, size_t length, unsigned char *signature) {
    unsigned char der[80];
    size_t der_length = sizeof(der);
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (!context) return 0;
    int ok = EVP_DigestSignInit(context, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestSign(context, der, &der_length, data, length) == 1;
    EVP_MD_CTX_free(context);
    if (ok) {
        const unsigned char *cursor = der;
        ECDSA_SIG *parsed = d2i_ECDSA_SIG(NULL, &cursor, (long)der_length);
        ok = parsed != NULL;
        if (parsed) {
            const BIGNUM *r, *s;
            ECDSA_SIG_get0(parsed, &r, &s);
            ok = BN_bn2binpad(r, signature, 32) == 32 && BN_bn2binpad(s, signature + 32, 32) == 32;
            ECDSA_SIG_free(parsed);
        }
    }
    ERR_clear_error();
    return ok;
}

/// 1 when `signature` (64 bytes: r then s) is the ES256 signature of `data` by `key`'s private half.
static inline int courier_es256_verify(EVP_PKEY *key, const unsigned char *data, size_t length, const unsigned char *signature) {
    ECDSA_SIG *parsed = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(signature, 32, NULL), *s = BN_bin2bn(signature + 32, 32, NULL);
    if (!parsed || !r || !s || ECDSA_SIG_set0(parsed, r, s) != 1) {
        ECDSA_SIG_free(parsed);
        BN_free(r);
        BN_free(s);
        return 0;
    }
    unsigned char *der = NULL;
    int der_length = i2d_ECDSA_SIG(parsed, &der);
    ECDSA_SIG_free(parsed); // frees r and s, which it owns now
    if (der_length <= 0) return 0;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int ok = context && EVP_DigestVerifyInit(context, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestVerify(context, der, (size_t)der_length, data, length) == 1;
    EVP_MD_CTX_free(context);
    OPENSSL_free(der);
    ERR_clear_error();
    return ok;
}

/// A new P-256 key pair as PEM text (SEC1 "EC PRIVATE KEY", as GDCH's files hold it;
/// SubjectPublicKeyInfo public); the caller frees both. For tests.
static inline int courier_ec_generate_pem(char **private_pem, char **public_pem) {
    return courier_pem_pair(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), 1, private_pem, public_pem);
}

/// SHA-256 of a buffer into `digest` (32 bytes).
static inline int courier_sha256(const void *data, size_t length, unsigned char *digest) {
    unsigned int size = 32;
    return EVP_Digest(data, length, digest, &size, EVP_sha256(), NULL);
}

/// HMAC-SHA256 of a buffer under `key` into `mac` (32 bytes); 1 on success.
static inline int courier_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, unsigned char *mac) {
    unsigned int size = 32;
    // A key longer than the hash's block is hashed first (RFC 2104), so hashing one too long for
    // HMAC's int length here gives the same MAC.
    unsigned char digest[32];
    if (key_length > INT_MAX) {
        if (!courier_sha256(key, key_length, digest)) return 0;
        key = digest;
        key_length = sizeof digest;
    }
    return HMAC(EVP_sha256(), key, (int)key_length, (const unsigned char *)data, length, mac, &size) != NULL;
}

// MARK: - Streaming MD5

static inline EVP_MD_CTX *courier_md5_new(void) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context && EVP_DigestInit_ex(context, EVP_md5(), NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

static inline void courier_md5_update(EVP_MD_CTX *context, const void *data, size_t length) {
    EVP_DigestUpdate(context, data, length);
}

/// Writes 16 bytes to `digest` and frees the context.
static inline void courier_md5_finish(EVP_MD_CTX *context, unsigned char *digest) {
    unsigned int length = 16;
    EVP_DigestFinal_ex(context, digest, &length);
    EVP_MD_CTX_free(context);
}

static inline void courier_md5_free(EVP_MD_CTX *context) { EVP_MD_CTX_free(context); }

/// A second context in the same state; NULL if it cannot be made.
static inline EVP_MD_CTX *courier_md5_copy(const EVP_MD_CTX *context) {
    EVP_MD_CTX *copy = EVP_MD_CTX_new();
    if (copy && EVP_MD_CTX_copy_ex(copy, context) != 1) {
        EVP_MD_CTX_free(copy);
        return NULL;
    }
    return copy;
}

#endif
