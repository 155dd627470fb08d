// Package postgres registers the PostgreSQL backend of package store for
// URLs "postgres://..." and "postgresql://...". Import it for its side
// effect:
//
//	import _ "github.com/llmhistory/llmhistory/store/postgres"
//
//	s, err := store.Open(ctx, "postgres://llm@db.internal/history")
//
// The driver is github.com/jackc/pgx/v5, through database/sql. The URL is
// pgx's: user, password, host, port, database and its parameters
// (sslmode, connect_timeout, ...), as libpq reads them; the environment
// variables PGHOST, PGUSER, PGPASSWORD and the rest fill what it leaves
// out. Many replicas may write one database: records are written exactly
// once by call ID, messages once by content, and the schema is migrated
// by one replica while the others wait.
//
// While the database cannot take records they go to a spill file,
// llmhistory-DBNAME.spill.jsonl in the working directory unless
// store.Options.SpillPath says otherwise.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/llmhistory/llmhistory/store"
)

func init() {
	b := store.Backend{
		Dialect:   store.PostgreSQL,
		Open:      open,
		Fault:     fault,
		SpillPath: spillPath,
		Redact:    redact,
	}
	store.Register("postgres", b)
}

// maxConns bounds the connections a store holds: one writes, the others
// read.
const maxConns = 8

func open(ctx context.Context, u string, o store.OpenOptions) (w, r *sql.DB, err error) {
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		return nil, nil, errors.New(redactErr(err.Error(), u))
	}
	if o.ReadOnly {
		if cfg.RuntimeParams == nil {
			cfg.RuntimeParams = map[string]string{}
		}
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, db, nil
}

// fault says what a PostgreSQL error means for a write.
func fault(err error) store.Fault {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03":
			return store.FaultDown // connection exceptions; the server shutting down or starting
		case strings.HasPrefix(pe.Code, "53"):
			return store.FaultFull // disk full, out of memory, too many connections
		case pe.Code == "25006":
			return store.FaultReadOnly // a read-only transaction (a standby, default_transaction_read_only)
		case pe.Code == "55P03", pe.Code == "40P01", pe.Code == "40001":
			return store.FaultLocked
		}
		return ""
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "conn closed") {
		return store.FaultDown
	}
	return ""
}

// spillPath is llmhistory-DBNAME.spill.jsonl in the working directory.
func spillPath(u string) string {
	name := "postgres"
	if cfg, err := pgx.ParseConfig(u); err == nil && cfg.Database != "" {
		name = cfg.Database
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, name)
	return "llmhistory-" + name + ".spill.jsonl"
}

// redact shows a URL without its password.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	q := p.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		p.RawQuery = q.Encode()
	}
	return p.Redacted()
}

// redactErr keeps a password out of an error about u.
func redactErr(msg, u string) string {
	if p, err := url.Parse(u); err == nil {
		if pw, ok := p.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
		if pw := p.Query().Get("password"); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}
