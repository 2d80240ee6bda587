#ifndef GQL_CCRYPTO_SHIM_H
#define GQL_CCRYPTO_SHIM_H
// OpenSSL's libcrypto (apt libssl-dev): digests, HMAC, signature verification, RS256 and ES256 signing.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/err.h>
#include <openssl/bn.h>
#include <openssl/rsa.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#endif
