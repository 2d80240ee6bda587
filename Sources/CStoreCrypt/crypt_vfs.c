// The "gqlcrypt" VFS: a shim over the default (unix) VFS that encrypts every database page, WAL frame page and
// rollback-journal page with AES-256-GCM. The on-disk format and the reasoning are in GQLStore's Encryption article;
// the short version:
//
//   page image (SQLite's size, 32 reserved bytes at its end):
//     [0, usable)          ciphertext of SQLite's bytes (page 1: bytes 0..23 stay outside, see below)
//     [usable, +12)        nonce: 4 random bytes per connection, then a 64-bit counter (random start) per page write;
//                          drawn again in a forked child before its first write
//     [+12, +28)           GCM tag
//     [+28, +32)           key check: HMAC-SHA256(key, "gqlcrypt key check" || file id), first 4 bytes
//   page 1, bytes 0..15:   the file id (random; also the passphrase salt) in place of "SQLite format 3\0"
//   page 1, bytes 16..23:  page size, versions, reserve, payload fractions, in clear (authenticated as AAD)
//   associated data:       file id || page number (big-endian 32 bits) [|| page 1 bytes 16..23]
//   page key:              HKDF-SHA256(key, salt = file id, info = "gqlcrypt page key"): each file its own AES key,
//                          so the random-nonce budget (about 2^32 page writes) is counted per file
//
// SQLite only ever sees plaintext: every read is decrypted before it returns, and the reserved bytes read back as the
// zeros SQLite handed over (it never writes them itself), so the checksums SQLite computes over the bytes it hands
// the VFS (WAL frames, journal records) are recomputed over the same bytes when it reads them back. Headers (the WAL header, WAL frame headers, journal headers, record page numbers and checksums) carry no
// row data and are stored as SQLite wrote them.
#include "CStoreCrypt.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NONCE_SIZE 12
#define TAG_SIZE 16
#define CHECK_SIZE 4
#define MAX_PAGE 65536
#define WAL_HEADER 32
#define WAL_FRAME_HEADER 24
#define MAX_SLOTS 256

static const char kMagic[16] = "SQLite format 3";  // with its terminating zero: 16 bytes

// MARK: Key slots

typedef struct {
    int used;
    unsigned char key[GQLCRYPT_KEY_SIZE];
    unsigned char salt[GQLCRYPT_SALT_SIZE];
} KeySlot;

static KeySlot gSlots[MAX_SLOTS];
static pthread_mutex_t gSlotLock = PTHREAD_MUTEX_INITIALIZER;

int gqlcrypt_key_add(const unsigned char *key, const unsigned char *salt) {
    int id = 0;
    pthread_mutex_lock(&gSlotLock);
    for (int i = 1; i < MAX_SLOTS; i++) {
        if (!gSlots[i].used) {
            gSlots[i].used = 1;
            memcpy(gSlots[i].key, key, GQLCRYPT_KEY_SIZE);
            memcpy(gSlots[i].salt, salt, GQLCRYPT_SALT_SIZE);
            id = i;
            break;
        }
    }
    pthread_mutex_unlock(&gSlotLock);
    return id;
}

void gqlcrypt_key_remove(int slot) {
    if (slot <= 0 || slot >= MAX_SLOTS) return;
    pthread_mutex_lock(&gSlotLock);
    OPENSSL_cleanse(&gSlots[slot], sizeof(KeySlot));
    pthread_mutex_unlock(&gSlotLock);
}

/// Copies slot `slot`'s key and salt out; 0 when there is no such slot.
static int slot_copy(int slot, unsigned char *key, unsigned char *salt) {
    int found = 0;
    if (slot <= 0 || slot >= MAX_SLOTS) return 0;
    pthread_mutex_lock(&gSlotLock);
    if (gSlots[slot].used) {
        memcpy(key, gSlots[slot].key, GQLCRYPT_KEY_SIZE);
        memcpy(salt, gSlots[slot].salt, GQLCRYPT_SALT_SIZE);
        found = 1;
    }
    pthread_mutex_unlock(&gSlotLock);
    return found;
}

// MARK: Small helpers

int gqlcrypt_derive(const char *passphrase, size_t length, const unsigned char *salt, int iterations,
                    unsigned char *out) {
    return PKCS5_PBKDF2_HMAC(passphrase, (int)length, salt, GQLCRYPT_SALT_SIZE, iterations, EVP_sha512(),
                             GQLCRYPT_KEY_SIZE, out);
}

int gqlcrypt_random(unsigned char *out, int count) { return RAND_bytes(out, count) == 1; }

void gqlcrypt_wipe(void *pointer, size_t count) { OPENSSL_cleanse(pointer, count); }

static _Thread_local struct {
    int kind;
    unsigned int page;
    int file;
} tFailure;

int gqlcrypt_take_failure(unsigned int *page, int *file) {
    int kind = tFailure.kind;
    *page = tFailure.page;
    *file = tFailure.file;
    tFailure.kind = GQLCRYPT_OK;
    return kind;
}

static void note_failure(int kind, unsigned int page, int file) {
    tFailure.kind = kind;
    tFailure.page = page;
    tFailure.file = file;
}

static uint32_t get32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/// The page size a header's bytes 16..17 give (1 means 65536); 0 when it is not one SQLite allows.
static int header_page_size(const unsigned char *header) {
    int size = (header[16] << 8) | header[17];
    if (size == 1) size = 65536;
    if (size < 512 || size > MAX_PAGE || (size & (size - 1)) != 0) return 0;
    return size;
}

