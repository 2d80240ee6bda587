#ifndef GQL_CSQLITE_SHIM_H
#define GQL_CSQLITE_SHIM_H
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>
#endif
