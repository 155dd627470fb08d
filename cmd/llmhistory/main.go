// Command llmhistory shows and inspects the history llmhistory records.
//
//	llmhistory demo [flags]          run an agent conversation through the recorder (offline by default)
//	llmhistory report [flags] FILE…  build the evidence report from JSONL history files (- for stdin)
//	llmhistory tail [flags] FILE     follow a JSONL history file as it grows
//	llmhistory view [flags] FILE…    serve a web viewer of JSONL history files, following them
//	llmhistory export [flags] FILE…  send JSONL history files to an OpenTelemetry Collector over OTLP (- for stdin)
//	llmhistory scan [flags] FILE…    find history queries in generated code (- for stdin)
//	llmhistory help [command]        what a command does and its flags
//
// Every subcommand takes -h for its flags. Exit codes: 0 success, 1 a
// failure (an unreadable file, a failed call), 2 a usage error.
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
	"sort"
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
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args; it returns the exit code to stop with, or -1 to
// go on. -h prints usage to stdout and succeeds; a bad flag prints the
// complaint and usage to stderr.
func parseFlags(fs *flag.FlagSet, args []string, io stdio) int {
	// The flag package prints usage before returning ErrHelp; hold what
	// it prints until we know which stream it belongs on.
	var held bytes.Buffer
	fs.SetOutput(&held)
	err := fs.Parse(args)
	switch {
	case err == nil:
		fs.SetOutput(io.err)
		return -1
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(io.out)
		fs.Usage()
		return exitOK
	}
	io.err.Write(held.Bytes())
	fs.SetOutput(io.err)
	return exitUsage
}