int gqlcrypt_header_kind(const unsigned char *header, int count) {
    if (count < 24) return GQLCRYPT_HEADER_EMPTY;
    if (memcmp(header, kMagic, 16) == 0) return GQLCRYPT_HEADER_PLAIN;
    if (header_page_size(header) != 0 && (header[18] == 1 || header[18] == 2) && (header[19] == 1 || header[19] == 2)
        && header[20] == GQLCRYPT_RESERVE && header[21] == 64 && header[22] == 32 && header[23] == 32)
        return GQLCRYPT_HEADER_ENCRYPTED;
    return GQLCRYPT_HEADER_UNKNOWN;
}

// MARK: The page cipher

/// How many times this process is a fork() child of the process that registered the VFS: counted by a pthread_atfork
/// handler in the child, where only the forking thread runs; the parent never changes it.
static volatile unsigned gForks;

static void count_fork_in_child(void) { gForks++; }

/// The keys of one open database, shared by its WAL and journal files (one connection uses them from one thread).
typedef struct {
    unsigned char key[GQLCRYPT_KEY_SIZE];
    unsigned char fileId[GQLCRYPT_SALT_SIZE];
    unsigned char check[CHECK_SIZE];
    int hasFileId;
    unsigned char nonce[NONCE_SIZE];  // the next page write's nonce: 4 random bytes, then a 64-bit counter
    pid_t pid;                        // the process that drew `nonce`
    unsigned forks;                   // gForks when it did
    EVP_CIPHER_CTX *encrypt;
    EVP_CIPHER_CTX *decrypt;
} PageCipher;

/// HKDF-SHA256 of `key` with the file id as salt and the label "gqlcrypt page key": the file's own AES key.
static int derive_page_key(const unsigned char *key, const unsigned char *fileId, unsigned char *out) {
    static const char info[] = "gqlcrypt page key";
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *context = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    EVP_KDF_free(kdf);
    if (!context) return 0;
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, GQLCRYPT_KEY_SIZE),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)fileId, GQLCRYPT_SALT_SIZE),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, sizeof(info) - 1),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(context, out, GQLCRYPT_KEY_SIZE, parameters) == 1;
    EVP_KDF_CTX_free(context);
    return ok;
}

/// Sets the file id: the key check and the file's page key follow from it. Returns 1 on success; on failure the
/// cipher has no file id and refuses every page.
static int cipher_set_file_id(PageCipher *cipher, const unsigned char *fileId) {
    static const char label[] = "gqlcrypt key check";
    unsigned char input[sizeof(label) - 1 + GQLCRYPT_SALT_SIZE];
    unsigned char mac[32];
    unsigned char pageKey[GQLCRYPT_KEY_SIZE];
    unsigned int macLength = 0;
    cipher->hasFileId = 0;
    memcpy(cipher->fileId, fileId, GQLCRYPT_SALT_SIZE);
    memcpy(input, label, sizeof(label) - 1);
    memcpy(input + sizeof(label) - 1, fileId, GQLCRYPT_SALT_SIZE);
    int ok = HMAC(EVP_sha256(), cipher->key, GQLCRYPT_KEY_SIZE, input, sizeof(input), mac, &macLength) != NULL
             && derive_page_key(cipher->key, fileId, pageKey)
             && EVP_EncryptInit_ex(cipher->encrypt, NULL, NULL, pageKey, NULL) == 1
             && EVP_DecryptInit_ex(cipher->decrypt, NULL, NULL, pageKey, NULL) == 1;
    memcpy(cipher->check, mac, CHECK_SIZE);
    OPENSSL_cleanse(mac, sizeof(mac));
    OPENSSL_cleanse(pageKey, sizeof(pageKey));
    cipher->hasFileId = ok;
    return ok;
}

