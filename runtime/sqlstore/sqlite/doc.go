// Package sqlite opens ordergen's embedded default store: a runtime/sqlstore
// Store in one SQLite file, through modernc.org/sqlite (pure Go, no cgo).
//
// The file is opened in WAL mode with synchronous=NORMAL (a committed
// transaction survives a crash of the process; a power loss may lose the
// last ones), a busy timeout for other processes sharing the file, and
// every transaction begun IMMEDIATE, so that a transaction that reads a
// version and then writes can never fail to upgrade its lock. The handle
// uses one connection: SQLite has one writer at a time anyway, and Go queues
// the writers of the process instead of SQLite's busy loop. A handler must
// therefore write only through the transaction it is given, never through
// the store's DB, or it waits for itself. For the same reason a transactional
// dispatcher on SQLite gains nothing from many keys in progress at once: set
// its MaxActive low (1 to 4); more workers only queue for the connection.
// What makes it faster is group commit (runtime/groupcommit over the
// store's BeginGroup): the work of many keys in one transaction.
package sqlite
