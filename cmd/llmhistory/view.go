package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/view"
)

func init() {
	register("view", "serve a web viewer of JSONL history files or a store", runView)
}

const viewAbout = `View serves a web viewer of the history in each FILE (JSON Lines, as the
JSONL sink writes them), or in a store (sqlite:FILE, postgres://...,
opened read-only): the conversations, newest first, with filters
and a text search; each conversation as a transcript and as a timeline of
its calls; each call with its kwargs, usage, cost, timings, error and raw
record; and an overview of calls, errors, tokens, spend and latency. It
indexes the files as it reads them, pages are served meanwhile, and new
records appear as the files grow, or the store receives them, without a
reload. A file truncated or
replaced (log rotation) is read again from its start.

The first line it prints is the address to open. It listens on
127.0.0.1, on a free port, unless -addr says otherwise. Pages answer only
to the names of a loopback address (127.0.0.1, localhost, ::1), so that
no web site can read them through DNS rebinding. On any other address
every page and the live updates ask for a token: one made at launch and
printed in the address (?token=...), or the one given with -token or in
LLMHISTORY_VIEW_TOKEN (at least 16 characters; the variable keeps it out
of the process list). A browser brings it once; the viewer keeps it in a
cookie. Without it, a request gets 401. The token travels in the clear
over plain HTTP: off a trusted network, put the viewer behind a reverse
proxy that adds TLS (docs/viewer.md). A token given on loopback is asked
for too. It is read-only: it changes no file. Interrupt (Ctrl-C) to
stop.

Scores show on the pages: a store's, or those of the scores file beside
each FILE (h.scores.jsonl, as llmhistory eval writes it). With -annotate,
a reviewer adds scores from the pages (thumbs, a number, a category, a
comment, on a conversation or a call) into the store (then opened for
writing) or the first FILE's scores file; /queue?score=NAME opens, one
after another, the conversations that have no NAME score yet. The address
printed then carries a token made for this launch (unless one is given,
as above): only a browser that opened it can annotate, and only from the
viewer's own pages. Off loopback that one token guards reading and
annotating alike.

With -dataset FILE (which turns -annotate on), a call's and a
conversation's pages have an "Add to dataset" button that keeps the call,
or the conversation, as an item of the dataset FILE (llmhistory dataset:
made when there is none, an item already there not added twice).

Lines that are not records are counted and skipped; the pages list the
first few.`

// openBrowser opens url in the user's browser; a variable so that tests
// can see what would be opened.
var openBrowser = func(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it; its status says nothing useful
	return nil
}

// closer is io.Closer, named where a parameter called io hides the package.
type closer = io.Closer