static int cipher_init(PageCipher *cipher, const unsigned char *key) {
    memset(cipher, 0, sizeof(*cipher));
    memcpy(cipher->key, key, GQLCRYPT_KEY_SIZE);
    cipher->encrypt = EVP_CIPHER_CTX_new();
    cipher->decrypt = EVP_CIPHER_CTX_new();
    if (!cipher->encrypt || !cipher->decrypt) return 0;
    // Nonces: random once per connection (prefix and the counter's start), then counted, so no page write draws
    // from the random generator and no two writes of one connection share a nonce.
    if (RAND_bytes(cipher->nonce, NONCE_SIZE) != 1) return 0;
    cipher->pid = getpid();
    cipher->forks = gForks;
    // The AES key comes with the file id (cipher_set_file_id): each file encrypts under a key of its own.
    if (EVP_EncryptInit_ex(cipher->encrypt, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1) return 0;
    if (EVP_DecryptInit_ex(cipher->decrypt, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1) return 0;
    return 1;
}

static void cipher_free(PageCipher *cipher) {
    EVP_CIPHER_CTX_free(cipher->encrypt);
    EVP_CIPHER_CTX_free(cipher->decrypt);
    OPENSSL_cleanse(cipher, sizeof(*cipher));
}

/// The associated data of page `page` (`header`: page 1's bytes 16..23, or NULL).
static int make_aad(const PageCipher *cipher, uint32_t page, const unsigned char *header, unsigned char *aad) {
    memcpy(aad, cipher->fileId, GQLCRYPT_SALT_SIZE);
    aad[16] = (unsigned char)(page >> 24);
    aad[17] = (unsigned char)(page >> 16);
    aad[18] = (unsigned char)(page >> 8);
    aad[19] = (unsigned char)page;
    if (!header) return 20;
    memcpy(aad + 20, header, 8);
    return 28;
}

/// Copies the nonce of the next page write into `nonce` and counts past it. A forked child holds a copy of the
/// parent's prefix and counter: its writes would repeat the parent's next nonces under the same key, so it draws its
/// own with `draw` (RAND_bytes; the fork probe's child passes one that takes no lock) before its first write. (gForks
/// spares every page write a getpid() system call, about 140 ns here.) Returns 1 on success.
static int next_nonce(PageCipher *cipher, unsigned char *nonce, int (*draw)(unsigned char *, int)) {
    if (cipher->forks != gForks) {
        pid_t pid = getpid();
        if (pid != cipher->pid && draw(cipher->nonce, NONCE_SIZE) != 1) return 0;
        cipher->pid = pid;
        cipher->forks = gForks;
    }
    memcpy(nonce, cipher->nonce, NONCE_SIZE);
    // The next nonce: the counter (bytes 4..11, big-endian) plus one.
    for (int i = NONCE_SIZE - 1; i >= 4; i--)
        if (++cipher->nonce[i] != 0) break;
    return 1;
}

/// Encrypts SQLite's page image `in` (page number `page`, `size` bytes) into `out`. Returns 1 on success.
static int encrypt_page(PageCipher *cipher, uint32_t page, const unsigned char *in, int size, unsigned char *out) {
    int usable = size - GQLCRYPT_RESERVE;
    int start = page == 1 ? 24 : 0;
    unsigned char aad[28];
    unsigned char *nonce = out + usable;
    int length = 0;
    if (!cipher->hasFileId || usable <= start || (page == 1 && in[20] != GQLCRYPT_RESERVE)) return 0;
    // Reads return the reserved bytes as zeros (see decrypt_page); a page that still has something there would
    // break SQLite's WAL checksum after the round trip, so it is refused rather than stored.
    for (int i = usable; i < size; i++)
        if (in[i] != 0) return 0;
    if (page == 1) {
        memcpy(out, cipher->fileId, GQLCRYPT_SALT_SIZE);
        memcpy(out + 16, in + 16, 8);
    }
    int aadLength = make_aad(cipher, page, page == 1 ? in + 16 : NULL, aad);
    if (!next_nonce(cipher, nonce, RAND_bytes)) return 0;
    if (EVP_EncryptInit_ex(cipher->encrypt, NULL, NULL, NULL, nonce) != 1) return 0;
    if (EVP_EncryptUpdate(cipher->encrypt, NULL, &length, aad, aadLength) != 1) return 0;
    if (EVP_EncryptUpdate(cipher->encrypt, out + start, &length, in + start, usable - start) != 1) return 0;
    if (EVP_EncryptFinal_ex(cipher->encrypt, out + start + length, &length) != 1) return 0;
    if (EVP_CIPHER_CTX_ctrl(cipher->encrypt, EVP_CTRL_GCM_GET_TAG, TAG_SIZE, out + usable + NONCE_SIZE) != 1) return 0;
    memcpy(out + usable + NONCE_SIZE + TAG_SIZE, cipher->check, CHECK_SIZE);
    return 1;
}

/// Decrypts the on-disk page `data` (page number `page`, `size` bytes) in place. Returns GQLCRYPT_OK,
/// GQLCRYPT_WRONG_KEY or GQLCRYPT_TAMPERED; after a failure `data` holds no usable bytes.
static int decrypt_page(PageCipher *cipher, uint32_t page, unsigned char *data, int size) {
    int usable = size - GQLCRYPT_RESERVE;
    int start = page == 1 ? 24 : 0;
    unsigned char aad[28];
    unsigned char tag[TAG_SIZE];
    int length = 0;
    if (!cipher->hasFileId || usable <= start) return GQLCRYPT_TAMPERED;
    if (CRYPTO_memcmp(data + usable + NONCE_SIZE + TAG_SIZE, cipher->check, CHECK_SIZE) != 0)
        return GQLCRYPT_WRONG_KEY;
    int aadLength = make_aad(cipher, page, page == 1 ? data + 16 : NULL, aad);
    memcpy(tag, data + usable + NONCE_SIZE, TAG_SIZE);
    if (EVP_DecryptInit_ex(cipher->decrypt, NULL, NULL, NULL, data + usable) != 1) return GQLCRYPT_TAMPERED;
    if (EVP_DecryptUpdate(cipher->decrypt, NULL, &length, aad, aadLength) != 1) return GQLCRYPT_TAMPERED;
    if (EVP_DecryptUpdate(cipher->decrypt, data + start, &length, data + start, usable - start) != 1)
        return GQLCRYPT_TAMPERED;
    if (EVP_CIPHER_CTX_ctrl(cipher->decrypt, EVP_CTRL_GCM_SET_TAG, TAG_SIZE, tag) != 1) return GQLCRYPT_TAMPERED;
    if (EVP_DecryptFinal_ex(cipher->decrypt, data + start + length, &length) <= 0) {
        // Unauthenticated bytes never reach SQLite: wipe what the failed decryption produced.
        memset(data + start, 0, (size_t)(usable - start));
        return GQLCRYPT_TAMPERED;
    }
    if (page == 1) memcpy(data, kMagic, 16);
    // SQLite never writes the reserved bytes, so the page it handed us had whatever the last read returned there,
    // or zeros for a new page; zeros on every read keep that true. It matters: SQLite's WAL checksum covers the
    // whole page, reserved bytes included, and must come out the same over what a read returns.
    memset(data + usable, 0, GQLCRYPT_RESERVE);
    return GQLCRYPT_OK;
}

// MARK: Files

typedef struct CryptFile CryptFile;
struct CryptFile {
    sqlite3_file base;
    sqlite3_file *real;  // the wrapped VFS's file, allocated right after this struct
    int kind;            // GQLCRYPT_FILE_*
    CryptFile *main;     // the database file (itself for the main file)
    PageCipher cipher;   // main file only
    int pageSize;        // main file only: 0 until known
    sqlite3_int64 lastHeaderOffset;  // WAL/journal: where the last frame header or record page number was written
    uint32_t lastHeaderPage;
    unsigned char buffer[WAL_FRAME_HEADER + MAX_PAGE];
};

static sqlite3_vfs gVfs;
static sqlite3_vfs *gBase;
static const sqlite3_io_methods gMethods;

#define REAL(f) (((CryptFile *)(f))->real)

static int is_page_size(int size) { return size >= 512 && size <= MAX_PAGE && (size & (size - 1)) == 0; }

/// Reads the main file's first 24 bytes: the file id and the page size of an existing file.
static int main_read_header(CryptFile *file) {
    unsigned char header[24];
    sqlite3_int64 size = 0;
    int rc = file->real->pMethods->xFileSize(file->real, &size);
    if (rc != SQLITE_OK) return rc;
    if (size < 24) return SQLITE_OK;
    rc = file->real->pMethods->xRead(file->real, header, 24, 0);
    if (rc != SQLITE_OK) return rc;
    if (gqlcrypt_header_kind(header, 24) != GQLCRYPT_HEADER_ENCRYPTED) return SQLITE_NOTADB;
    int known = file->cipher.hasFileId && memcmp(file->cipher.fileId, header, GQLCRYPT_SALT_SIZE) == 0;
    if (!known && !cipher_set_file_id(&file->cipher, header)) return SQLITE_NOMEM;
    file->pageSize = header_page_size(header);
    return SQLITE_OK;
}

/// What a page whose key check is not this connection's means. When page 1's is not either, the whole file is under
/// another key (it was replaced or rekeyed since this connection opened it, or the key never opened it): a wrong key.
/// When page 1's is, only this page is foreign (copied from another file): tampering.
static int key_mismatch(CryptFile *main, uint32_t page) {
    unsigned char check[CHECK_SIZE];
    if (page == 1) return GQLCRYPT_WRONG_KEY;
    if (main->pageSize == 0
        || main->real->pMethods->xRead(main->real, check, CHECK_SIZE, main->pageSize - CHECK_SIZE) != SQLITE_OK)
        return GQLCRYPT_TAMPERED;
    return CRYPTO_memcmp(check, main->cipher.check, CHECK_SIZE) == 0 ? GQLCRYPT_TAMPERED : GQLCRYPT_WRONG_KEY;
}

/// The main file's page size: a connection opened on an empty file learns it from the header once another
/// connection has written page 1 (0 while the file has no header).
static int main_page_size(CryptFile *main) {
    if (main->pageSize == 0) (void)main_read_header(main);
    return main->pageSize;
}

static int crypt_close(sqlite3_file *f) {
    CryptFile *file = (CryptFile *)f;
    int rc = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
    if (file->kind == GQLCRYPT_FILE_MAIN) cipher_free(&file->cipher);
    OPENSSL_cleanse(file->buffer, sizeof(file->buffer));
    return rc;
}

/// Reads the page that holds [offset, offset + amount) of the main file, decrypts it and copies the part asked for.
static int main_read(CryptFile *file, void *out, int amount, sqlite3_int64 offset) {
    int size = main_page_size(file);
    if (size == 0 && offset == 0 && is_page_size(amount)) size = amount;
    if (size == 0) {
        // A new, empty file: nothing to decrypt. SQLite asks for its header and gets a short read.
        return file->real->pMethods->xRead(file->real, out, amount, offset);
    }
    sqlite3_int64 pageIndex = offset / size;
    if (offset + amount > (pageIndex + 1) * size) return SQLITE_IOERR_READ;
    uint32_t page = (uint32_t)(pageIndex + 1);
    int whole = amount == size;
    unsigned char *data = whole ? (unsigned char *)out : file->buffer;
    int rc = file->real->pMethods->xRead(file->real, data, size, pageIndex * size);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        // Past the end of the file (or a torn last page): SQLite reads missing pages as zeros.
        memset(out, 0, (size_t)amount);
        return SQLITE_IOERR_SHORT_READ;
    }
    if (rc != SQLITE_OK) return rc;
    int outcome = decrypt_page(&file->cipher, page, data, size);
    if (outcome != GQLCRYPT_OK) {
        note_failure(outcome == GQLCRYPT_WRONG_KEY ? key_mismatch(file, page) : outcome, page, GQLCRYPT_FILE_MAIN);
        return GQLCRYPT_IOERR_DATA;
    }
    if (!whole) memcpy(out, data + (offset - pageIndex * size), (size_t)amount);
    return SQLITE_OK;
}

static int main_write(CryptFile *file, const void *in, int amount, sqlite3_int64 offset) {
    if (offset == 0 && is_page_size(amount)) file->pageSize = amount;
    if (file->pageSize == 0 || amount != file->pageSize || offset % amount != 0) return SQLITE_IOERR_WRITE;
    uint32_t page = (uint32_t)(offset / amount + 1);
    if (!encrypt_page(&file->cipher, page, in, amount, file->buffer)) return SQLITE_IOERR_WRITE;
    return file->real->pMethods->xWrite(file->real, file->buffer, amount, offset);
}

/// The page number a WAL frame header or journal record at `offset` names: the last one written there, else read.
static int header_page(CryptFile *file, sqlite3_int64 offset, int headerSize, uint32_t *page) {
    unsigned char header[WAL_FRAME_HEADER];
    if (offset == file->lastHeaderOffset) {
        *page = file->lastHeaderPage;
        return SQLITE_OK;
    }
    int rc = file->real->pMethods->xRead(file->real, header, headerSize, offset);
    if (rc != SQLITE_OK) return rc;
    *page = get32(header);
    return SQLITE_OK;
}

static int wal_read(CryptFile *file, void *out, int amount, sqlite3_int64 offset) {
    if (offset < WAL_HEADER) return file->real->pMethods->xRead(file->real, out, amount, offset);
    int size = main_page_size(file->main);
    if (size == 0) {
        // Frames beside a database that has no page 1 (SQLite deletes the WAL of an empty file, so someone wrote
        // them): their pages cannot be decrypted, and their bytes must not reach SQLite as they are.
        note_failure(GQLCRYPT_TAMPERED, 0, GQLCRYPT_FILE_WAL);
        return GQLCRYPT_IOERR_DATA;
    }
    sqlite3_int64 frameSize = WAL_FRAME_HEADER + size;
    sqlite3_int64 within = (offset - WAL_HEADER) % frameSize;
    // Any part of one frame header (SQLite reads the previous frame's checksum, bytes 16..23, when it rewrites the
    // checksums of a transaction that changed a page it had already spilled to the WAL).
    if (within + amount <= WAL_FRAME_HEADER) return file->real->pMethods->xRead(file->real, out, amount, offset);
    if (within == WAL_FRAME_HEADER && amount == size) {
        // One page of a frame (a read of the database, a checkpoint): its page number is in the frame header.
        unsigned char *frame = file->buffer;
        int rc = file->real->pMethods->xRead(file->real, frame, (int)frameSize, offset - WAL_FRAME_HEADER);
        if (rc != SQLITE_OK) return rc;
        uint32_t page = get32(frame);
        int outcome = decrypt_page(&file->main->cipher, page, frame + WAL_FRAME_HEADER, size);
        if (outcome != GQLCRYPT_OK) {
            note_failure(outcome == GQLCRYPT_WRONG_KEY ? key_mismatch(file->main, page) : outcome, page,
                         GQLCRYPT_FILE_WAL);
            return GQLCRYPT_IOERR_DATA;
        }
        memcpy(out, frame + WAL_FRAME_HEADER, (size_t)size);
        return SQLITE_OK;
    }
    if (within == 0 && amount == frameSize) {
        // A whole frame (recovery, rewriting checksums). A frame that does not decrypt — torn by a crash, or altered —
        // comes back with page number 0 and a zeroed page, which SQLite never takes for a frame: the log ends
        // there, as it does for a torn frame of a plain file (the Encryption article has what that means for an
        // altered one).
        int rc = file->real->pMethods->xRead(file->real, out, amount, offset);
        if (rc != SQLITE_OK) return rc;
        unsigned char *frame = out;
        uint32_t page = get32(frame);
        int outcome = decrypt_page(&file->main->cipher, page, frame + WAL_FRAME_HEADER, size);
        if (outcome != GQLCRYPT_OK) {
            note_failure(GQLCRYPT_TAMPERED, page, GQLCRYPT_FILE_WAL);
            memset(frame, 0, 4);
            memset(frame + WAL_FRAME_HEADER, 0, (size_t)size);
        }
        return SQLITE_OK;
    }
    return SQLITE_IOERR_READ;
}

static int wal_write(CryptFile *file, const void *in, int amount, sqlite3_int64 offset) {
    if (offset < WAL_HEADER) return file->real->pMethods->xWrite(file->real, in, amount, offset);
    int size = main_page_size(file->main);
    if (size == 0) return SQLITE_IOERR_WRITE;
    sqlite3_int64 frameSize = WAL_FRAME_HEADER + size;
    sqlite3_int64 within = (offset - WAL_HEADER) % frameSize;
    if (within + amount <= WAL_FRAME_HEADER) {
        if (within == 0 && amount >= 4) {
            file->lastHeaderOffset = offset;
            file->lastHeaderPage = get32(in);
        }
        return file->real->pMethods->xWrite(file->real, in, amount, offset);
    }
    if (within == WAL_FRAME_HEADER && amount == size) {
        uint32_t page = 0;
        int rc = header_page(file, offset - WAL_FRAME_HEADER, WAL_FRAME_HEADER, &page);
        if (rc != SQLITE_OK) return rc;
        if (!encrypt_page(&file->main->cipher, page, in, size, file->buffer)) return SQLITE_IOERR_WRITE;
        return file->real->pMethods->xWrite(file->real, file->buffer, size, offset);
    }
    if (within == 0 && amount == frameSize) {
        memcpy(file->buffer, in, WAL_FRAME_HEADER);
        if (!encrypt_page(&file->main->cipher, get32(in), (const unsigned char *)in + WAL_FRAME_HEADER, size,
                          file->buffer + WAL_FRAME_HEADER))
            return SQLITE_IOERR_WRITE;
        return file->real->pMethods->xWrite(file->real, file->buffer, amount, offset);
    }
    return SQLITE_IOERR_WRITE;
}

/// Whether a journal access is a record's page image: page-sized at 4 bytes past an 8-byte boundary (records are
/// page number (4) + page + checksum (4) after a header of whole sectors; headers start on sector boundaries).
static int journal_is_page(CryptFile *file, int amount, sqlite3_int64 offset) {
    int size = main_page_size(file->main);
    return size != 0 && amount == size && offset % 8 == 4;
}

static int journal_read(CryptFile *file, void *out, int amount, sqlite3_int64 offset) {
    int rc = file->real->pMethods->xRead(file->real, out, amount, offset);
    // Any page-sized read where a record's page lies: one of a size other than the database's (a journal header
    // may name any page size) is never one this VFS wrote.
    if (rc != SQLITE_OK || !is_page_size(amount) || offset % 8 != 4) return rc;
    uint32_t page = 0;
    int outcome = GQLCRYPT_TAMPERED;
    if (journal_is_page(file, amount, offset)) {
        rc = header_page(file, offset - 4, 4, &page);
        if (rc != SQLITE_OK) return rc;
        outcome = decrypt_page(&file->main->cipher, page, out, amount);
    }
    if (outcome != GQLCRYPT_OK) {
        // A record that does not decrypt — torn by a crash, or planted by someone without the key — must not reach
        // SQLite: played back, its bytes would be written into the database encrypted under the real key. A short
        // read ends the playback there, as a torn record does in a plain journal.
        memset(out, 0, (size_t)amount);
        note_failure(GQLCRYPT_TAMPERED, page, GQLCRYPT_FILE_JOURNAL);
        return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_OK;
}

static int journal_write(CryptFile *file, const void *in, int amount, sqlite3_int64 offset) {
    if (amount == 4 && offset % 8 == 0) {
        file->lastHeaderOffset = offset;
        file->lastHeaderPage = get32(in);
    }
    if (!journal_is_page(file, amount, offset)) return file->real->pMethods->xWrite(file->real, in, amount, offset);
    uint32_t page = 0;
    int rc = header_page(file, offset - 4, 4, &page);
    if (rc != SQLITE_OK) return rc;
    if (!encrypt_page(&file->main->cipher, page, in, amount, file->buffer)) return SQLITE_IOERR_WRITE;
    return file->real->pMethods->xWrite(file->real, file->buffer, amount, offset);
}

static int crypt_read(sqlite3_file *f, void *out, int amount, sqlite3_int64 offset) {
    CryptFile *file = (CryptFile *)f;
    switch (file->kind) {
    case GQLCRYPT_FILE_MAIN: return main_read(file, out, amount, offset);
    case GQLCRYPT_FILE_WAL: return wal_read(file, out, amount, offset);
    default: return journal_read(file, out, amount, offset);
    }
}

static int crypt_write(sqlite3_file *f, const void *in, int amount, sqlite3_int64 offset) {
    CryptFile *file = (CryptFile *)f;
    switch (file->kind) {
    case GQLCRYPT_FILE_MAIN: return main_write(file, in, amount, offset);
    case GQLCRYPT_FILE_WAL: return wal_write(file, in, amount, offset);
    default: return journal_write(file, in, amount, offset);
    }
}

static int crypt_truncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int crypt_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int crypt_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int crypt_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int crypt_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int crypt_check_reserved(sqlite3_file *f, int *out) {
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int crypt_file_control(sqlite3_file *f, int op, void *arg) {
    if (op == SQLITE_FCNTL_VFSNAME) {
        *(char **)arg = sqlite3_mprintf("gqlcrypt");
        return SQLITE_OK;
    }
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int crypt_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int crypt_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int crypt_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, out);
}
static int crypt_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void crypt_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int crypt_shm_unmap(sqlite3_file *f, int deleteFlag) {
    return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag);
}

// Version 2: no xFetch, so SQLite never memory-maps the file and every page goes through crypt_read.
static const sqlite3_io_methods gMethods = {
    2, crypt_close, crypt_read, crypt_write, crypt_truncate, crypt_sync, crypt_file_size, crypt_lock, crypt_unlock,
    crypt_check_reserved, crypt_file_control, crypt_sector_size, crypt_device, crypt_shm_map, crypt_shm_lock,
    crypt_shm_barrier, crypt_shm_unmap, NULL, NULL,
};

static int crypt_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
    CryptFile *file = (CryptFile *)f;
    (void)vfs;
    memset(file, 0, sizeof(CryptFile));
    file->real = (sqlite3_file *)&file[1];
    file->lastHeaderOffset = -1;
    if (flags & SQLITE_OPEN_MAIN_DB) {
        unsigned char key[GQLCRYPT_KEY_SIZE], salt[GQLCRYPT_SALT_SIZE];
        int slot = (int)sqlite3_uri_int64(name, "gqlkey", 0);
        if (!name || !slot_copy(slot, key, salt)) return SQLITE_CANTOPEN;
        int ok = cipher_init(&file->cipher, key);
        OPENSSL_cleanse(key, sizeof(key));
        if (!ok) {
            cipher_free(&file->cipher);
            return SQLITE_NOMEM;
        }
        file->kind = GQLCRYPT_FILE_MAIN;
        file->main = file;
        int rc = gBase->xOpen(gBase, name, file->real, flags, outFlags);
        if (rc == SQLITE_OK) rc = main_read_header(file);
        if (rc == SQLITE_OK && !file->cipher.hasFileId && !cipher_set_file_id(&file->cipher, salt))
            rc = SQLITE_NOMEM;
        if (rc != SQLITE_OK) {
            if (file->real->pMethods) file->real->pMethods->xClose(file->real);
            cipher_free(&file->cipher);
            return rc;
        }
        file->base.pMethods = &gMethods;
        return SQLITE_OK;
    }
    if (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) {
        sqlite3_file *main = sqlite3_database_file_object(name);
        if (!main || main->pMethods != &gMethods) return SQLITE_CANTOPEN;
        file->main = (CryptFile *)main;
        file->kind = (flags & SQLITE_OPEN_WAL) ? GQLCRYPT_FILE_WAL : GQLCRYPT_FILE_JOURNAL;
        int rc = gBase->xOpen(gBase, name, file->real, flags, outFlags);
        if (rc != SQLITE_OK) return rc;
        file->base.pMethods = &gMethods;
        return SQLITE_OK;
    }
    // Temporary databases, statement journals and super-journals would hold plaintext on disk. Connections on this
    // VFS set temp_store=MEMORY, which keeps them in memory; anything that still asks for one is refused.
    return SQLITE_CANTOPEN;
}

