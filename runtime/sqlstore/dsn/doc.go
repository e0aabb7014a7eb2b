// Package dsn opens a runtime/sqlstore Store from one string, for command
// lines and configuration files: a PostgreSQL URL or a SQLite file.
//
//	postgres://user:password@host:5432/db?sslmode=disable   PostgreSQL
//	postgresql://...                                        PostgreSQL
//	sqlite:/var/lib/app/ordergen.db                         SQLite
//	/var/lib/app/ordergen.db                                SQLite
//
// It links both drivers; a service that uses one opens it with
// runtime/sqlstore/sqlite or runtime/sqlstore/postgres instead.
package dsn
