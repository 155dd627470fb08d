package store_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// BenchmarkIngest writes b.N records of a team's workload into a new
// store of each backend (-benchtime 20000x for a quick look; 1000000x
// for the sustained figures of docs/store.md), four ways:
//
//   - path=store: as a recorder's sink queue hands them over under load,
//     in batches of record.DefaultMaxBatch (Store.AppendBatch);
//   - path=raw: the baseline. The same rows into the same schema through
//     the same driver, with nothing of the store around them, the
//     fastest way the driver allows: pgx's COPY on PostgreSQL,
//     multi-row INSERTs on SQLite, a transaction per batch as the store
//     commits. The rows are those the store inserted writing the same
//     batch into a scratch store, captured as it did (not timed);
//   - path=rawimport: the baseline in transactions of 4,096 records, as
//     Import commits (path=raw's are the sink's 512), the baseline of
//     path=import;
//   - path=import: llmhistory import's way, Store.Import of a JSONL file
//     the JSONL sink wrote (with args_prefix);
//   - path=recorder: real calls to a chat server through a recorder whose
//     sink is the store, five to fifty turns per conversation, 64 going
//     on at once, the recorder's queue flushed every 2,000 calls so that
//     none is dropped.
//
// Each reports records/s (wall clock of the writes alone, records made
// outside it), CPU µs a record (this process's; PostgreSQL's server
// works beside it), and the most heap the run held (MB).
func BenchmarkIngest(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		// newURLs returns the URLs of n new stores.
		newURLs := func(b *testing.B, n int) []string {
			var urls []string
			var srv *pgtest.Server
			if backend == "postgres" {
				srv = pgtest.Start(b, pgtest.Options{Durable: true})
			}
			for i := range n {
				if srv != nil {
					urls = append(urls, srv.NewDatabase(b))
				} else {
					urls = append(urls, "sqlite:"+filepath.Join(b.TempDir(), fmt.Sprint(i, ".db")))
				}
			}
			return urls
		}
		b.Run("backend="+backend+"/path=store", func(b *testing.B) { ingestStore(b, newURLs(b, 1)[0]) })
		b.Run("backend="+backend+"/path=raw", func(b *testing.B) {
			urls := newURLs(b, 2)
			ingestRaw(b, backend, urls[0], urls[1], record.DefaultMaxBatch)
		})
		b.Run("backend="+backend+"/path=rawimport", func(b *testing.B) {
			urls := newURLs(b, 2)
			ingestRaw(b, backend, urls[0], urls[1], store.ImportBatch)
		})
		b.Run("backend="+backend+"/path=import", func(b *testing.B) { ingestImport(b, newURLs(b, 1)[0]) })
		b.Run("backend="+backend+"/path=recorder", func(b *testing.B) { ingestRecorder(b, newURLs(b, 1)[0]) })
	}
}

// meter times the writes of a run, its CPU and its heap: the most heap
// in use while it ran, sampled every 20 ms (not only at its ends: an
// import is one call).
type meter struct {
	wall, cpu time.Duration
	heap      uint64
	t0        time.Time
	c0        time.Duration
	done      chan struct{}
	sampled   chan uint64
}

func (m *meter) start() {
	m.done, m.sampled = make(chan struct{}), make(chan uint64)
	go func() {
		most := heapInUse()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				most = max(most, heapInUse())
			case <-m.done:
				m.sampled <- max(most, heapInUse())
				return
			}
		}
	}()
	m.t0, m.c0 = time.Now(), storebench.CPUTime()
}

func (m *meter) stop() {
	m.wall += time.Since(m.t0)
	m.cpu += storebench.CPUTime() - m.c0
	close(m.done)
	m.heap = max(m.heap, <-m.sampled)
}

// heapInUse is the heap's spans in use (runtime.MemStats.HeapInuse),
// read without stopping the world.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

func (m *meter) report(b *testing.B, n int) {
	b.ReportMetric(float64(n)/m.wall.Seconds(), "records/s")
	b.ReportMetric(float64(m.cpu.Microseconds())/float64(n), "cpu-µs/record")
	b.ReportMetric(float64(m.heap)/1e6, "heap-MB")
	b.ReportMetric(0, "ns/op")
}

func workload() *storebench.Workload {
	return storebench.NewWorkload(1, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), storebench.MonthStep)
}

