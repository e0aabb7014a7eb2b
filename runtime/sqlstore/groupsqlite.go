package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ordergen/ordergen/runtime/durable"
)

// On SQLite a group's keys go to the database as one JSON array parameter,
// read by json_each: one short statement whatever the group's size, where
// a parameter per key would make SQLite parse a statement as long as the
// group every time, and a statement per key costs the driver's overhead
// each time. CROSS JOIN and MATERIALIZED fix the plans: the array is the
// outer loop, and each element finds its row by the primary key or rowid,
// rather than SQLite scanning the namespace's rows for each element.
const (
	// sqliteReadJSON reads the rows of the keys in the array $2.
	sqliteReadJSON = `SELECT k.key, k.version, k.state, k.rowid FROM json_each($2) AS j
		CROSS JOIN ordergen_keys AS k ON k.namespace = $1 AND k.key = j.value`
	// sqliteUpdateJSON updates the rows of the elements of $2, [rowid,
	// key, version, state, old version, old state], that still hold the
	// old version and state. The rowids BeginGroup read find the rows
	// without a search of the primary key's index; the key is checked
	// too, in case a handler deleted the row and another took its rowid.
	sqliteUpdateJSON = `WITH w AS MATERIALIZED (
			SELECT json_extract(value, '$[0]') AS rid, json_extract(value, '$[1]') AS key,
				json_extract(value, '$[2]') AS version, json_extract(value, '$[3]') AS state,
				json_extract(value, '$[4]') AS old_version, json_extract(value, '$[5]') AS old_state
			FROM json_each($2))
		UPDATE ordergen_keys SET version = w.version, state = w.state FROM w
		WHERE ordergen_keys.rowid = w.rid AND ordergen_keys.namespace = $1 AND ordergen_keys.key = w.key
			AND ordergen_keys.version = w.old_version AND ordergen_keys.state = w.old_state`
	// sqliteInsertJSON inserts the elements of $2, [key, version, state],
	// or updates a row another writer inserted with version 0 and state "".
	// ("WHERE true" tells the parser that ON CONFLICT is not a join's.)
	sqliteInsertJSON = `INSERT INTO ordergen_keys (namespace, key, version, state)
		SELECT $1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each($2) WHERE true
		ON CONFLICT (namespace, key) DO UPDATE SET version = excluded.version, state = excluded.state
		WHERE ordergen_keys.version = 0 AND ordergen_keys.state = ''`
)

// jsonSafe reports whether every s goes through a JSON text and SQLite's
// JSON functions unchanged: valid UTF-8 (encoding/json would replace the
// rest) without NUL (which would end the text SQLite hands back).
func jsonSafe(s ...string) bool {
	for _, v := range s {
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return false
		}
	}
	return true
}

// appendJSONString appends s as a JSON string; s is jsonSafe.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// jsonKeys returns keys as a JSON array of strings.
func jsonKeys(keys []string) string {
	b := make([]byte, 0, 16*len(keys))
	b = append(b, '[')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
	}
	return string(append(b, ']'))
}

// storeSQLite writes changed in two statements, the keys that had rows and
// those that had none, and checks that every key was written.
func (g *groupTx) storeSQLite(ctx context.Context, changed []durable.KeyWrite) error {
	upd := []byte{'['}
	ins := []byte{'['}
	for _, w := range changed {
		r := g.read[w.Key]
		if !jsonSafe(w.Key, w.State, r.State) {
			return g.storeSQLiteEach(ctx, changed)
		}
		if r.exists {
			if len(upd) > 1 {
				upd = append(upd, ',')
			}
			upd = append(upd, '[')
			upd = strconv.AppendInt(upd, r.rowid, 10)
			upd = append(upd, ',')
			upd = appendJSONString(upd, w.Key)
			upd = append(upd, ',')
			upd = strconv.AppendInt(upd, toSQL(w.Version), 10)
			upd = append(upd, ',')
			upd = appendJSONString(upd, w.State)
			upd = append(upd, ',')
			upd = strconv.AppendInt(upd, toSQL(r.Version), 10)
			upd = append(upd, ',')
			upd = appendJSONString(upd, r.State)
			upd = append(upd, ']')
		} else {
			if len(ins) > 1 {
				ins = append(ins, ',')
			}
			ins = append(ins, '[')
			ins = appendJSONString(ins, w.Key)
			ins = append(ins, ',')
			ins = strconv.AppendInt(ins, toSQL(w.Version), 10)
			ins = append(ins, ',')
			ins = appendJSONString(ins, w.State)
			ins = append(ins, ']')
		}
	}
	var n int64
	for _, part := range []struct {
		stmt string
		rows []byte
	}{{sqliteUpdateJSON, upd}, {sqliteInsertJSON, ins}} {
		if len(part.rows) == 1 {
			continue
		}
		res, err := g.tx.ExecContext(ctx, part.stmt, g.ns, string(append(part.rows, ']')))
		if err != nil {
			return err
		}
		m, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("rows affected: %w", err)
		}
		n += m
	}
	if n != int64(len(changed)) {
		return g.moved(ctx, changed, n)
	}
	return nil
}

// storeSQLiteEach writes changed with two statements prepared in the
// transaction, run once per key, for the keys or states that cannot go
// through JSON.
func (g *groupTx) storeSQLiteEach(ctx context.Context, changed []durable.KeyWrite) error {
	update, err := g.tx.PrepareContext(ctx, `UPDATE ordergen_keys SET version = $3, state = $4
		WHERE namespace = $1 AND key = $2 AND version = $5 AND state = $6`)
	if err != nil {
		return err
	}
	defer update.Close()
	insert, err := g.tx.PrepareContext(ctx, `INSERT INTO ordergen_keys (namespace, key, version, state) VALUES ($1, $2, $3, $4)
		ON CONFLICT (namespace, key) DO UPDATE SET version = excluded.version, state = excluded.state
		WHERE ordergen_keys.version = 0 AND ordergen_keys.state = ''`)
	if err != nil {
		return err
	}
	defer insert.Close()
	var moved []string
	for _, w := range changed {
		r := g.read[w.Key]
		var res sql.Result
		if r.exists {
			res, err = update.ExecContext(ctx, g.ns, w.Key, toSQL(w.Version), w.State, toSQL(r.Version), r.State)
		} else {
			res, err = insert.ExecContext(ctx, g.ns, w.Key, toSQL(w.Version), w.State)
		}
		if err != nil {
			return fmt.Errorf("key %q: %w", w.Key, err)
		}
		ok, err := oneRow(res)
		if err != nil {
			return err
		}
		if !ok {
			moved = append(moved, w.Key)
		}
	}
	if len(moved) > 0 {
		return conflict(moved, len(changed))
	}
	return nil
}