static int crypt_delete(sqlite3_vfs *vfs, const char *name, int sync) {
    (void)vfs;
    return gBase->xDelete(gBase, name, sync);
}
static int crypt_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return gBase->xAccess(gBase, name, flags, out);
}
static int crypt_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return gBase->xFullPathname(gBase, name, size, out);
}
static void *crypt_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return gBase->xDlOpen(gBase, name);
}
static void crypt_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    gBase->xDlError(gBase, size, out);
}
static void (*crypt_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return gBase->xDlSym(gBase, handle, symbol);
}
static void crypt_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    gBase->xDlClose(gBase, handle);
}
static int crypt_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return gBase->xRandomness(gBase, size, out);
}
static int crypt_sleep(sqlite3_vfs *vfs, int micros) {
    (void)vfs;
    return gBase->xSleep(gBase, micros);
}
static int crypt_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return gBase->xCurrentTime(gBase, out);
}
static int crypt_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return gBase->xGetLastError(gBase, size, out);
}
static int crypt_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return gBase->xCurrentTimeInt64(gBase, out);
}

static pthread_mutex_t gConfigLock = PTHREAD_MUTEX_INITIALIZER;

int gqlstore_sqlite_config_memory_statistics(int on) {
    /* Serializes only the callers of this function; SQLite itself requires that nothing else in the process uses
       SQLite while sqlite3_config runs, which is why this is the app's call at launch and never GQLStore's own. */
    pthread_mutex_lock(&gConfigLock);
    int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on ? 1 : 0);
    pthread_mutex_unlock(&gConfigLock);
    return rc;
}