func ingestStore(b *testing.B, url string) {
	ctx := context.Background()
	s, err := store.OpenWith(ctx, url, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w := workload()
	var m meter
	b.ResetTimer()
	for i := 0; i < b.N; i += record.DefaultMaxBatch {
		batch := w.Batch(min(record.DefaultMaxBatch, b.N-i))
		m.start()
		if err := s.AppendBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
		m.stop()
	}
	m.report(b, b.N)
	if st := s.Stats(); st.Written != uint64(b.N) {
		b.Fatalf("%d records written, not %d", st.Written, b.N)
	}
}

// ingestRaw writes each batch of size records into a scratch store (in
// one transaction), capturing the rows it inserts, then times inserting
// those rows into a new store's schema at url directly through the
// driver, in a transaction per batch.
func ingestRaw(b *testing.B, backend, url, scratchURL string, size int) {
	ctx := context.Background()
	// The schema, made by the store; then the store steps aside.
	made, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	made.Close()
	scratch, err := store.Open(ctx, scratchURL)
	if err != nil {
		b.Fatal(err)
	}
	defer scratch.Close()
	var ins rawInserter
	if backend == "sqlite" {
		ins, err = newSQLiteRaw(url)
	} else {
		ins, err = newPostgresRaw(ctx, url)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer ins.close()
	w := workload()
	var m meter
	seen := map[string]bool{}
	var captured []capturedRows
	undo := store.CaptureRows(func(head string, rows [][]any) {
		captured = append(captured, capturedRows{head: head, rows: slices.Clone(rows)}) // the store reuses rows
	})
	defer undo()
	b.ResetTimer()
	for i := 0; i < b.N; i += size {
		batch := w.Batch(min(size, b.N-i))
		captured = captured[:0]
		if _, err := scratch.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
		// The messages the store held already it offered and skipped:
		// the baseline inserts those it took.
		for i, c := range captured {
			if table, _ := c.table(); table == "messages" {
				captured[i].rows = slices.DeleteFunc(c.rows, func(row []any) bool {
					h := string(row[0].([]byte))
					if seen[h] {
						return true
					}
					seen[h] = true
					return false
				})
			}
		}
		m.start()
		if err := ins.insert(ctx, captured); err != nil {
			b.Fatal(err)
		}
		m.stop()
	}
	m.report(b, b.N)
}

type capturedRows struct {
	head string
	rows [][]any
}

// table and columns of an INSERT's head.
func (c capturedRows) table() (string, []string) {
	rest := strings.TrimPrefix(c.head, "INSERT INTO ")
	name, cols, _ := strings.Cut(rest, " (")
	cols, _, _ = strings.Cut(cols, ") VALUES")
	var out []string
	for c := range strings.SplitSeq(cols, ",") {
		out = append(out, strings.TrimSpace(c))
	}
	return name, out
}

type rawInserter interface {
	insert(ctx context.Context, batch []capturedRows) error
	close()
}

// sqliteRaw inserts with multi-row INSERTs (as many rows as SQLite's
// parameters allow), in a transaction per batch, through modernc's
// driver with the store's own settings (WAL, synchronous=NORMAL).
type sqliteRaw struct{ db *sql.DB }

func newSQLiteRaw(url string) (*sqliteRaw, error) {
	db, err := sql.Open("sqlite", sqlitedsn.DSN(sqlitedsn.Path(url), 5000, false))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &sqliteRaw{db: db}, nil
}

func (r *sqliteRaw) close() { r.db.Close() }

func (r *sqliteRaw) insert(ctx context.Context, batch []capturedRows) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, c := range batch {
		table, cols := c.table()
		tail := ""
		if table == "rollups" {
			tail = upsertTail(cols)
		}
		per := max(1, 30000/len(cols))
		for rows := c.rows; len(rows) > 0; {
			part := rows[:min(per, len(rows))]
			rows = rows[len(part):]
			var q strings.Builder
			q.WriteString(c.head)
			args := make([]any, 0, len(part)*len(cols))
			one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
			for i, row := range part {
				if i > 0 {
					q.WriteByte(',')
				}
				q.WriteString(one)
				args = append(args, row...)
			}
			q.WriteString(tail)
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
	}
	return tx.Commit()
}

func upsertTail(cols []string) string {
	var set []string
	for _, c := range cols[10:] {
		set = append(set, c+" = excluded."+c)
	}
	return " ON CONFLICT (" + strings.Join(cols[:10], ", ") + ") DO UPDATE SET " + strings.Join(set, ", ")
}

// postgresRaw copies the rows in with pgx's CopyFrom, on a connection of
// its own, in a transaction per batch; record_text's tsvector is made by
// the server from the text (INSERT ... SELECT from arrays), and rollups
// are upserted the same way.
type postgresRaw struct{ conn *pgx.Conn }

func newPostgresRaw(ctx context.Context, url string) (*postgresRaw, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	return &postgresRaw{conn: conn}, nil
}

func (r *postgresRaw) close() { r.conn.Close(context.Background()) }

func (r *postgresRaw) insert(ctx context.Context, batch []capturedRows) error {
	tx, err := r.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, c := range batch {
		table, cols := c.table()
		switch table {
		case "record_text":
			if os.Getenv("SKIPTEXT") != "" {
				continue
			}
			seqs := make([]int64, len(c.rows))
			texts := make([]string, len(c.rows))
			for i, row := range c.rows {
				seqs[i], texts[i] = row[0].(int64), row[1].(string)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO record_text (seq, tsv) SELECT s, strip(to_tsvector('simple', t)) FROM unnest($1::bigint[], $2::text[]) AS x(s, t)`, seqs, texts); err != nil {
				return err
			}
		case "rollups":
			var q strings.Builder
			q.WriteString(c.head)
			var args []any
			for i, row := range c.rows {
				if i > 0 {
					q.WriteByte(',')
				}
				q.WriteByte('(')
				for j := range row {
					if j > 0 {
						q.WriteByte(',')
					}
					fmt.Fprintf(&q, "$%d", len(args)+j+1)
				}
				q.WriteByte(')')
				args = append(args, row...)
			}
			q.WriteString(upsertTail(cols))
			if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
				return err
			}
		default:
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(c.rows)); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
	}
	return tx.Commit(ctx)
}

// ingestImport times Store.Import of a JSONL file of b.N records, written
// (not timed) as the JSONL sink writes it with args_prefix.
func ingestImport(b *testing.B, url string) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "history.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	sink := record.NewJSONLWith(f, record.JSONLOptions{ArgsPrefix: true})
	mem := record.NewMemory(4096)
	w := workload()
	for range b.N {
		if err := sink.Append(ctx, mem.Add(w.Next())); err != nil {
			b.Fatal(err)
		}
	}
	if err := sink.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	s, err := store.OpenWith(ctx, url, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	in, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	var m meter
	b.ResetTimer()
	m.start()
	res, err := s.Import(ctx, bufio.NewReaderSize(in, 1<<20), nil)
	m.stop()
	if err != nil {
		b.Fatal(err)
	}
	if res.Written != b.N {
		b.Fatalf("%d written of %d", res.Written, b.N)
	}
	m.report(b, b.N)
}

// ingestRecorder makes b.N calls to a chat server through a recorder
// whose sink is the store.
func ingestRecorder(b *testing.B, url string) {
	ctx := context.Background()
	s, err := store.OpenWith(ctx, url, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	srv := storebench.NewChatServer(b)
	rec := middleware.NewRecorder(middleware.WithSink(s), middleware.WithLogger(slog.New(slog.DiscardHandler)))
	client := rec.Client(nil)
	type conv struct {
		id   string
		msgs []map[string]any
		left int
	}
	w := workload() // for its random numbers and text
	rng := w.Rand()
	var open []*conv
	var m meter
	b.ResetTimer()
	m.start()
	for i := range b.N {
		for len(open) < 64 {
			open = append(open, &conv{id: fmt.Sprintf("c%d-%d", i, len(open)), left: 5 + rng.IntN(46),
				msgs: []map[string]any{{"role": "system", "content": "You are the support assistant of an online shop."}}})
		}
		k := rng.IntN(len(open))
		c := open[k]
		c.msgs = append(c.msgs, map[string]any{"role": "user", "content": storebench.Text(rng, 100+rng.IntN(200))})
		body, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": c.msgs})
		req, _ := http.NewRequestWithContext(middleware.WithTrace(ctx, c.id), http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Choices []struct {
				Message map[string]any `json:"message"`
			} `json:"choices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || len(out.Choices) == 0 {
			b.Fatalf("chat: %v", err)
		}
		c.msgs = append(c.msgs, out.Choices[0].Message)
		if c.left--; c.left == 0 {
			open[k] = open[len(open)-1]
			open = open[:len(open)-1]
		}
		if i%2000 == 1999 {
			if err := rec.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	m.stop()
	st := rec.Stats()
	if st.Dropped+st.SinkErrors > 0 || st.Sinks[0].Written != uint64(b.N) {
		b.Fatalf("recorder: %+v", st)
	}
	m.report(b, b.N)
}
