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
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
/* EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen, which Swift cannot call. */
static inline EVP_PKEY *copenssl_ec_gen(const char *curve) { return EVP_EC_gen(curve); }
/* EVP_RSA_gen likewise (the mock's fixtures: an FCM service account's key). */
static inline EVP_PKEY *copenssl_rsa_gen(unsigned int bits) { return EVP_RSA_gen(bits); }
/* MBSTRING_ASC is an expression macro Swift does not import (X509_NAME_add_entry_by_txt). */
static const int COPENSSL_MBSTRING_ASC = MBSTRING_ASC;
#endif