static int gRegistered = SQLITE_ERROR;
static pthread_once_t gOnce = PTHREAD_ONCE_INIT;

static void register_once(void) {
    pthread_atfork(NULL, NULL, count_fork_in_child);
    gBase = sqlite3_vfs_find(NULL);
    if (!gBase || gBase->iVersion < 2 || !gBase->xCurrentTimeInt64) return;
    gVfs.iVersion = 2;
    gVfs.szOsFile = (int)sizeof(CryptFile) + gBase->szOsFile;
    gVfs.mxPathname = gBase->mxPathname;
    gVfs.zName = "gqlcrypt";
    gVfs.xOpen = crypt_open;
    gVfs.xDelete = crypt_delete;
    gVfs.xAccess = crypt_access;
    gVfs.xFullPathname = crypt_full_pathname;
    gVfs.xDlOpen = crypt_dl_open;
    gVfs.xDlError = crypt_dl_error;
    gVfs.xDlSym = crypt_dl_sym;
    gVfs.xDlClose = crypt_dl_close;
    gVfs.xRandomness = crypt_randomness;
    gVfs.xSleep = crypt_sleep;
    gVfs.xCurrentTime = crypt_current_time;
    gVfs.xGetLastError = crypt_last_error;
    gVfs.xCurrentTimeInt64 = crypt_current_time64;
    gRegistered = sqlite3_vfs_register(&gVfs, 0);
}