func runView(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("view", "[flags] FILE... | STORE-URL", viewAbout, io)
	addr := fs.String("addr", "127.0.0.1:0", "listen on `HOST:PORT` (port 0: a free one)")
	open := fs.Bool("open", false, "open the viewer in a browser")
	poll := fs.Duration("poll", 250*time.Millisecond, "how often the files or the store are looked at for new records")
	tokenFlag := fs.String("token", "", "ask every request for `TOKEN` (16 characters or more; default $"+envViewToken+", or one made at launch off loopback)")
	annotate := fs.Bool("annotate", false, "let a reviewer add scores from the pages (the address printed carries this launch's token)")
	author := fs.String("author", "", "the reviewer's `name` in the scores they add (default: the user's login name)")
	datasetPath := fs.String("dataset", "", "put an \"Add to dataset\" button on the pages, adding to the dataset `FILE` (turns -annotate on)")
	var experiments listFlag
	fs.Var(&experiments, "experiment", "show the comparison of these experiment results (llmhistory experiment run -o `FILE`) on an experiment page (may be given several times; the first is the baseline)")
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	if *datasetPath != "" {
		*annotate = true // adding to a dataset is a write, behind the same token
	}
	token := *tokenFlag
	if token == "" {
		token = os.Getenv(envViewToken)
	}
	if token != "" && len(token) < minViewToken {
		fmt.Fprintf(io.err, "llmhistory view: a token must have %d characters or more\n", minViewToken)
		return exitUsage
	}
	inputs := fs.Args()
	if len(inputs) == 0 {
		fmt.Fprintln(io.err, "llmhistory view: want one or more FILEs, or a store URL")
		fs.Usage()
		return exitUsage
	}
	if *poll <= 0 {
		fmt.Fprintf(io.err, "llmhistory view: -poll must be more than 0, not %v\n", *poll)
		return exitUsage
	}

	var (
		src    view.Source
		stop   closer
		files  *view.JSONL
		scores view.ScoreReader
		sink   interface {
			AddScore(context.Context, store.Score) error
		}
	)
	switch {
	case isStoreURL(inputs[0]):
		if len(inputs) > 1 {
			fmt.Fprintln(io.err, "llmhistory view: a store URL is read alone, without files")
			return exitUsage
		}
		var st *store.Store
		var err error
		if *annotate {
			openCtx, cancel := context.WithTimeout(ctx, openStoreTimeout)
			st, err = store.OpenWith(openCtx, inputs[0], store.Options{Logger: slog.New(slog.DiscardHandler)})
			cancel()
		} else {
			st, err = openStoreReader(ctx, inputs[0])
		}
		if err != nil {
			fmt.Fprintln(io.err, "llmhistory view:", err)
			return exitFailure
		}
		src, stop, scores, sink = view.FromStore(st, *poll), st, st, st
	default:
		for _, in := range inputs {
			if in == "-" {
				fmt.Fprintln(io.err, "llmhistory view: standard input cannot be viewed: it cannot be read again; save it to a file")
				return exitUsage
			}
		}
		j, err := view.OpenJSONL(inputs, view.JSONLOptions{Poll: *poll})
		if err != nil {
			fmt.Fprintln(io.err, "llmhistory", err)
			return exitFailure
		}
		src, stop, files = j, j, j
		paths := make([]string, len(inputs))
		for i, in := range inputs {
			paths[i] = store.ScoresPath(in)
		}
		sf := view.OpenScoresFile(paths, j)
		defer sf.Close()
		scores, sink = sf, sf
	}
	defer stop.Close()

	var cmp *eval.Comparison
	if len(experiments) > 0 {
		var results []*eval.ExperimentResult
		for _, p := range experiments {
			f, err := os.Open(p)
			if err != nil {
				fmt.Fprintln(io.err, "llmhistory view:", err)
				return exitFailure
			}
			res, err := eval.ReadExperimentResult(f)
			f.Close()
			if err != nil {
				fmt.Fprintf(io.err, "llmhistory view: %s: %v\n", p, err)
				return exitFailure
			}
			results = append(results, res)
		}
		var err error
		if cmp, err = eval.Compare(eval.CompareOptions{}, results...); err != nil {
			fmt.Fprintln(io.err, "llmhistory view:", err)
			return exitFailure
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory view:", err)
		return exitFailure
	}
	url, loopback, hosts := viewAddress(ln.Addr().(*net.TCPAddr))
	// One token guards what needs guarding: reading off loopback (or
	// whenever one is given), annotating always.
	tok := view.TokenOf(token)
	made := tok == nil && (!loopback || *annotate)
	if made {
		tok = view.NewToken()
		url += "?" + view.TokenParam + "=" + tok.String()
	}
	var reading *view.Token
	if !loopback || token != "" {
		reading = tok
	}
	var ann *view.Annotation
	if *annotate {
		ann = &view.Annotation{Sink: sink, Token: tok, Author: reviewerName(*author)}
		if path := *datasetPath; path != "" {
			ann.DatasetName = filepath.Base(path)
			ann.Dataset = func(_ context.Context, recs []record.Record, conversation bool) (int, error) {
				items, _ := eval.ItemsFromRecords(recs, eval.BuildOptions{Conversations: conversation})
				if len(items) == 0 {
					return 0, errors.New("nothing to keep: no call here has an answer")
				}
				return eval.AppendToDatasetFile(path, strings.TrimSuffix(ann.DatasetName, filepath.Ext(ann.DatasetName)), items...)
			}
		}
	}
	fmt.Fprintln(io.out, url)
	if !loopback {
		host, _, _ := net.SplitHostPort(*addr)
		listening := net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		where := "the one in the address above"
		if !made {
			where = "the one given (open the address with ?" + view.TokenParam + "=TOKEN)"
		}
		fmt.Fprintf(io.err, "llmhistory view: listening on %s, which is not loopback: every request must carry the token, %s; "+
			"over plain HTTP it travels in the clear: put a reverse proxy with TLS in front (docs/viewer.md)\n", listening, where)
	}

	vo := view.Options{
		AllowedHosts: hosts,
		Token:        reading,
		Scores:       scores,
		Annotate:     ann,
		Logger:       slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if cmp != nil {
		vo.Experiment, vo.ExperimentCSS = cmp, eval.CompareCSS
	}
	h := view.NewHandler(src, vo)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if files != nil {
		go reportIndexing(ctx, files, inputs, io.err)
	}
	if *open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(io.err, "llmhistory view: could not open a browser (%v); open %s\n", err, url)
		}
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintln(io.err, "llmhistory view:", err)
		return exitFailure
	}
	h.Close() // ends the live pages' event streams
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(shut)
	return exitOK
}

// envViewToken gives the viewer's token, out of the process list.
const envViewToken = "LLMHISTORY_VIEW_TOKEN"

// minViewToken is the shortest token the viewer takes.
const minViewToken = 16

// reviewerName is who annotates: the name given, else the login name.
func reviewerName(given string) string {
	if given != "" {
		return given
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "reviewer"
}

// viewAddress returns the URL to print for the address listened on,
// whether it is loopback, and the host names pages answer to: those of
// loopback when it is, any otherwise (the machine's names are not known).
func viewAddress(a *net.TCPAddr) (url string, loopback bool, hosts []string) {
	host := a.IP.String()
	switch {
	case a.IP.IsUnspecified():
		host = "127.0.0.1" // every interface: loopback among them
	case a.IP.To4() == nil:
		host = "[" + host + "]"
	}
	url = fmt.Sprintf("http://%s:%d/", host, a.Port)
	if a.IP.IsLoopback() {
		return url, true, []string{"127.0.0.1", "localhost", "::1", a.IP.String()}
	}
	return url, false, nil
}

// reportIndexing says on w how the first reading of the files went: every
// few seconds while it lasts, and once when it is done.
func reportIndexing(ctx context.Context, src *view.JSONL, inputs []string, w io.Writer) {
	start := time.Now()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	done := make(chan error, 1)
	go func() { done <- src.Wait(ctx) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				return
			}
			st := src.Status()
			msg := fmt.Sprintf("llmhistory view: read %s records from %s in %s", group(int64(st.Records)), strings.Join(inputs, ", "), roundDuration(time.Since(start)))
			if st.BadLines > 0 {
				msg += fmt.Sprintf("; %s lines are not records (listed on the pages)", group(int64(st.BadLines)))
			}
			fmt.Fprintln(w, msg+"; following them")
			return
		case <-tick.C:
			st := src.Status()
			fmt.Fprintf(w, "llmhistory view: reading: %.0f%%, %s records\n", 100*st.Progress, group(int64(st.Records)))
		}
	}
}

// roundDuration rounds d for people: to 10 µs below 10 ms, to the
// millisecond below a minute, to the second above.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < 10*time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d < time.Minute:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
