// Package store keeps history records in a database you can query: an
// embedded SQLite file that needs nothing, or PostgreSQL for a fleet. It
// holds the SQL of both, the query model, the schema and its migrations,
// and retention, and links no database driver: a backend registers itself
// when its package is imported, as database/sql drivers do, so a program
// links only what it opens.
//
//	import (
//		"github.com/llmhistory/llmhistory/store"
//		_ "github.com/llmhistory/llmhistory/store/sqlite"   // sqlite:FILE
//		_ "github.com/llmhistory/llmhistory/store/postgres" // postgres://...
//	)
//
//	s, err := store.Open(ctx, "sqlite:history.db")
//	rec := middleware.NewRecorder(middleware.WithSink(s))
//
// # Writing
//
// A [*Store] is a [record.Sink] and a [record.BatchSink]. Given to a
// recorder ([middleware.WithSink]), it gets records from the sink's own
// queue and goroutine, the records that queued up behind each other in one
// call, which it writes in one transaction: a call never waits on the
// database, and the database's cost per record falls as the load rises.
//
// Records are written exactly once by call ID. A record whose call ID the
// store holds already is skipped and counted ([Stats].Duplicates),
// whoever wrote it: a batch retried after a lost answer, a spill file
// imported twice, another process or replica writing the same record at
// the same moment. Several processes may write one SQLite file (it is in
// WAL mode; a writer waits for another's lock up to the busy timeout), and
// many replicas one PostgreSQL database.
//
// # Faults
//
// A database that is down, locked past the busy timeout, full or
// read-only never blocks a call and never loses a record in silence
// ([Store.AppendBatch]): the batch goes to a JSONL spill file beside the
// store (FILE.spill.jsonl for SQLite), a [*SpillError] says so, which a
// recorder counts among its sink's failures ([middleware.Stats]), and the
// fault is logged once per kind ([Fault]). For a while after a fault (a
// second, doubling up to thirty) batches go straight to the spill file,
// so that a database that is down costs nothing; then it is tried again.
// [Store.Import], and the command `llmhistory import SPILL --into URL`,
// bring the spilled records back, skipping any the database got after
// all.
//
// # Storage grows linearly with a conversation
//
// A chat API is stateless: every call sends the whole conversation
// again, so the args of a conversation's records repeat each other, and a
// history that kept each whole would grow with the square of the
// conversation. A store keeps each message (an element of args) once,
// addressed by its content (a SHA-256 prefix, under the hour it first
// appears in), and a record's args as references: the first N messages of
// the previous record of its trace, then its own. Chains of references
// are at most 16 records deep (a record then lists its messages whole),
// so reading one record costs a few lookups. Every reader gets args
// whole. A 1,000-turn conversation takes 1.7 times its unique text on
// disk in SQLite, 2.7 times in PostgreSQL (docs/store.md has the
// figures); kept whole, its records would take 500 times.
//
// A record is kept as its JSON without args (compressed, with a preset
// dictionary), beside the columns queries use, so a field added to
// [record.Record] later is stored and read back without a change to the
// schema.
//
// # Reading
//
// [Store.Get] returns a record by call ID; [Store.Trace] a trace's
// records, oldest first. [Store.Query] returns a page of the records a
// [Filter] selects, newest first, and a cursor for the next: by time,
// user, tags, metadata, trace, model, provider, method, outcome, error
// type, minimum cost or duration, and text (full-text search: FTS5 on
// SQLite, tsvector on PostgreSQL, over the text each record brought into
// its conversation and its output). [Store.Records] iterates over all the
// records a filter selects, a page at a time. [Store.Traces] lists
// conversations, newest first, with their figures. [Store.Aggregate]
// groups calls, errors, tokens, spend and latency p50/p95 by hour or day,
// user, tag, model, provider, method, error type or trace.
// [Store.Follow] hands out records as they arrive, from any writer.
// [Store.Aggregates] answers several groupings in one pass, and
// [Store.Facets] lists the users, tags and models a filter offers.
//
// Aggregates read rollups, on both backends: the figures of the records
// per hour, day and month, by tagset, model, provider, method, status and
// error type, and by user, kept up to date as records are written. An
// aggregate so costs by the hours it covers, not by its records; one
// whose filter no rollup knows (metadata, text, a trace, a minimum cost
// or duration, a score) reads the records. The users, tags and models a
// filter offers are kept as names as records are written, not found by
// reading them.
//
// # Scores
//
// A [Score] judges a call or a conversation: a user's thumbs, a code
// check, a model's verdict, a reviewer's label. [Store.AddScore] keeps one
// per target, name and author (adding it again replaces it);
// [Store.Scores] reads them; [Filter].Scores selects records and
// conversations by score ([ParseScoreFilter]: "helpfulness<0.5",
// "!topic"); [Store.AggregateScores] groups a score by model, tag, user,
// day or any other dimension. Beside a JSONL history, scores are kept in
// a scores file ([ScoresPath], [ScoreJSONL], [ReadScores]), which
// [Store.ImportScores] brings into a store. Package eval makes them.
//
// # Erasure
//
// [Store.Delete] erases the records a [Filter] selects (a user, a trace,
// a call, a time range) in one transaction, with all that holds
// something of them: their text entries, tags and metadata, scores, the
// messages and filter values no remaining record has (a message another
// record uses stays), and their share of the rollups, rebuilt from the
// records that stay. It then makes the deleted bytes unreadable in the
// database's files (SQLite: secure_delete, in the full-text index too,
// the WAL truncated; PostgreSQL: VACUUM FULL of the tables it touched)
// and returns a [Receipt]: what went, by kind, and the queries that
// found nothing of it afterwards. docs/privacy.md says what stays where.
//
// # Retention
//
// [Options].MaxAge and MaxBytes bound what a store keeps, and
// RetentionRules give a tag's or a user's records a shorter life
// ([RetentionRule]): they are applied when it opens and every
// RetentionInterval, and by [Store.Prune] on demand, through Delete's
// machinery, a chunk of records at a time. A store opened with a
// retention keeps it, for readers to say ([Store.Retention]) and writers
// opened without one to apply. MaxBytes is for SQLite only (PostgreSQL
// keeps the space of deleted rows for reuse instead of giving it back,
// so its size says nothing of what deleting frees).
//
// # Schema
//
// The schema is versioned ([SchemaVersion]) and migrated up from every
// released version when a store is opened for writing, once, whichever of
// several processes or replicas gets there first. A store written by a
// newer llmhistory is refused with a [*SchemaError] naming both versions.
// Migrations are append-only (testdata/migrations.golden pins each by
// hash): 1, the records; 2, scores; 3, names and rollups.
//
// The tables (docs/store.md describes each column, and what deleting a
// record touches in each):
//
//   - records: a record's columns that queries filter, group and order
//     on, its seq (the store's number for it), call ID and tagset;
//   - record_docs: its JSON without args, compressed, and its args as
//     references to messages (base_seq: the record of its trace it
//     builds on);
//   - messages: each message once, by content, with when it was last
//     used (retention collects those no kept record uses);
//   - record_attrs: its tags and metadata, keyed by value (no index by
//     record);
//   - record_text: the full-text index (FTS5, or a tsvector and GIN);
//   - names: users, tags, models, providers, methods, statuses, error
//     types and tagsets, each once, with a small ID;
//   - rollups: the figures per hour, day and month, in two cubes
//     (rollup.go); the hours a deletion touches are made again from the
//     records (rebuildHours, delete.go), with their days and months;
//   - scores: scores of calls and conversations;
//   - llmhistory_meta: the schema version, SQLite's next seq, and the
//     first hour not yet sealed into its day and month.
//
// # Backends
//
// A [Backend] opens connections and says what its errors mean; the store
// speaks its [Dialect]. store/sqlite uses modernc.org/sqlite (pure Go, no
// cgo, FTS5 built in), store/postgres github.com/jackc/pgx/v5. The
// package store/storetest is the conformance suite both pass, for a
// backend of one's own.
package store
