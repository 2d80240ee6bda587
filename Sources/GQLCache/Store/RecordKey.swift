import GQLCore

/// A record's key (spelled as ``CacheKey`` says), compared and hashed by its UTF-8 bytes (GQLCore's `GQLExactText`).
///
/// SQLite compares the table's keys by their bytes (`BINARY`), and servers tell ids apart by theirs: `Note:é`
/// written as U+00E9 and as `e` + U+0301 (COMBINING ACUTE ACCENT) are two objects and two rows. Swift's `String`
/// compares and hashes by canonical equivalence, which makes them one: as `String` keys, the memory layer, the
/// normalizer and the watchers merged the two objects, and what a read returned depended on whether it came from
/// memory or from SQLite. Every table and set of record keys in the cache holds this type instead.
typealias RecordKey = GQLExactText

/// Any other text the cache must tell apart by its bytes (compiled operations by their text, shared requests):
/// compared and hashed as a ``RecordKey`` is.
typealias ExactText = GQLExactText
