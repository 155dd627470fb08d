// Package view serves a local web viewer for llmhistory records: the
// conversations, each as a transcript and as a timeline of its calls, each
// call whole, and an overview of calls, errors, tokens, spend and latency,
// kept up to date as records arrive. It is what llmhistory view runs, and
// a program can mount it on its own server:
//
//	src, err := view.OpenJSONL([]string{"history.jsonl"}, view.JSONLOptions{})
//	if err != nil { ... }
//	defer src.Close()
//	http.Handle("/history/", http.StripPrefix("/history", view.NewHandler(src, view.Options{Prefix: "/history/"})))
//
// It is net/http and html/template with its stylesheet, its one small
// script and its templates embedded: no build step, no CDN, no request to
// any other site. It only reads.
//
// # Sources
//
// A [Source] is where the viewer reads history: it lists conversations
// with filters and a text search, newest first, a page at a time; returns
// a conversation's calls and a call by its call_id; aggregates calls over
// time and by model, user, tag and provider; and tells subscribers when
// records arrive. A conversation is a trace: the records that share a
// trace_id, given by the caller or found by the recorder
// (trace_inferred); a record without one is a conversation of its own.
//
// [JSONL] is the Source over JSON Lines files. [OpenJSONL] indexes the
// files in the background as it streams them, on every core, and keeps
// about 180 bytes per record whatever the size of its Args: where its
// line is, its time, model, user, tags, tokens, cost, duration and
// outcome, and a summary per conversation. A page reads the lines it
// shows from the files, putting together the Args of records written with
// args_prefix from the earlier lines of their trace. Pages are served
// while it indexes. It follows the files as they grow, waits for a line
// being written, reads a file truncated in place again from its start,
// and keeps the records of a file replaced under its name (rotation)
// while it reads the new one. A text search reads the files (the index
// holds no text), and keeps what it found for the next page.
// [FromRecords] is the Source over records a program holds.
//
// [FromStore] is the Source over a store (package store, SQLite or
// PostgreSQL): each page asks the store for what it shows. See [Store] for
// where it differs from files.
//
// # Pages
//
//   - / lists conversations: the first user message, user, tags, turns,
//     calls, models, spend, errors and last activity, with filters (user,
//     tag, model, provider, outcome, time) and a text search.
//   - /c/{id} is a conversation as a transcript: system, user, assistant
//     and tool turns, each message once; each tool call with its result;
//     thinking folded; media the recorder elided marked; between the
//     messages, each call with its model, tokens, cost, latency, time to
//     first chunk, attempts and error, where it happened. The answer of a
//     call is the assistant turn the next call sends back, or the answer
//     the record kept (its Output, a message, as every message shown is:
//     record.Message, whatever the provider).
//   - /c/{id}/tree is its calls as a tree (parent_call_id), each drawn on
//     one time axis.
//   - /call/{call_id} is one call: kwargs, usage, cost, timings, attempts,
//     hops, outcome and error, the history query patterns detected, the
//     program source, the messages it sent, fields a newer writer added,
//     and the raw record, with a copy button.
//   - /overview: calls and errors, tokens and spend over time; latency
//     p50 and p95 by model; spend by model, user and tag; the share of
//     the tokens that no price covers.
//
// With [Options].Scores (a store, or the scores files beside JSONL
// histories: [OpenScoresFile]), the call and conversation pages list
// their scores, the list has a column of them, and the overview gives
// each score by day and by model. With [Options].Annotate, a reviewer adds
// scores from those pages (thumbs, a number, a category, a comment), and
// /queue?score=NAME, with the list's filters, opens the newest
// conversation without a NAME score, then the next.
//
// Live pages follow /events, a stream of Server-Sent Events, and fetch
// their content again when records arrive.
//
// # Security
//
// Every text of a record is escaped by html/template's contextual
// escaping: a model's answer holding <script> or <img onerror> shows as
// that text. Every response carries a Content-Security-Policy that allows
// script and style from the viewer's own files only (no inline script,
// no inline style, no eval) and no other site, and headers that keep it
// out of frames and referrers. Only GET and HEAD are answered, unless
// annotation is on: then POST /annotate too, and only when it comes from
// the viewer's own page (Sec-Fetch-Site or Origin), from a browser that
// holds the launch's [Token] (given once in the address, kept in an
// HttpOnly, SameSite=Strict cookie), with the form token the pages carry:
// a cross-site request forgery fails all three.
// [Options].AllowedHosts restricts the Host header, so that a page bound
// to loopback is out of reach of DNS rebinding; llmhistory view sets it
// to loopback's names and listens on 127.0.0.1 by default. [Options].Token
// asks every request for a [Token] (the same one annotation uses): pages,
// assets and the event stream answer 401 without it; llmhistory view
// gives one when told to listen elsewhere.
//
// # Big histories
//
// Measured on a 2-core machine, on a generated history of 1,000,000
// records in 10-call conversations (2.0 GB, every record's Args whole):
// the first page is served at once, while indexing; with every record
// indexed after 5.4 s (9.2 s of CPU; 3.5 s for the same history written
// with args_prefix, 1.0 GB); a conversation opens in 0.6 ms; the index
// holds 177 bytes a record. See bench_test.go and docs/viewer.md:
//
//	go test ./view -run '^$' -bench 'FirstPage/records=1000000/' -benchtime 1x -count 3
//	go test ./view -run '^$' -bench 'OpenConversation/records=1000000/|Search'
//
// A first search of a word reads the files (1.9 s on the 2.0 GB file);
// its next pages, and the same search as the files grow, read only what
// is new.
package view