int gqlcrypt_register(void) {
    pthread_once(&gOnce, register_once);
    return gRegistered;
}

const char *gqlcrypt_vfs_name(void) { return "gqlcrypt"; }

const char *gqlcrypt_base_vfs_name(void) {
    gqlcrypt_register();
    return gBase ? gBase->zName : "unix";
}

/// A file opened read-only through the wrapped VFS (see gqlcrypt_read_header).
typedef struct {
    sqlite3_file *file;
    char *full;
    sqlite3_filename name;
} BaseFile;

static void base_close(BaseFile *base) {
    if (base->file && base->file->pMethods) base->file->pMethods->xClose(base->file);
    sqlite3_free(base->file);
    sqlite3_free_filename(base->name);
    sqlite3_free(base->full);
    memset(base, 0, sizeof(*base));
}

/// Opens `path` read-only through the wrapped (default) VFS. SQLite's unix VFS keeps one record per inode for all of
/// its file objects in the process and, while any of them holds a lock, defers closing a descriptor: so reading the
/// file here leaves the locks of the process's connections in place, where opening and closing a descriptor of our
/// own would drop them all (POSIX fcntl locks belong to the process and the inode, and any close releases them).
static int base_open(const char *path, BaseFile *base) {
    memset(base, 0, sizeof(*base));
    gqlcrypt_register();
    if (!gBase || !path) return 0;
    int flags = 0;
    base->full = sqlite3_malloc(gBase->mxPathname + 1);
    base->file = sqlite3_malloc(gBase->szOsFile);
    if (!base->full || !base->file) {
        base_close(base);
        return 0;
    }
    memset(base->file, 0, (size_t)gBase->szOsFile);
    int rc = gBase->xFullPathname(gBase, path, gBase->mxPathname + 1, base->full);
    // A database name as SQLite hands it to a VFS (journal and WAL names after it); no URI parameters.
    if (rc == SQLITE_OK || rc == SQLITE_OK_SYMLINK) base->name = sqlite3_create_filename(base->full, "", "", 0, NULL);
    if (!base->name
        || gBase->xOpen(gBase, base->name, base->file, SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB, &flags)
               != SQLITE_OK) {
        base_close(base);
        return 0;
    }
    return 1;
}

