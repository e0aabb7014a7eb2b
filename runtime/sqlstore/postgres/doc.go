// Package postgres opens ordergen's production store: a runtime/sqlstore
// Store on a PostgreSQL server, through pgx's database/sql driver
// (github.com/jackc/pgx/v5/stdlib), so that handlers receive a *sql.Tx
// whichever database is configured.
package postgres
