// Command llmhistory shows and inspects the history llmhistory records.
//
//	llmhistory demo [flags]              run an agent conversation through the recorder (offline by default)
//	llmhistory report [flags] FILE|URL…  build the evidence report from JSONL history files or a store (- for stdin)
//	llmhistory tail [flags] FILE|URL     follow a JSONL history file, or a store, as records arrive
//	llmhistory view [flags] FILE…|URL    serve a web viewer of history files or a store, following them
//	llmhistory export [flags] FILE|URL…  send history files or a store to an OpenTelemetry Collector over OTLP
//	llmhistory import FILE… --into URL   load JSONL history files into a store (SQLite or PostgreSQL)
//	llmhistory query [flags] URL         ask a store for records, conversations or figures
//	llmhistory eval [flags] URL|FILE     score calls with code checks and LLM judges, once per evaluator version
//	llmhistory dataset build|show|export keep calls or conversations as a dataset file, export it for fine-tuning
//	llmhistory scan [flags] FILE…        find history queries in generated code (- for stdin)
//	llmhistory delete [flags] URL|FILE…  erase a user's records, a conversation, a call or old records
//	llmhistory help [command]            what a command does and its flags
//
// A store URL is sqlite:FILE or postgres://USER@HOST/DB (see package
// github.com/llmhistory/llmhistory/store).
//
// Every subcommand takes -h for what it does and its flags; flags may
// follow the file names, and their values are checked (-top -3 is a usage
// error, not a default). Exit codes: 0 success, 1 a failure (an unreadable
// file, an input that is not a history, a failed call), 2 a usage error.
// Errors are one line on standard error that names the file you gave,
// never a temporary one, and never a stack trace.
//
// Run it from a clone with go run ./cmd/llmhistory, or install it with
// go install ./cmd/llmhistory. docs/command.md in the repository shows
// each subcommand at work, with sample output.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"sort"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

// stdio is where a subcommand reads and writes, so tests can capture it.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string, io stdio) int
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, io stdio) int) {
	commands[name] = command{summary: summary, run: run}
}

func run(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 {
		usage(io.err)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(io.out)
		return exitOK
	case "help":
		// "help report" is "report -h"; "help" alone, the command list.
		switch len(args) {
		case 1:
			usage(io.out)
			return exitOK
		case 2:
			if _, ok := commands[args[1]]; ok {
				return commands[args[1]].run(context.Background(), []string{"-h"}, io)
			}
			fmt.Fprintf(io.err, "llmhistory help: unknown command %q\n\n", args[1])
			usage(io.err)
			return exitUsage
		}
		fmt.Fprintln(io.err, "usage: llmhistory help [command]")
		return exitUsage
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(io.err, "llmhistory: unknown command %q\n\n", args[0])
		usage(io.err)
		return exitUsage
	}
	return cmd.run(ctx, args[1:], io)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: llmhistory <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'llmhistory help <command>' (or 'llmhistory <command> -h') for a command's flags.")
}

// newFlags returns a flag set that reports errors instead of exiting, and
// prints usage (the line given, then the flags) to io.err.
func newFlags(name, usageLine, about string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: llmhistory %s %s\n\n%s\n", name, usageLine, about)
		var n int
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(fs.Output(), "\nflags:")
			printFlags(fs.Output(), fs)
		}
	}
	return fs
}

// helpWidth is the width help is wrapped to, so that it reads in an
// 80-column terminal.
const helpWidth = 78

// printFlags is flag.PrintDefaults with each flag's description wrapped
// to helpWidth: a flag's name and the name of its value on one line, the
// description and the default below it, indented.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		valueName, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if valueName != "" {
			line += " " + valueName
		}
		fmt.Fprintln(w, line)
		if !isZeroValue(f) {
			if reflect.TypeOf(f.Value).String() == "*flag.stringValue" { // quoted, as flag.PrintDefaults does
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += fmt.Sprintf(" (default %v)", f.DefValue)
			}
		}
		for _, l := range wrap(usage, helpWidth-8) {
			fmt.Fprintln(w, "        "+l)
		}
	})
}

// isZeroValue reports whether f's default is its type's zero value, which
// flag.PrintDefaults leaves unsaid.
func isZeroValue(f *flag.Flag) (zero bool) {
	typ := reflect.TypeOf(f.Value)
	var z reflect.Value
	if typ.Kind() == reflect.Pointer {
		z = reflect.New(typ.Elem())
	} else {
		z = reflect.Zero(typ)
	}
	v, ok := z.Interface().(flag.Value)
	if !ok {
		return false
	}
	defer func() {
		if recover() != nil {
			zero = false // a String method that cannot take a zero value
		}
	}()
	return f.DefValue == v.String()
}

// wrap breaks text into lines of at most width bytes at spaces; a word
// longer than width (a URL) gets a line of its own.
func wrap(text string, width int) []string {
	var lines []string
	var line strings.Builder
	for _, word := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(word) > width {
			lines = append(lines, line.String())
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// parseFlags parses args; it returns the exit code to stop with, or -1 to
// go on. Flags may come before, between or after the other arguments, as
// people type them (report x.jsonl -format html); "--" ends the flags.
// fs.Args() is then the other arguments, in order. -h prints usage to
// stdout and succeeds; a bad flag prints one line saying what is wrong
// and where the flags are, on stderr.
func parseFlags(fs *flag.FlagSet, args []string, io stdio) int {
	// The flag package prints usage before returning ErrHelp; hold what
	// it prints until we know which stream it belongs on.
	var held bytes.Buffer
	fs.SetOutput(&held)
	var rest, after []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, after = args[:i], args[i+1:]
	}
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fs.SetOutput(io.out)
			fs.Usage()
			return exitOK
		case err != nil:
			complaint, _, _ := strings.Cut(held.String(), "\n")
			fmt.Fprintf(io.err, "llmhistory %s: %s (llmhistory %s -h lists the flags)\n", fs.Name(), complaint, fs.Name())
			fs.SetOutput(io.err)
			return exitUsage
		}
		if args = fs.Args(); len(args) == 0 {
			break
		}
		rest, args = append(rest, args[0]), args[1:]
	}
	rest = append(rest, after...)
	// Leave fs.Args() as the arguments, flags taken out.
	_ = fs.Parse(append([]string{"--"}, rest...))
	fs.SetOutput(io.err)
	return -1
}
