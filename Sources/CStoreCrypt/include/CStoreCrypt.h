#ifndef GQL_CSTORECRYPT_H
#define GQL_CSTORECRYPT_H
// GQLStore's encrypting SQLite VFS ("gqlcrypt"): AES-256-GCM per page on the system SQLite and libcrypto.
// The format and the reasons behind it: Sources/GQLStore/Documentation.docc/Articles/Encryption.md.
#include <stddef.h>

#define GQLCRYPT_KEY_SIZE 32
#define GQLCRYPT_SALT_SIZE 16
/// Bytes at the end of every page: nonce (12), GCM tag (16), key check (4).
#define GQLCRYPT_RESERVE 32
/// SQLite's SQLITE_IOERR_DATA (SQLITE_IOERR | 32 << 8): a page failed authentication.
#define GQLCRYPT_IOERR_DATA 6410

/// What the first bytes of a file say it is.
enum {
    GQLCRYPT_HEADER_EMPTY = 0,      // missing, empty or shorter than a header: a new database
    GQLCRYPT_HEADER_PLAIN = 1,      // a plain SQLite database
    GQLCRYPT_HEADER_ENCRYPTED = 2,  // this VFS's format
    GQLCRYPT_HEADER_UNKNOWN = 3     // neither
};

/// The outcome of checking a page (or of the last failed read on this thread).
enum {
    GQLCRYPT_OK = 0,
    GQLCRYPT_WRONG_KEY = 1,   // the page's key check does not match the key
    GQLCRYPT_TAMPERED = 2,    // the key check matches but the tag does not: the page was altered
    GQLCRYPT_IO = 3,          // the page could not be read
    GQLCRYPT_EARLIER_FORMAT = 4  // page 1 is in the format of the development builds before the per-file page key
};

/// Which file a failure was in.
enum { GQLCRYPT_FILE_MAIN = 0, GQLCRYPT_FILE_WAL = 1, GQLCRYPT_FILE_JOURNAL = 2 };

/// SQLite's memory statistics on (1) or off (0) for the whole process (SQLITE_CONFIG_MEMSTATUS), for
/// `GQLDatabase.configureSQLiteProcess(memoryStatistics:)`: the app's call at launch, before any use of SQLite in the
/// process, never made by GQLStore on its own (sqlite3_config is not safe against SQLite calls on other threads).
/// Returns SQLITE_OK, or SQLITE_MISUSE when SQLite was already initialized (nothing changes).
int gqlstore_sqlite_config_memory_statistics(int on);

/// Registers the VFS beside the default one (never as the default); safe to call many times. Returns an SQLite code.
int gqlcrypt_register(void);
/// The name to open databases with: "gqlcrypt".
const char *gqlcrypt_vfs_name(void);
/// The name of the VFS it wraps (the default at registration), for plain files.
const char *gqlcrypt_base_vfs_name(void);

/// Copies a 32-byte key and the 16-byte salt new files take as their file id into a slot; returns its id (> 0), or
/// 0 when every slot is taken. Connections name the slot with the URI parameter `gqlkey=<id>`.
int gqlcrypt_key_add(const unsigned char *key, const unsigned char *salt);
/// Wipes and frees a slot. Files already open keep their own copy until they close.
void gqlcrypt_key_remove(int slot);

/// PBKDF2-HMAC-SHA512 of `passphrase` with `salt` into 32 bytes. Returns 1 on success.
int gqlcrypt_derive(const char *passphrase, size_t length, const unsigned char *salt, int iterations,
                    unsigned char *out);
/// Cryptographically random bytes. Returns 1 on success.
int gqlcrypt_random(unsigned char *out, int count);
/// Overwrites `count` bytes at `pointer` in a way the compiler keeps.
void gqlcrypt_wipe(void *pointer, size_t count);

/// Classifies the first `count` bytes of a file (GQLCRYPT_HEADER_*).
int gqlcrypt_header_kind(const unsigned char *header, int count);
/// Reads up to `count` bytes from the start of the file at `path` into `out`; returns how many (0 when the file is
/// missing or unreadable). Reads through the VFS this one wraps, so it never drops a lock a connection of this
/// process holds on the file (closing a descriptor of its own would: POSIX drops all of them).
int gqlcrypt_read_header(const char *path, unsigned char *out, int count);
/// Reads page 1 of the encrypted file at `path` (as gqlcrypt_read_header does) and checks it against the key in slot
/// `slot` (GQLCRYPT_OK, _WRONG_KEY, _TAMPERED, _IO, _EARLIER_FORMAT). Nothing is written.
int gqlcrypt_check_file(const char *path, int slot);

/// The last page failure on this thread (GQLCRYPT_OK when none), its page number and file; clears it.
int gqlcrypt_take_failure(unsigned int *page, int *file);

/// For tests: encrypts a page with one page cipher, forks, and encrypts one more page with it in the parent and in
/// the child; the two nonces come back in `parent` and `child` (12 bytes each). Returns 1 when both were written
/// (the child is waited for, and killed after 10 s). Nothing else runs in the child.
int gqlcrypt_fork_nonce_probe(unsigned char *parent, unsigned char *child);

#endif
