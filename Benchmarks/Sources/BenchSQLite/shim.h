#ifndef GQL_BENCH_SQLITE_SHIM_H
#define GQL_BENCH_SQLITE_SHIM_H
// Same system SQLite as the root package's CSQLite and GRDB's GRDBSQLite (pkg-config sqlite3).
// A separate module name: SwiftPM does not allow two targets named CSQLite in one package graph.
#include <sqlite3.h>
#endif
