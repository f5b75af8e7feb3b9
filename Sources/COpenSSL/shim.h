#ifndef PUSHQ_COPENSSL_SHIM_H
#define PUSHQ_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pkcs12.h>
/* EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen, which Swift cannot call. */
static inline EVP_PKEY *copenssl_ec_gen(const char *curve) { return EVP_EC_gen(curve); }
#endif
