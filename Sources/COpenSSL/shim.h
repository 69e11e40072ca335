#ifndef PUSHWORKER_COPENSSL_SHIM_H
#define PUSHWORKER_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>

// Function-like macros are not imported into Swift; these inline wrappers expose them.
static inline long pw_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline long pw_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long pw_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long pw_BIO_set_read_buffer_size(BIO *bio, long size) {
    return BIO_set_read_buffer_size(bio, size);
}
static inline long pw_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add1_chain_cert(ctx, cert);
}
static inline long pw_SSL_CTX_set_options(SSL_CTX *ctx, uint64_t options) {
    return (long)SSL_CTX_set_options(ctx, options);
}
static inline int pw_TLS1_2_VERSION(void) { return TLS1_2_VERSION; }
// Key selections for EVP_PKEY_fromdata: macros built from other macros, which Swift does not import.
static inline int pw_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int pw_EVP_PKEY_KEYPAIR(void) { return EVP_PKEY_KEYPAIR; }
static inline long pw_SSL_MODE_PARTIAL_WRITES(void) {
    return SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
}
static inline uint64_t pw_SSL_OP_IGNORE_UNEXPECTED_EOF(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
static inline uint64_t pw_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline void pw_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
// A passphrase callback that never asks: with no callback and no password OpenSSL's default one
// prompts on the terminal, which hangs a service. Records in *asked (an int, may be NULL) that the
// key is encrypted, so the caller can say so instead of a generic decode error.
static inline int pw_pem_refuse_passphrase(char *buf, int size, int rwflag, void *asked) {
    (void)buf; (void)size; (void)rwflag;
    if (asked) *(int *)asked = 1;
    return -1;
}
static inline int pw_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *pw_sk_X509_value(const STACK_OF(X509) *stack, int i) { return sk_X509_value(stack, i); }
#endif