int gqlcrypt_read_header(const char *path, unsigned char *out, int count) {
    BaseFile base;
    sqlite3_int64 size = 0;
    int got = 0;
    if (!base_open(path, &base)) return 0;
    if (base.file->pMethods->xFileSize(base.file, &size) == SQLITE_OK && size > 0) {
        int amount = size < count ? (int)size : count;
        if (base.file->pMethods->xRead(base.file, out, amount, 0) == SQLITE_OK) got = amount;
    }
    base_close(&base);
    return got;
}

/// Whether page 1 (`page`, `size` bytes; overwritten) decrypts as the development builds before the per-file page
/// key wrote it: the same layout, nonce, associated data and key check, with the key itself as the AES key.
static int decrypts_in_earlier_format(const unsigned char *key, const unsigned char *fileId, unsigned char *page,
                                      int size) {
    PageCipher cipher;
    int ok = cipher_init(&cipher, key) && cipher_set_file_id(&cipher, fileId)
             && EVP_DecryptInit_ex(cipher.decrypt, NULL, NULL, key, NULL) == 1
             && decrypt_page(&cipher, 1, page, size) == GQLCRYPT_OK;
    cipher_free(&cipher);
    return ok;
}

int gqlcrypt_check_file(const char *path, int slot) {
    unsigned char header[24];
    unsigned char key[GQLCRYPT_KEY_SIZE], salt[GQLCRYPT_SALT_SIZE];
    BaseFile base;
    if (!slot_copy(slot, key, salt)) return GQLCRYPT_IO;
    if (!base_open(path, &base)) {
        OPENSSL_cleanse(key, sizeof(key));
        return GQLCRYPT_IO;
    }
    int result = GQLCRYPT_IO;
    sqlite3_file *file = base.file;
    if (file->pMethods->xRead(file, header, 24, 0) == SQLITE_OK
        && gqlcrypt_header_kind(header, 24) == GQLCRYPT_HEADER_ENCRYPTED) {
        int size = header_page_size(header);
        unsigned char *page = malloc((size_t)size * 2);
        if (page && file->pMethods->xRead(file, page, size, 0) == SQLITE_OK) {
            unsigned char *copy = page + size;
            memcpy(copy, page, (size_t)size);
            PageCipher cipher;
            if (cipher_init(&cipher, key) && cipher_set_file_id(&cipher, header))
                result = decrypt_page(&cipher, 1, page, size);
            cipher_free(&cipher);
            // Only on the way to refusing: an authentication failure is damage unless it is the earlier format.
            if (result == GQLCRYPT_TAMPERED && decrypts_in_earlier_format(key, header, copy, size))
                result = GQLCRYPT_EARLIER_FORMAT;
        }
        if (page) {
            OPENSSL_cleanse(page, (size_t)size * 2);
            free(page);
        }
    }
    OPENSSL_cleanse(key, sizeof(key));
    base_close(&base);
    return result;
}

/// `count` bytes from /dev/urandom: only open, read and close, which a child forked from a multi-threaded process
/// may call (OpenSSL's generator may take a lock another thread held at fork()). Returns 1 on success.
static int draw_without_locks(unsigned char *out, int count) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    int got = 0;
    if (fd < 0) return 0;
    while (got < count) {
        ssize_t n = read(fd, out + got, (size_t)(count - got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (int)n;
    }
    close(fd);
    return got == count;
}

int gqlcrypt_fork_nonce_probe(unsigned char *parent, unsigned char *child) {
    enum { SIZE = 512 };
    static unsigned char in[SIZE], first[SIZE], out[SIZE];
    unsigned char key[GQLCRYPT_KEY_SIZE] = {1}, fileId[GQLCRYPT_SALT_SIZE] = {2};
    unsigned char nonce[NONCE_SIZE];
    int fds[2], status = 0, result = 0;
    PageCipher cipher;
    gqlcrypt_register();  // the fork handler
    if (!cipher_init(&cipher, key) || !cipher_set_file_id(&cipher, fileId) || !encrypt_page(&cipher, 2, in, SIZE, first)
        || pipe(fds) != 0) {
        cipher_free(&cipher);
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        // Only async-signal-safe calls here (the test process has other threads): the child's next nonce, as
        // encrypt_page takes it, with the fork detection and the redraw, but no OpenSSL call.
        close(fds[0]);
        int ok = next_nonce(&cipher, nonce, draw_without_locks) && write(fds[1], nonce, NONCE_SIZE) == NONCE_SIZE;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    if (pid > 0 && encrypt_page(&cipher, 2, in, SIZE, out)) {
        memcpy(parent, out + SIZE - GQLCRYPT_RESERVE, NONCE_SIZE);
        struct pollfd wait = {fds[0], POLLIN, 0};
        ssize_t got = 0;
        if (poll(&wait, 1, 10000) == 1) got = read(fds[0], nonce, NONCE_SIZE);
        if (got == NONCE_SIZE) {
            memcpy(child, nonce, NONCE_SIZE);
            result = 1;
        }
    }
    if (pid > 0) {
        if (!result) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 0;
    }
    close(fds[0]);
    cipher_free(&cipher);
    return result;
}
